"""Batch mode against an endpoint nothing listens on: it stops like an online run (exit 3, one error,
no traceback), keeps its state, and a re-run against a live server finishes the job."""

from __future__ import annotations

import subprocess

from annotate_support import read_jsonl, runner_cmd, write_traces

from seekbench.annotate import annotate, state_path_for
from seekbench.testing import OpenAIServer


def test_batch_upload_to_a_dead_endpoint_stops_and_resumes(tmp_path, judge_cfg, shared_traces, dead_url):
    traces = shared_traces[:6]
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    s = annotate(traces, judge_cfg, out, cache=cache, base_url=dead_url, batch=True, progress=False)
    assert s.stopped_unreachable and s.not_started == 6 and s.labeled == 0 and not s.complete
    assert s.first_error.startswith("cannot connect after 2 attempts") and "/v1/files)" in s.first_error
    assert state_path_for(out).exists()  # the round's request keys, nothing uploaded
    with OpenAIServer() as srv:
        again = annotate(traces, judge_cfg, out, cache=cache, base_url=srv.base_url, batch=True, progress=False)
    assert again.complete and again.labeled == 6 and not state_path_for(out).exists()
    assert {r["trace_id"] for r in read_jsonl(out)} == {t["trace_id"] for t in traces}


def test_batch_cli_on_a_dead_endpoint_exits_3_without_a_traceback(tmp_path, judge_cfg, shared_traces, dead_url):
    data = write_traces(tmp_path / "traces.jsonl", shared_traces[:2])
    cmd = runner_cmd(
        "annotate",
        data,
        "--judge",
        "local",
        "--base-url",
        dead_url,
        "-o",
        tmp_path / "o.jsonl",
        "--cache",
        tmp_path / "c.sqlite",
        "--batch",
        "--no-progress",
    )
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and "stopped: the endpoint cannot be reached" in r.stderr
