"""SIGKILL a real ``seekbench annotate`` process mid-run, re-run it, and compare with an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest
from annotate_support import comparable, read_jsonl, runner_cmd

from seekbench.annotate import annotate
from seekbench.testing import OpenAIServer, PolicyError, default_policy

pytestmark = pytest.mark.slow


def _annotate_cmd(data, srv, out, cache, concurrency):
    return runner_cmd("annotate", data, "--judge", "local", "--base-url", srv.base_url, "-o", out,
                      "--cache", cache, "--concurrency", concurrency, "--no-progress")


@pytest.fixture(scope="module")
def reference_output(tmp_path_factory, shared_traces):
    """An uninterrupted run of the same job (another cache, another server)."""
    tmp = tmp_path_factory.mktemp("ref")
    with OpenAIServer() as srv:
        annotate(shared_traces, "local", tmp / "ref.jsonl", cache=tmp / "ref.sqlite", base_url=srv.base_url,
                 concurrency=8)
    return comparable(read_jsonl(tmp / "ref.jsonl"))


def _successes(requests):
    return sum(r["path"] == "/v1/chat/completions" and r["status"] == 200 for r in requests)


def test_sigkill_between_requests_loses_nothing_and_pays_nothing_twice(tmp_path, shared_data, shared_traces,
                                                                      reference_output):
    """The kill lands while the server handles request 80: every answer before it was received and paid."""
    n = len(shared_traces)
    lock = threading.Lock()
    state = {"count": 0, "pid": None}

    def killing_policy(request):
        with lock:
            state["count"] += 1
            if state["count"] == 80:
                os.kill(state["pid"], signal.SIGKILL)
                raise PolicyError("the test killed the client", status=503)
        return default_policy(request)

    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer(policy=killing_policy) as srv:
        proc = subprocess.Popen(_annotate_cmd(shared_data, srv, out, cache, 1), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        state["pid"] = proc.pid
        proc.communicate(timeout=240)
        assert proc.returncode == -signal.SIGKILL
        assert 0 < len({r["trace_id"] for r in read_jsonl(out)}) < n
        rerun = subprocess.run(_annotate_cmd(shared_data, srv, out, cache, 1), capture_output=True, text=True,
                               timeout=240)
        assert rerun.returncode == 0, rerun.stderr
        log = srv.requests
    assert _successes(log) == n  # 79 before the kill, 111 after: each trace paid exactly once
    assert comparable(read_jsonl(out)) == reference_output


def test_sigkill_at_an_arbitrary_moment(tmp_path, shared_data, shared_traces, reference_output):
    """Kill while requests are in flight: answers in flight were never received and are asked again,
    at most one per worker; everything received is kept and the final output is the same."""
    n, concurrency = len(shared_traces), 4
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer(latency_ms=20) as srv:
        proc = subprocess.Popen(_annotate_cmd(shared_data, srv, out, cache, concurrency),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or out.stat().st_size < 150_000):
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        rerun = subprocess.run(_annotate_cmd(shared_data, srv, out, cache, concurrency), capture_output=True,
                               text=True, timeout=240)
        assert rerun.returncode == 0, rerun.stderr
        log = srv.requests
    assert n <= _successes(log) <= n + concurrency
    assert comparable(read_jsonl(out)) == reference_output
