"""The annotator against the real local OpenAI-compatible server (HTTP, official client, nothing patched)."""

from __future__ import annotations

import collections
import json
import time

import pytest
from annotate_support import make_trace, read_jsonl

from seekbench.annotate import JudgeCache, PromptTemplate, annotate, render_prompt, rule_labels
from seekbench.labels import load_annotations
from seekbench.testing import FAULT_KINDS, OpenAIServer, count_tokens, default_policy, extract_steps, label_steps
from seekbench.testing._protocol import prompt_tokens


def chat_requests(srv):
    return [r for r in srv.requests if r["path"] == "/v1/chat/completions"]


def delivered(srv):
    """Chat requests answered with 200 and actually received (a held 'timeout' answer never is)."""
    return [r for r in chat_requests(srv) if r["status"] == 200 and r["fault"] != "timeout"]


def labeled_or_unscored(traces, records):
    """Every (step, field) the ontology asks for has exactly one record: a value, or None with a reason."""
    have = collections.Counter((r["trace_id"], r["step"], r["field"]) for r in records)
    assert max(have.values()) == 1
    for r in records:
        assert (r["value"] is None) == bool(r.get("unscored_reason"))
    need = {"reasoning": ("reasoning_type", "grounding"), "search": ("search_type",),
            "search_result": ("clarity", "sufficiency")}
    for tr in traces:
        for st in tr["steps"]:
            for f in need.get(st["kind"], ()):
                assert (tr["trace_id"], st["index"], f) in have, (tr["trace_id"], st["index"], f)


