"""Batch mode against the local server's Files and Batch API: a full cycle, and resuming after SIGKILL."""

from __future__ import annotations

import collections
import json
import signal
import subprocess
import time

import pytest
from annotate_support import read_jsonl, runner_cmd, write_traces

from seekbench.annotate import annotate, state_path_for
from seekbench.testing import OpenAIServer


def _labels(records):
    return sorted((r["trace_id"], r["step"], r["field"], r["value"]) for r in records)


def _count(srv, method, path):
    return sum(r["method"] == method and r["path"] == path for r in srv.requests)


def test_batch_full_cycle_matches_online(tmp_path, judge_cfg, shared_traces, monkeypatch):
    import seekbench.llm._batch_api as batch_mod

    monkeypatch.setattr(batch_mod, "MAX_LINES", 20)  # 50 requests -> three input files and batches
    traces = shared_traces[:50]
    cfg = judge_cfg.with_overrides(price_input_per_mtok=1.0, price_output_per_mtok=2.0, batch_discount=0.5)
    with OpenAIServer() as srv:
        online = annotate(traces, cfg, tmp_path / "online.jsonl", cache=tmp_path / "a.sqlite", base_url=srv.base_url)
    with OpenAIServer() as srv:
        out = tmp_path / "batch.jsonl"
        s = annotate(traces, cfg, out, cache=tmp_path / "b.sqlite", base_url=srv.base_url, batch=True)
        assert _count(srv, "POST", "/v1/files") == 3 and _count(srv, "POST", "/v1/batches") == 3
        lines = [r for r in srv.requests if r["source"] == "batch"]
        assert len(lines) == len(traces) and all(r["status"] == 200 for r in lines)
        assert not state_path_for(out).exists()
        # a re-run has nothing to submit
        n = len(srv.requests)
        again = annotate(traces, cfg, out, cache=tmp_path / "b.sqlite", base_url=srv.base_url, batch=True)
        assert len(srv.requests) == n and again.already_done == len(traces)
    assert s.mode == "batch" and s.labeled == len(traces) and s.requests == len(traces)
    assert _labels(read_jsonl(out)) == _labels(read_jsonl(tmp_path / "online.jsonl"))
    # same usage, half the price
    assert (s.prompt_tokens, s.completion_tokens) == (online.prompt_tokens, online.completion_tokens)
    assert s.cost_usd == pytest.approx(online.cost_usd / 2, rel=1e-12)


def test_batch_repairs_and_failed_lines_go_to_later_rounds(tmp_path, judge_cfg, shared_traces):
    traces = shared_traces[:40]
    with OpenAIServer(faults="500:0.2,malformed:0.2,extra_step:0.2", seed=3) as srv:
        out = tmp_path / "o.jsonl"
        s = annotate(traces, judge_cfg, out, cache=tmp_path / "c.sqlite", base_url=srv.base_url, batch=True)
        rounds = _count(srv, "POST", "/v1/batches")
        paid = [r for r in srv.requests if r["source"] == "batch" and r["status"] == 200]
    assert rounds > 1 and s.repairs > 0 and s.retries > 0
    assert max(collections.Counter(r["body_sha256"] for r in paid).values()) == 1
    recs = read_jsonl(out)
    assert {r["trace_id"] for r in recs} == {t["trace_id"] for t in traces}
    assert all(r["value"] is not None or r["unscored_reason"] for r in recs)


def test_batch_resumes_from_the_batch_id_after_sigkill(tmp_path, judge_cfg, shared_traces):
    traces = shared_traces[:30]
    data = write_traces(tmp_path / "traces.jsonl", traces)
    judge = tmp_path / "slowpoll.toml"
    judge.write_text(
        'name = "slowpoll"\nkind = "openai"\nmodel = "local-model"\n'
        f'prompt = {json.dumps(str(judge_cfg.prompt_path))}\nprompt_version = "step_labels_v1"\n'
        'response_format = "json_object"\ntemperature = 0\nseed = 1\nmax_tokens = 4096\n'
        'max_tokens_param = "max_tokens"\nprice_input_per_mtok = 0.0\nprice_output_per_mtok = 0.0\n'
        'api_key_env = "SEEKBENCH_TEST_UNSET_KEY"\npoll_interval_s = 0.5\n')
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    state = state_path_for(out)
    with OpenAIServer() as srv:
        cmd = runner_cmd("annotate", data, "--judge", judge, "--base-url", srv.base_url, "-o", out, "--cache",
                         cache, "--batch", "--no-progress")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (state.exists() and "batch_id" in state.read_text()):
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert json.loads(state.read_text())["parts"][0]["batch_id"]
        assert not out.exists() or not read_jsonl(out)
        rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        assert _count(srv, "POST", "/v1/batches") == 1 and _count(srv, "POST", "/v1/files") == 1
        lines = [r for r in srv.requests if r["source"] == "batch" and r["status"] == 200]
    assert len(lines) == len(traces)
    assert {r["trace_id"] for r in read_jsonl(out)} == {t["trace_id"] for t in traces}
    assert not state.exists()
