"""The command and the worker processes it starts run without transparent huge pages (see
seekbench/cli/_tune.py: the kernel's zeroing of 2 MiB pages); what they compute is the same (the
golden tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

STATUS = Path("/proc/self/status")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or "THP_enabled" not in STATUS.read_text(),
    reason="Linux reports THP_enabled in /proc/self/status from 6.x kernels",
)

# A process of its own, as the command is: its process settings made first, then a pool of workers (the
# fork server that starts them is this process's child, so it must inherit the setting).
PROBE = """
from pathlib import Path
from seekbench.cli._tune import tune_process
tune_process()
from seekbench.scale import local_workers

def thp(status):
    return next(l for l in status.splitlines() if l.startswith("THP_enabled")).split(":")[1].strip()

if __name__ == "__main__":  # the fork server imports this module as the main one
    status = Path("/proc/self/status")
    with local_workers(2) as pool:
        workers = [pool.submit(Path.read_text, status).result() for _ in range(2)]
    print(thp(status.read_text()), *(thp(s) for s in workers))
"""


def test_the_command_and_its_workers_have_no_huge_pages(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    out = subprocess.run([sys.executable, probe], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.split() == ["0", "0", "0"]
