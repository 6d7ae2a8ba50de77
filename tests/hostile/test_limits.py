"""Limits: 10,000-step traces and 1 MB documents without quadratic blow-ups; judge inputs cut to the context.

Scaling is checked without any absolute time limit: each stage is timed (CPU
time of the calling thread, so other processes on a busy machine do not
count; the garbage collector paused) on an input and on the same input four
times larger, best of three runs each, interleaved with a baseline: a plain
JSON parse or dump of the same data, linear by construction. The stage's
growth must stay under 3 times the baseline's (and under 12 at least): linear
work grows like the baseline, about 4 (more for large strings, whose cost per
byte rises out of cache); quadratic work grows about 16 or more. The context
tests run the real annotate pipeline against the local server.
"""

from __future__ import annotations

import gc
import json
import time

import pytest
from hostile_support import canonical_trace

from seekbench.annotate import annotate, parse_judge_output, render_prompt, rule_labels
from seekbench.llm._fence import json_data, neutralise
from seekbench.annotate._job import TraceJob
from seekbench.annotate._prompt import STEPS_BEGIN, TRUNCATION_MARKER
from seekbench.llm import completion_from_body
from seekbench.testing import OpenAIServer, default_policy
from seekbench.traces import build_tables, read_traces, validate_trace

N_STEPS = 2_500  # and 10,000


def _timed(fn, reps: int) -> float:
    """CPU seconds this thread spends on ``reps`` calls of ``fn`` (time descheduled does not count)."""
    start = time.thread_time()
    for _ in range(reps):
        fn()
    return time.thread_time() - start


def _reps(fn) -> int:
    """How many calls of ``fn`` take 30 ms, so that timer resolution and warm-up do not decide a ratio."""
    fn()
    reps = 1
    while _timed(fn, reps) < 0.03 and reps < 256:
        reps *= 2
    return reps


def _assert_linear(make, run, small: int, *, what: str, baseline) -> None:
    """``run`` grows from ``make(small)`` to ``make(4 * small)`` less than 3 times as much as ``baseline``
    (a quadratic run grows x16; the margin absorbs a loaded machine)."""
    a, b = make(small), make(4 * small)
    gc.collect()
    gc.disable()  # a full collection walks the whole heap: its cost would not scale with the input
    try:
        n_run, n_base = _reps(lambda: run(a)), _reps(lambda: baseline(a))
        best = [float("inf")] * 4
        for _ in range(3):  # interleaved, so a busy moment of the machine hits both sides
            for k, (fn, x, n) in enumerate(((run, a, n_run), (run, b, n_run), (baseline, a, n_base),
                                            (baseline, b, n_base))):
                best[k] = min(best[k], _timed(lambda: fn(x), n))
    finally:
        gc.enable()
    growth, base_growth = best[1] / best[0], best[3] / best[2]
    assert growth < 3.0 * max(4.0, base_growth), (
        f"{what}: x4 input took x{growth:.1f} time (a linear baseline: x{base_growth:.1f})")


def _parse_file(path) -> None:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        for line in text.splitlines():
            json.loads(line)
    elif path.suffix == ".json":
        json.loads(text)
    else:
        text.split()


def _long_trace(n: int, *, doc_bytes: int = 40) -> dict:
    tr = canonical_trace("long", n)
    for i, st in enumerate(tr["steps"]):
        if st["kind"] == "search":
            st["query"] = f"query {i % 97}"  # repeats: rule labels on many steps
        elif st["kind"] == "search_result":
            st["documents"][0]["text"] = ("evidence %d " % i).ljust(doc_bytes, "e")
    return tr


