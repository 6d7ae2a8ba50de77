"""One writer per output (issue 25, item 7): a second run on the same output or judge cache exits 2 at once,
naming the first run's pid, and pays for nothing; a lock file left by a killed run blocks nobody."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_support import chat_completions, cli_command

from seekbench._lock import exclusive, lock_path
from seekbench.data import sample_traces_path
from seekbench.testing import OpenAIServer

SAMPLE = sample_traces_path()


def _annotate(srv: OpenAIServer, out: str, cache: str) -> list[str]:
    return cli_command(
        "annotate",
        "--judge",
        "local",
        "--base-url",
        srv.base_url,
        SAMPLE,
        "-o",
        out,
        "--cache",
        cache,
        "--no-progress",
        "--concurrency",
        "1",
    )


@pytest.fixture
def first_run(tmp_path):
    """A slow annotate run in the background, holding labels.jsonl and cache.sqlite."""
    with OpenAIServer(latency_ms=300) as srv:
        proc = subprocess.Popen(
            _annotate(srv, "labels.jsonl", "cache.sqlite"),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while chat_completions(srv) == 0:  # it holds its locks before its first request
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        yield srv, proc
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)


@pytest.mark.parametrize(
    ("out", "cache", "named", "option"),
    [
        ("labels.jsonl", "other.sqlite", "labels.jsonl", "-o"),
        ("other.jsonl", "cache.sqlite", "cache.sqlite", "--cache"),
    ],
)
def test_a_second_run_exits_2_naming_the_first(tmp_path, first_run, out, cache, named, option):
    srv, proc = first_run
    paid = chat_completions(srv)
    second = subprocess.run(_annotate(srv, out, cache), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2, second.stderr
    assert "Traceback" not in second.stderr
    assert second.stderr.strip().splitlines() == [
        f"seekbench: error: {named}: is being written by another seekbench run (pid {proc.pid}); "
        f"wait for it or use another {option}"
    ]
    # stopped before any work: its own output and cache (the path the first run does not hold) never made
    mine = cache if out == "labels.jsonl" else out
    assert not (tmp_path / mine).exists()
    assert proc.poll() is None  # the first run goes on
    assert chat_completions(srv) > paid


def test_a_stale_lock_file_blocks_nobody(tmp_path):
    """A run killed with SIGKILL leaves its lock file and pid; the kernel dropped its flock, so the next run goes."""
    out = tmp_path / "labels.jsonl"
    lock_path(out).write_text("999999\n")
    proc = subprocess.run(
        cli_command("annotate", "--judge", "rules", SAMPLE, "-o", out, "--no-progress"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert not lock_path(out).exists()  # removed when the run ended


def test_a_killed_holder_releases_the_lock(tmp_path):
    out = tmp_path / "o.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.path.insert(0, sys.argv[1]);"
            "from seekbench._lock import exclusive;"
            "cm = exclusive(sys.argv[2]); cm.__enter__(); print('held', flush=True); time.sleep(60)",
            str(Path(__file__).resolve().parents[2]),
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(Exception, match=rf"pid {holder.pid}\)"):
        with exclusive(out):
            pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    assert lock_path(out).read_text().strip() == str(holder.pid)  # left behind, stale
    with exclusive(out) as lock:
        assert lock.read_text().strip() == str(os.getpid())
    assert not lock.exists()
