"""Traces longer than the judge's context: judged in windows of steps, never cut to fit or failed,
against servers that report their window (vLLM, llama.cpp) or only refuse an over-long prompt."""

from __future__ import annotations

import collections

from annotate_support import make_trace, read_jsonl

from seekbench.annotate import annotate, rule_labels
from seekbench.testing import OpenAIServer, ServerProfile, count_tokens, extract_steps, only_steps
from seekbench.testing._protocol import prompt_tokens


def chats(srv):
    return [r for r in srv.requests if r["path"] == "/v1/chat/completions"]


def owed(trace):
    """(step, field) pairs the judge owes: every field of the step's kind that no rule fixed
    (make_trace's searches alternate two queries: all but the first of each are rule repeats)."""
    need = {"reasoning": ("reasoning_type", "grounding"), "search": ("search_type",),
            "search_result": ("clarity", "sufficiency")}
    fixed = set(rule_labels(trace))
    return {(s["index"], f) for s in trace["steps"] for f in need.get(s["kind"], ())} - fixed


class Sizes:
    """A policy wrapper that records each request's prompt tokens as the server counts them."""

    def __init__(self):
        from seekbench.testing import default_policy

        self.inner, self.tokens, self.texts = default_policy, [], []

    def __call__(self, request):
        self.tokens.append(prompt_tokens(request) + int(request.get("max_tokens") or 0))
        self.texts.append(request["messages"][-1]["content"])
        return self.inner(request)


def test_a_2000_step_trace_is_judged_in_windows_within_the_servers_context(tmp_path, judge_cfg):
    tr = make_trace("long", 2000)
    sizes = Sizes()
    # vLLM reports max_model_len 8192 in /v1/models: smaller than the 32,768 the local judge file assumes
    with OpenAIServer(profile=ServerProfile.vllm(context_tokens=8192), policy=sizes) as srv:
        s = annotate([tr], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        sent = chats(srv)
    assert s.labeled == 1 and s.failed == 0 and s.windowed == 1
    assert all(r["status"] == 200 for r in sent) and max(sizes.tokens) <= 8192
    recs = read_jsonl(tmp_path / "o.jsonl")
    judged = {(r["step"], r["field"]): r for r in recs if r["provenance"]["kind"] == "judge"}
    assert set(judged) == owed(tr) and all(r["value"] is not None for r in judged.values())
    prov = [r["provenance"] for r in judged.values()]
    assert {p["windows"] for p in prov} == {len(sent)} and len(sent) > 1
    # the windows are consecutive runs of steps that cover the trace once, each step in its own window
    windows = sorted({tuple(p["window"]) for p in prov})
    assert len(windows) == len(sent)
    for (a, b), (c, _) in zip(windows, windows[1:]):
        assert a <= b < c
    for (step, _), r in judged.items():
        a, b = r["provenance"]["window"]
        assert a <= step <= b
    # each window's request also shows the question and a clipped summary of what came before
    later = sizes.texts[1]
    shown = [st["step"] for st in extract_steps(later)]
    asked = only_steps(later)
    assert asked and min(shown) < min(asked) and "Who wrote the book?" in later


def test_a_context_length_refusal_leads_to_windows_not_a_failed_trace(tmp_path, judge_cfg):
    tr = make_trace("refused", 150)
    # an OpenAI-like server that reports nothing and refuses prompts over 4,500 tokens (vLLM wording)
    with OpenAIServer(profile=ServerProfile(context_tokens=4500)) as srv:
        s = annotate([tr], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        statuses = collections.Counter(r["status"] for r in chats(srv))
    assert statuses[400] >= 1 and s.context_refusals == statuses[400]
    assert s.labeled == 1 and s.failed == 0
    recs = read_jsonl(tmp_path / "o.jsonl")
    judged = {(r["step"], r["field"]): r for r in recs if r["provenance"]["kind"] == "judge"}
    assert set(judged) == owed(tr) and all(r["value"] is not None for r in judged.values())
    assert next(iter(judged.values()))["provenance"]["windows"] > 1


def test_llama_cpp_limits_are_read_from_props(tmp_path, judge_cfg):
    tr = make_trace("props", 300)
    profile = ServerProfile.llama_cpp(context_tokens=4096, slots=3)
    with OpenAIServer(profile=profile) as srv:
        s = annotate([tr, make_trace("small", 5)], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        sent = chats(srv)
    assert s.concurrency == 3 and s.labeled == 2 and s.context_refusals == 0
    assert not [r for r in sent if r["status"] == 400]  # planned within n_ctx from the start
    recs = read_jsonl(tmp_path / "o.jsonl")
    assert {r["provenance"].get("model_file") for r in recs if r["provenance"]["kind"] == "judge"} == {
        "SmolLM2-135M-Instruct-Q8_0.gguf"}


def test_max_tokens_is_sized_to_the_steps_asked_for(tmp_path, judge_cfg):
    seen = []

    def policy(request):
        from seekbench.testing import default_policy

        seen.append(request["max_tokens"])
        return default_policy(request)

    with OpenAIServer(policy=policy) as srv:
        annotate([make_trace("a", 4), make_trace("b", 31)], judge_cfg, tmp_path / "o.jsonl",
                 cache=tmp_path / "c.sqlite", base_url=srv.base_url, concurrency=1)
        assert len(chats(srv)) == 2
    # 256 + 64 per step with labels: trace a has steps 0-2 (3 labelable), trace b steps 0-29 (30)
    assert seen == [256 + 64 * 3, 256 + 64 * 30]
    assert count_tokens("x") == 1