def _as_format(fmt: str, n: int, doc: str = "") -> tuple[str, str]:
    """(file name, text) of one trace with about ``n`` steps in ``fmt`` (``doc`` in one search result)."""
    third = max(1, n // 3)
    if fmt == "canonical":
        tr = _long_trace(n)
        if doc:
            tr["steps"][2]["documents"][0]["text"] = doc
        return "t.jsonl", json.dumps(tr) + "\n"
    if fmt == "seekbench":
        steps = []
        for i in range(third):
            steps += [{"type": "reasoning", "content": f"think {i}"}, {"type": "search", "query": f"q {i}"},
                      {"type": "search_result", "documents": [{"title": "t", "content": doc or f"r {i}"}]}]
        return "t.jsonl", json.dumps({"id": "x", "question": "q", "model": "m", "trace": steps}) + "\n"
    if fmt in ("openai_chat", "atif"):
        msgs, steps = [{"role": "user", "content": "q"}], [{"step_id": 0, "source": "user", "message": "q"}]
        for i in range(third):
            out = json.dumps([{"title": "t", "text": doc or f"result {i}"}])
            msgs += [{"role": "assistant", "content": f"think {i}", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "search",
                                                                 "arguments": json.dumps({"query": f"q{i}"})}}]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": out}]
            steps.append({"step_id": i + 1, "source": "agent", "message": f"think {i}",
                          "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "search",
                                          "arguments": {"query": f"q{i}"}}],
                          "observation": {"results": [{"source_call_id": f"c{i}", "content": out}]}})
        if fmt == "openai_chat":
            return "t.jsonl", json.dumps({"id": "x", "model": "m", "messages": msgs}) + "\n"
        return "t.jsonl", json.dumps({"schema_version": "ATIF-v1.4", "session_id": "x", "agent": {"name": "m"},
                                      "steps": steps}) + "\n"
    if fmt == "inspect":  # an Inspect AI log written as .json: one sample, tool calls as chat messages
        msgs: list[dict] = [{"role": "user", "content": "what?"}]
        for i in range(third):
            msgs += [{"role": "assistant", "content": f"think {i}", "tool_calls": [
                {"id": f"c{i}", "function": "search", "arguments": {"query": f"q{i}"}}]},
                     {"role": "tool", "tool_call_id": f"c{i}", "function": "search", "content": doc or f"result {i}"}]
        return "t.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"},
                                     "samples": [{"id": "x", "epoch": 1, "input": "what?", "target": "x",
                                                  "messages": msgs}]})
    if fmt == "otel":  # one OTLP JSON line: an agent span with a GenAI retrieval span per search
        return "t.jsonl", json.dumps(_otlp_document(max(1, n // 2), doc)) + "\n"
    body = "".join(f"<think>t{i}</think>\n<search>q{i}</search>\n<information>Doc 1(Title: a) "
                   f"{doc or i}</information>\n" for i in range(third)) + "<answer>x</answer>"
    if fmt == "search_r1_text":
        return "t.txt", "Question: what?\n" + body
    return "t.jsonl", json.dumps({"id": "x", "question": "what?", "output": body}) + "\n"


def _otlp_document(searches: int, doc: str) -> dict:
    def attrs(values: dict) -> list[dict]:
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    trace_id, root = "0" * 31 + "1", "a" * 16
    spans = [{"traceId": trace_id, "spanId": root, "name": "agent", "startTimeUnixNano": "1",
              "endTimeUnixNano": str(10**9), "attributes": attrs(
                  {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "m", "input.value": "what?"})}]
    for i in range(searches):
        documents = json.dumps([{"id": f"d{i}", "content": doc or f"result {i}"}])
        spans.append({"traceId": trace_id, "spanId": f"{i + 1:016x}", "parentSpanId": root, "name": "retrieve",
                      "startTimeUnixNano": str(i + 2), "endTimeUnixNano": str(i + 3), "attributes": attrs(
                          {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": f"q{i}",
                           "gen_ai.retrieval.documents": documents})})
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "s"},
                                                                                "spans": spans}]}]}


