"""The command makes no process settings (issue 28: its speed tricks saved under 10% and went): no
environment variable set by importing seekbench or by running the command, no huge-pages flag."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

VARS = ("OPENBLAS_THREAD_TIMEOUT", "ARROW_DEFAULT_MEMORY_POOL")
# main() with no command prints the help and returns 2; the last line is what the probe saw then.
RUN = (
    "import os, sys; from seekbench.cli import main; code = main([]); "
    f"print(*(os.environ.get(v) for v in {VARS!r}), code)"
)
STATUS = Path("/proc/self/status")


def _last_line(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def test_the_command_sets_no_environment_variable():
    assert _last_line(RUN).split() == ["None", "None", "2"]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or "THP_enabled" not in STATUS.read_text(),
    reason="Linux reports THP_enabled in /proc/self/status from 6.x kernels",
)
def test_the_command_leaves_huge_pages_as_its_parent_has_them():
    # THP_enabled turns 0 after prctl(PR_SET_THP_DISABLE) (and is inherited): the command no longer makes it.
    code = RUN.replace("print(", "print(open('/proc/self/status').read().split('THP_enabled:')[1].split()[0], ")
    here = STATUS.read_text().split("THP_enabled:")[1].split()[0]
    assert _last_line(code).split()[0] == here