def test_round_trip_labels_match_the_policy(tmp_path, judge_cfg, small_traces):
    out = tmp_path / "labels.jsonl"
    with OpenAIServer() as srv:
        s = annotate(small_traces, judge_cfg, out, cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        n_chat = len(chat_requests(srv))
    recs = read_jsonl(out)
    load_annotations(out)  # valid against schemas/annotation.schema.json
    labeled_or_unscored(small_traces, recs)
    assert s.labeled == len(small_traces) and s.unscored == s.failed == 0 and s.requests == n_chat
    # expected labels: the policy's hash-of-text choice for each step the judge labels (independent of us)
    template = PromptTemplate.load(judge_cfg.prompt_path, version=judge_cfg.prompt_version)
    for tr in small_traces:
        rp = render_prompt(tr, rule_labels(tr), template)
        expected = {}
        for lab in label_steps(extract_steps(rp.messages[-1]["content"])):
            for f, v in lab.items():
                if f != "step" and f not in rp.steps[lab["step"]].rule_fixed:
                    expected[(lab["step"], f)] = v
        got = {(r["step"], r["field"]): r["value"] for r in recs
               if r["trace_id"] == tr["trace_id"] and r["provenance"]["kind"] == "judge"}
        assert got == expected
        rules = {(r["step"], r["field"]): r["value"] for r in recs
                 if r["trace_id"] == tr["trace_id"] and r["provenance"]["kind"] == "rule"}
        assert rules == {k: v.value for k, v in rule_labels(tr).items()}
    assert [r["trace_id"] for r in recs] == sorted((r["trace_id"] for r in recs),
                                                   key=[t["trace_id"] for t in small_traces].index)


def test_one_request_per_trace_whatever_the_steps(tmp_path, judge_cfg):
    traces = [make_trace(f"n{n}", n) for n in (2, 3, 5, 9, 17, 33, 65)]
    with OpenAIServer() as srv:
        annotate(traces, judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        per_trace = collections.Counter(r["trace_id"] for r in chat_requests(srv))
    assert per_trace == {t["trace_id"]: 1 for t in traces}


def test_rule_labels_alone_are_never_paid_for(tmp_path, judge_cfg):
    tr = {"schema_version": "1.0", "trace_id": "only-search", "agent": "a", "question": "q",
          "steps": [{"index": 0, "kind": "search", "query": "q"}, {"index": 1, "kind": "answer", "text": "x"}]}
    with OpenAIServer() as srv:
        s = annotate([tr], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        assert srv.requests == []  # not even a probe of the server: nothing to ask it
    recs = read_jsonl(tmp_path / "o.jsonl")
    assert [(r["step"], r["field"], r["value"], r["provenance"]["kind"]) for r in recs] == [
        (0, "search_type", "InitialQuery", "rule")]
    assert s.labeled == 1 and s.rule_labels == 1 and s.requests == 0


def test_rerun_of_a_finished_job_makes_no_request(tmp_path, judge_cfg, small_traces):
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer() as srv:
        annotate(small_traces, judge_cfg, out, cache=cache, base_url=srv.base_url)
        first = out.read_bytes()
        n = len(chat_requests(srv))
        s = annotate(small_traces, judge_cfg, out, cache=cache, base_url=srv.base_url)
        assert len(srv.requests) == n + 2  # the probe of /v1/models and /props only
        assert s.already_done == len(small_traces) and s.requests == 0
        assert out.read_bytes() == first
        # a new output from the same cache: answers come from the cache, still no request
        s = annotate(small_traces, judge_cfg, tmp_path / "o2.jsonl", cache=cache, base_url=srv.base_url)
        assert len(chat_requests(srv)) == n and s.from_cache == len(small_traces)
    assert read_jsonl(tmp_path / "o2.jsonl") == read_jsonl(out)


def test_acceptance_20pct_faults_of_each_kind(tmp_path, judge_cfg, shared_traces):
    """All ten fault kinds at 20% each: every step ends labeled or explicitly unscored; nothing paid twice."""
    spec = ",".join(f"{k}:0.2" for k in FAULT_KINDS)
    # The client timeout must stay well above a normal response time even on a loaded CI machine:
    # a response that arrives after the client gave up is delivered (paid) yet unknown to the client.
    cfg = judge_cfg.with_overrides(timeout_s=2.0)
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer(faults=spec, timeout_s=3.0, seed=7) as srv:
        s1 = annotate(shared_traces, cfg, out, cache=cache, base_url=srv.base_url, concurrency=16)
        recs = read_jsonl(out)
        labeled_or_unscored(shared_traces, recs)
        load_annotations(out)
        assert s1.labeled + s1.unscored + s1.failed == len(shared_traces)
        assert s1.labeled > 0 and s1.unscored > 0  # both outcomes occur at this fault rate
        reasons = {r["unscored_reason"].split(":")[0] for r in recs if r["value"] is None}
        assert reasons <= {"invalid_output", "request_failed"}
        # a re-run retries only the failed traces (nothing was paid for them)
        s2 = annotate(shared_traces, cfg, out, cache=cache, base_url=srv.base_url, concurrency=16)
        assert s2.already_done == len(shared_traces) - s1.failed
        labeled_or_unscored(shared_traces, read_jsonl(out))
        paid = delivered(srv)
        faults = collections.Counter(r["fault"] for r in chat_requests(srv))
    assert set(faults) >= set(FAULT_KINDS)
    # no request body was paid for twice, across both runs
    per_body = collections.Counter(r["body_sha256"] for r in paid)
    assert max(per_body.values()) == 1
    # per trace: the first ask plus at most max_repairs repairs
    per_trace = collections.Counter(r["trace_id"] for r in paid)
    assert max(per_trace.values()) <= 1 + cfg.max_repairs
    assert s1.requests + s2.requests == len(paid)


def test_reported_cost_equals_server_usage_times_prices(tmp_path, judge_cfg, small_traces):
    seen = []

    def recording_policy(request):
        content = default_policy(request)
        seen.append((prompt_tokens(request), count_tokens(content)))
        return content

    cfg = judge_cfg.with_overrides(price_input_per_mtok=0.40, price_output_per_mtok=1.60)
    out = tmp_path / "o.jsonl"
    with OpenAIServer(policy=recording_policy) as srv:
        s = annotate(small_traces, cfg, out, cache=tmp_path / "c.sqlite", base_url=srv.base_url)
    n_in, n_out = sum(a for a, _ in seen), sum(b for _, b in seen)
    assert (s.prompt_tokens, s.completion_tokens) == (n_in, n_out)
    assert s.cost_usd == pytest.approx((n_in * 0.40 + n_out * 1.60) / 1e6, rel=1e-12)
    per_trace = {r["trace_id"]: r["provenance"]["cost_usd"] for r in read_jsonl(out)
                 if r["provenance"]["kind"] == "judge"}
    assert sum(per_trace.values()) == pytest.approx(s.cost_usd, rel=1e-9)
    with JudgeCache(tmp_path / "c.sqlite") as c:
        assert c.stats()["cost_usd"] == pytest.approx(s.cost_usd, rel=1e-12)


def test_budget_stops_before_it_is_exceeded(tmp_path, judge_cfg, shared_traces):
    traces = shared_traces[:40]
    cfg = judge_cfg.with_overrides(price_input_per_mtok=10.0, price_output_per_mtok=30.0)
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer() as srv:
        full = annotate(traces, cfg, tmp_path / "ref.jsonl", cache=tmp_path / "ref.sqlite", base_url=srv.base_url)
        budget = full.cost_usd / 3
        s = annotate(traces, cfg, out, cache=cache, base_url=srv.base_url, budget_usd=budget, concurrency=4)
        assert s.stopped_by_budget and 0 < s.cost_usd <= budget
        assert s.not_started > 0 and s.labeled + s.not_started == len(traces)
        rows = read_jsonl(out)
        unsent = {r["trace_id"] for r in rows if str(r.get("unscored_reason")).startswith("not_sent: the budget")}
        # every trace in the output: the ones the budget stopped as unscored, not sent (issue 24)
        assert len({r["trace_id"] for r in rows}) == len(traces) and len(unsent) == s.not_started
        s2 = annotate(traces, cfg, out, cache=cache, base_url=srv.base_url)
        assert s2.labeled == len(traces) - s.labeled and not s2.stopped_by_budget
        assert len(delivered(srv)) == 2 * len(traces)  # reference run + this job: one request per trace each
    assert s.cost_usd + s2.cost_usd == pytest.approx(full.cost_usd, rel=1e-9)


def test_retry_after_is_honoured_and_attempts_are_bounded(tmp_path, judge_cfg):
    cfg = judge_cfg.with_overrides(max_attempts=2, backoff_base_s=0.0)
    with OpenAIServer(faults="429:1", retry_after_s=1) as srv:
        t0 = time.monotonic()
        s = annotate([make_trace("r", 4)], cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        elapsed = time.monotonic() - t0
        assert len(chat_requests(srv)) == 2
    assert elapsed >= 1.0  # backoff alone would be 0 s: the wait came from Retry-After
    assert s.failed == 1 and s.retries == 1
    recs = read_jsonl(tmp_path / "o.jsonl")
    assert all(r["value"] is None and r["unscored_reason"].startswith("request_failed: gave up after 2 attempts")
               for r in recs if r["provenance"]["kind"] == "judge")


def test_per_request_timeout(tmp_path, judge_cfg):
    cfg = judge_cfg.with_overrides(max_attempts=2, timeout_s=0.3)
    with OpenAIServer(faults="timeout:1", timeout_s=3) as srv:
        t0 = time.monotonic()
        s = annotate([make_trace("slow", 4)], cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        assert time.monotonic() - t0 < 2.5
    assert s.failed == 1 and "timed out" in json.dumps(read_jsonl(tmp_path / "o.jsonl"))


def test_repairs_then_unscored_never_a_default(tmp_path, judge_cfg):
    cfg = judge_cfg.with_overrides(max_repairs=2)
    with OpenAIServer(faults="bad_enum:1") as srv:
        s = annotate([make_trace("bad", 7)], cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        paid = delivered(srv)
        # the ask, repair 1 (for step 0 only) and repair 2, each a different request
        assert len(paid) == 3 and len({r["body_sha256"] for r in paid}) == 3
    recs = read_jsonl(tmp_path / "o.jsonl")
    judged = {(r["step"], r["field"]): r for r in recs if r["provenance"]["kind"] == "judge"}
    # bad_enum spoils the first value of each answer (step 0's reasoning_type): only that label is unscored
    bad = judged.pop((0, "reasoning_type"))
    assert bad["value"] is None and bad["unscored_reason"].startswith("invalid_output: step 0")
    assert "'Maybe' is not allowed" in bad["unscored_reason"] and "after 2 repairs" in bad["unscored_reason"]
    assert judged and all(r["value"] is not None for r in judged.values())
    assert [r["value"] for r in recs if r["provenance"]["kind"] == "rule"] == ["InitialQuery"]
    assert s.unscored == 1 and s.partial == 1 and s.repairs == 2


def test_partial_output_is_repaired_on_resume(tmp_path, judge_cfg, small_traces):
    out, cache = tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer() as srv:
        annotate(small_traces, judge_cfg, out, cache=cache, base_url=srv.base_url)
        complete = read_jsonl(out)
        lines = out.read_text().splitlines(keepends=True)
        last = complete[-1]["trace_id"]
        n_last = sum(r["trace_id"] == last for r in complete)
        # a crash mid-block: the last trace's block loses its final records and ends in a partial line
        out.write_text("".join(lines[: len(lines) - n_last + 2]) + lines[-1][:25])
        n = len(chat_requests(srv))
        s = annotate(small_traces, judge_cfg, out, cache=cache, base_url=srv.base_url)
        assert len(chat_requests(srv)) == n  # redone from the cache
    assert s.already_done == len(small_traces) - 1 and s.from_cache == 1
    assert read_jsonl(out) == complete