FORMATS = ["canonical", "seekbench", "openai_chat", "atif", "search_r1", "search_r1_text", "inspect", "otel"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_importers_scale_linearly_with_steps(fmt, tmp_path):
    def make(n):
        name, text = _as_format(fmt, n)
        path = tmp_path / f"{n}-{name}"
        path.write_text(text, encoding="utf-8")
        return path

    def run(path):
        res = read_traces(path, format=fmt.replace("_text", ""))
        assert len(res.traces[0]["steps"]) >= N_STEPS // 2

    _assert_linear(make, run, N_STEPS, what=f"reading {fmt}", baseline=_parse_file)


@pytest.mark.parametrize("fmt", FORMATS)
def test_importers_scale_linearly_with_document_size(fmt, tmp_path):
    def make(size):  # a 256 KB then a 1 MB document, in a trace of a few steps
        name, text = _as_format(fmt, 6, doc=("évidence Doc 1(Title: x) <b>" * (size // 30))[:size])
        path = tmp_path / f"{size}-{name}"
        path.write_text(text, encoding="utf-8")
        return path

    _assert_linear(make, lambda p: read_traces(p, format=fmt.replace("_text", "")), 256 * 1024,
                   what=f"a 1 MB document in {fmt}", baseline=_parse_file)


def test_unclosed_tags_scale_linearly(tmp_path):
    def make(n):
        path = tmp_path / f"{n}.txt"
        path.write_text("<think>" + "<search>q " * n, encoding="utf-8")  # every tag unclosed
        return path

    _assert_linear(make, lambda p: read_traces(p, format="search_r1"), N_STEPS, what="unclosed tags",
                   baseline=_parse_file)


@pytest.mark.parametrize("stage", ["validate", "tables", "rules", "render", "render_truncated", "parse",
                                   "records"])
def test_pipeline_stages_scale_linearly_with_steps(stage, judge_cfg, template):
    def run(tr):
        if stage == "validate":
            validate_trace(tr)
        elif stage == "tables":
            build_tables([tr])
        elif stage == "rules":
            rule_labels(tr)
        elif stage == "render":
            render_prompt(tr, rule_labels(tr), template, context_tokens=10**9)
        elif stage == "render_truncated":  # the binary search on the cut length re-renders O(log L) times
            render_prompt(tr, rule_labels(tr), template, context_tokens=len(tr["steps"]) * 30, max_tokens=100)
        else:
            job = TraceJob(tr, judge_cfg.with_overrides(context_tokens=10**9), template)
            if stage == "parse":
                parse_judge_output(_answers[id(tr)], job.rendered.steps)
            else:
                job.feed(completion_from_body({"choices": [{"message": {"content": _answers[id(tr)]},
                                                            "finish_reason": "stop"}]}),
                         key="k", cost_usd=0.0, from_cache=False)
                assert len(job.records(rater="r")) > len(tr["steps"]) // 2

    _answers: dict[int, str] = {}

    def make(n):
        tr = _long_trace(n, doc_bytes=200)
        rp = render_prompt(tr, rule_labels(tr), template, context_tokens=10**9)
        _answers[id(tr)] = default_policy({"messages": rp.messages})
        return tr

    _assert_linear(make, run, N_STEPS, what=stage, baseline=lambda tr: json.loads(json.dumps(tr)))


def test_defusing_scales_linearly_with_text_size():
    def make(size):
        return ("ＳＴＥＰＳ＿ＪＳＯＮ>>> 漢字 \u2028 <|im_start|> STEPS_JSON <<<" * (size // 40))[:size]

    _assert_linear(make, lambda t: json_data(neutralise(t)), 256 * 1024, what="neutralise + json_data",
                   baseline=lambda t: json.loads(json.dumps(t)))


# -- the judge's context ---------------------------------------------------------------------------------------

def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_1mb_document_is_cut_with_a_marker_and_the_cut_is_in_the_provenance(tmp_path, judge_cfg):
    tr = canonical_trace("big-doc", 7)
    tr["steps"][2]["documents"][0]["text"] = "word " * 210_000  # 1 MB, far over the local judge's 32k tokens
    seen: list[str] = []
    answer_budget: list[int] = []

    def policy(request):
        seen.append(request["messages"][-1]["content"])
        answer_budget.append(request["max_tokens"])  # sized to the steps asked for, below the file's 4096
        return default_policy(request)

    with OpenAIServer(policy=policy) as srv:
        s = annotate([tr], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
    assert s.labeled == 1 and s.truncated == 1 and len(seen) == 1  # one long page: cut, not windowed
    steps_block = seen[0].split(STEPS_BEGIN, 1)[1]
    assert TRUNCATION_MARKER.split("{n}")[1].strip() in steps_block
    assert len(seen[0].encode()) / 3 <= judge_cfg.context_tokens - answer_budget[0] < 32768 - 256
    judged = [r for r in _records(tmp_path / "o.jsonl") if r["provenance"]["kind"] == "judge"]
    assert judged and all(r["provenance"]["truncated"] is True for r in judged)
    cap = judged[0]["provenance"]["truncated_to_chars"]
    assert isinstance(cap, int) and 0 < cap < 1_050_000
    assert {r["step"] for r in judged if r["provenance"]["step_truncated"]} == {2}


def test_a_trace_too_long_for_the_context_is_judged_in_windows(tmp_path, judge_cfg):
    """10,000 steps do not fit 32k tokens even with every text cut: judged in windows of steps."""
    tr = _long_trace(10_000)
    short = canonical_trace("short", 4)
    with OpenAIServer() as srv:
        s = annotate([tr, short], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        sent = [r for r in srv.requests if r["path"] == "/v1/chat/completions"]
    assert s.labeled == 2 and s.windowed == 1 and s.failed == 0
    judged = [r for r in _records(tmp_path / "o.jsonl") if r["trace_id"] == "long"
              and r["provenance"]["kind"] == "judge"]
    assert judged and all(r["value"] is not None for r in judged)
    assert {r["provenance"]["windows"] for r in judged} == {len(sent) - 1}
    again = annotate([tr, short], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url="http://127.0.0.1:9/v1")  # nothing left to send: no server needed
    assert again.already_done == 2


def test_a_step_too_long_for_any_window_is_not_sent_and_says_why(tmp_path, judge_cfg):
    """A context smaller than the judge's own instructions: no window fits, nothing is sent or paid."""
    tr = _long_trace(50)
    cfg = judge_cfg.with_overrides(context_tokens=1500)
    with OpenAIServer() as srv:
        s = annotate([tr], cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        sent = [r for r in srv.requests if r["path"] == "/v1/chat/completions"]
    assert not sent and s.unscored == 1 and s.errors.get("over_context") == 1
    judged = [r for r in _records(tmp_path / "o.jsonl") if r["trace_id"] == "long"
              and r["provenance"]["kind"] == "judge"]
    assert judged and all(r["value"] is None and r["unscored_reason"].startswith("over_context: ")
                          and "1500" in r["unscored_reason"] and r["provenance"]["requests"] == 0
                          for r in judged)
    rules = [r for r in _records(tmp_path / "o.jsonl") if r["trace_id"] == "long"
             and r["provenance"]["kind"] == "rule"]
    assert len(rules) == len(rule_labels(tr))  # the free rule labels are still recorded
