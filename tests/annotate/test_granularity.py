"""--granularity step: the published design (one request per step, with the trace so far), the same
labels and records as the per-trace design, and `agree` comparing the two as two raters."""

from __future__ import annotations

import json

from annotate_support import make_trace, read_jsonl

from seekbench.agreement import compare_annotations
from seekbench.annotate import annotate, rule_labels
from seekbench.labels import AnnotationSet, load_annotations
from seekbench.testing import OpenAIServer, default_policy, extract_steps, only_steps


class Recording:
    def __init__(self):
        self.seen = []

    def __call__(self, request):
        self.seen.append(request["messages"][-1]["content"])
        return default_policy(request)


def owed_steps(trace):
    fixed = {s for s, _ in rule_labels(trace)}
    return [s["index"] for s in trace["steps"] if s["kind"] in ("reasoning", "search_result")
            or (s["kind"] == "search" and s["index"] not in fixed)]


def test_step_granularity_asks_once_per_step_with_the_trace_so_far(tmp_path, judge_cfg):
    traces = [make_trace("g1", 7), make_trace("g2", 10)]
    rec = Recording()
    with OpenAIServer(policy=rec) as srv:
        s = annotate(traces, judge_cfg, tmp_path / "step.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url, granularity="step", concurrency=1)
        annotate(traces, judge_cfg, tmp_path / "trace.jsonl", cache=tmp_path / "c.sqlite",
                 base_url=srv.base_url)
    asked = [rec.seen[n] for n in range(s.requests)]
    want = [i for t in traces for i in owed_steps(t)]
    assert s.requests == len(want) and s.labeled == 2
    for text, step in zip(asked, want, strict=True):
        assert only_steps(text) == {step}
        assert max(st["step"] for st in extract_steps(text)) == step  # the trace so far, nothing after
    step_recs, trace_recs = read_jsonl(tmp_path / "step.jsonl"), read_jsonl(tmp_path / "trace.jsonl")
    assert {r["rater"] for r in step_recs} == {"local@step"} and {r["rater"] for r in trace_recs} == {"local"}
    assert {r["provenance"]["granularity"] for r in step_recs if r["provenance"]["kind"] == "judge"} == {"step"}
    # the mock labels a step from its text alone, so both designs give the very same records
    def key(recs):
        return sorted((r["trace_id"], r["step"], r["field"], r["value"]) for r in recs)
    assert key(step_recs) == key(trace_recs)
    load_annotations(tmp_path / "step.jsonl")


def test_agree_compares_the_two_designs(tmp_path, judge_cfg, shared_traces):
    traces = shared_traces[:6]
    with OpenAIServer() as srv:
        for g in ("trace", "step"):
            annotate(traces, judge_cfg, tmp_path / f"{g}.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url, granularity=g)
    res = compare_annotations(AnnotationSet.from_traces(traces), load_annotations(tmp_path / "trace.jsonl"),
                              load_annotations(tmp_path / "step.jsonl"), n_boot=50)
    some = next(m for m in res.pairwise.values() if "local@step" in m.columns)
    assert "local" in some.index
    # identical labels from both designs (the mock labels a step from its text): kappa 1 where defined
    vals = [m.loc["local", "local@step"] for m in res.pairwise.values()]
    assert all(v == 1.0 or v != v for v in vals) and any(v == 1.0 for v in vals)


def test_cli_granularity_option(tmp_path, judge_cfg):
    import subprocess

    from annotate_support import runner_cmd, write_traces

    data = write_traces(tmp_path / "t.jsonl", [make_trace("c1", 7)])
    out = tmp_path / "o.jsonl"
    with OpenAIServer() as srv:
        cmd = runner_cmd("annotate", data, "--judge", "local", "--base-url", srv.base_url, "-o", out,
                         "--cache", tmp_path / "c.sqlite", "--granularity", "step", "--no-progress", "--json")
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        n_chat = sum(r["path"] == "/v1/chat/completions" for r in srv.requests)
    summary = json.loads(done.stdout)
    assert summary["requests"] == n_chat == len(owed_steps(make_trace("c1", 7)))
    assert summary["concurrency"] == 1  # a local server that reports no slots: one request at a time
    assert {r["rater"] for r in read_jsonl(out)} == {"local@step"}
    bad = subprocess.run(runner_cmd("annotate", data, "--judge", "local", "-o", out, "--granularity", "turn"),
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "granularity" in bad.stderr


def test_costs_count_each_trace_job_once_whatever_answer_each_label_came_from(tmp_path, judge_cfg):
    """Each label's ``cache_key`` names the answer it came from (one per step request at step
    granularity); the usage on it is the whole trace job's. `agree`'s cost table must count that
    usage once per trace: the tokens per trace equal what the server was sent, not that times the
    number of step requests (before the fix: 9 requests of one trace counted as 9 jobs)."""
    from seekbench.agreement import judge_costs

    traces = [make_trace("u1", 7), make_trace("u2", 10)]
    rec = Recording()
    with OpenAIServer(policy=rec) as srv:
        s = annotate(traces, judge_cfg, tmp_path / "step.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url, granularity="step", concurrency=1)
    recs = [r for r in read_jsonl(tmp_path / "step.jsonl") if r["provenance"]["kind"] == "judge"]
    assert len({r["provenance"]["cache_key"] for r in recs}) > 2  # labels name different answers
    paid = {r["trace_id"]: r["provenance"]["input_tokens"] for r in recs}  # one job total per trace
    assert len(paid) == 2 and all(v > 0 for v in paid.values())
    row = judge_costs(AnnotationSet.from_records(read_jsonl(tmp_path / "step.jsonl"))).iloc[0]
    assert row["input_tokens_per_trace"] == sum(paid.values()) / 2
    assert int(row["n_calls"]) == s.requests
