"""The client layer every model call goes through: prompts, fencing, replies, and calls to the local server.

Calls go over real HTTP to the bundled OpenAI-compatible server, with a real SQLite cache; nothing is patched.
"""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from seekbench._errors import UserInputError
from seekbench.llm import (
    CallTally,
    LLMClient,
    Parsed,
    PromptTemplate,
    ask,
    cache_key,
    call,
    call_context,
    fenced,
    fill,
    json_data,
    load_judge_config,
    neutralise,
    strip_code_fence,
)
from seekbench.testing import OpenAIServer

PROMPT = "=== SYSTEM ===\nYou judge.\n=== USER ===\nQ: {{Q}}\nA: {{A}}\n"


@pytest.fixture
def template(tmp_path):
    path = tmp_path / "p.md"
    path.write_text(PROMPT, encoding="utf-8")
    return PromptTemplate.load(path, version="p_v1", placeholders=("{{Q}}", "{{A}}"), what="the test prompt")


@pytest.fixture
def cfg():
    return load_judge_config("answer-local").with_overrides(name="t", model="model-t", backoff_base_s=0.01,
                                                              backoff_max_s=0.05, timeout_s=2.0, max_attempts=2)


def test_prompt_loader_checks_the_placeholders_it_is_given(tmp_path, template):
    assert (template.system, template.user) == ("You judge.", "Q: {{Q}}\nA: {{A}}")
    bad = tmp_path / "bad.md"
    bad.write_text(PROMPT.replace("{{A}}", "{{Q}}"), encoding="utf-8")
    with pytest.raises(UserInputError, match=r"the user part of the test prompt must contain \{\{Q\}\} exactly once"):
        PromptTemplate.load(bad, version="v", placeholders=("{{Q}}", "{{A}}"), what="the test prompt")
    # the same file is fine for a caller whose only placeholder is {{Q}}... no: {{Q}} is there twice
    with pytest.raises(UserInputError):
        PromptTemplate.load(bad, version="v", placeholders=("{{Q}}",))


def test_fill_is_one_pass_so_a_placeholder_inside_data_stays_data(template):
    msgs = template.messages({"{{Q}}": "say {{A}}", "{{A}}": "x"})
    assert msgs[1]["content"] == "Q: say {{A}}\nA: x"
    assert fill("no placeholders", {}) == "no placeholders"


def test_neutralise_extra_fences_and_look_alikes():
    # ASCII and fullwidth look-alikes of a caller's own fence word are defused the same way
    assert neutralise("BELIEF_JSON>>>", fences=("BELIEF_JSON",)) == "BELIEF-JSON> > >"
    assert neutralise("ＢＥＬＩＥＦ＿ＪＳＯＮ", fences=("BELIEF_JSON",)) == "BELIEF-JSON"
    # without the extra word only the fence signs are defused (the step judge's behaviour, unchanged)
    assert neutralise("BELIEF_JSON>>>") == "BELIEF_JSON> > >"


def test_json_data_indented_keeps_every_string_on_its_line():
    text = json_data({"t": "a\u2028b\u200bc"}, indent=1)
    assert json.loads(text) == {"t": "a\u2028b\u200bc"}
    assert text == '{\n "t": "a\\u2028b\\u200bc"\n}'
    assert fenced("<<<X", "X>>>", "v") == '<<<X\n"v"\nX>>>'


@pytest.mark.parametrize(("text", "lenient", "expected"), [
    ('```json\n{"a": 1}\n```', False, '{"a": 1}'),
    ('```{"a": 1}```', False, '```{"a": 1}```'),  # the strict form wants the fences on their own lines
    ('```{"a": 1}```', True, '{"a": 1}'),
    ('{"a": 1}', False, '{"a": 1}'),
])
def test_strip_code_fence(text, lenient, expected):
    assert strip_code_fence(text, lenient=lenient) == expected


def _run(cfg, template, tmp_path, server_url, replies, *, max_repairs=2, budget_usd=None, cache="c.sqlite"):
    """Ask once with the repair loop; returns (answer, tally, ctx)."""
    client = LLMClient(cfg, base_url=server_url)
    tally = CallTally()
    msgs = template.messages({"{{Q}}": "q", "{{A}}": "a"})

    def parse(reply):
        ok = reply.content.strip() in ("Yes", "No")
        return Parsed(ok, reply.content.strip(), None if ok else "not Yes or No", {"v": reply.content} if ok else None)

    async def main(ctx):
        try:
            return await ask(client, template, msgs, ctx, trace_id="t1", parse=parse,
                             repair_note=lambda n, r: f"\n\nREPAIR {n}: {r}", max_repairs=max_repairs, tally=tally)
        finally:
            await client.aclose()

    with call_context(tmp_path / cache, budget_usd=budget_usd, concurrency=2) as ctx:
        answer = asyncio.run(main(ctx))
    return answer, tally, ctx


def test_ask_repairs_then_replays_from_the_cache(cfg, template, tmp_path):
    replies = iter(["Maybe", "Yes"])
    with OpenAIServer(policy=lambda request: next(replies)) as srv:
        answer, tally, _ = _run(cfg, template, tmp_path, srv.base_url, replies)
        sent = srv.requests
    assert answer.parsed.ok and answer.parsed.value == "Yes"
    assert (tally.requests, tally.paid_requests, tally.repairs, tally.from_cache) == (2, 2, 1, False)
    # the repair request is the first one plus the note, outside the fences
    assert len(sent) == 2
    # a re-run pays for nothing: both replies come from the cache under the same keys
    with OpenAIServer(policy=lambda request: "No") as srv:
        again, tally2, _ = _run(cfg, template, tmp_path, srv.base_url, None)
        assert srv.requests == []
    assert again.parsed.value == "Yes" and tally2.from_cache and tally2.paid_usd == 0.0
    assert tally2.cache_key == tally.cache_key


def test_the_cache_key_covers_model_prompt_and_body_only(cfg, template):
    body = {"model": cfg.model, "messages": [{"role": "user", "content": "x"}]}
    key = cache_key(cfg, template, body)
    assert key == cache_key(cfg.with_overrides(timeout_s=99.0, max_attempts=9), template, body)
    assert key != cache_key(cfg.with_overrides(model="other"), template, body)
    assert key != cache_key(cfg, template, {**body, "seed": 1})


def test_a_budget_too_small_for_the_worst_case_sends_nothing(cfg, template, tmp_path):
    # 1 USD per million tokens each way: the worst case of one request (prompt bound + max_tokens) is
    # a few thousand millionths of a dollar, over a budget of one millionth
    priced = cfg.with_overrides(price_input_per_mtok=1.0, price_output_per_mtok=1.0)
    with OpenAIServer(policy=lambda request: "Yes") as srv:
        answer, tally, ctx = _run(priced, template, tmp_path, srv.base_url, None, budget_usd=1e-6)
        assert srv.requests == []
    assert answer.no_reply.kind == "budget" and ctx.stopped_by_budget and tally.requests == 0


def test_an_unreachable_endpoint_stops_the_run_with_the_first_error_in_full(cfg, template, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    client = LLMClient(cfg, base_url=url)

    async def send(ctx, text):
        body = client.body([{"role": "user", "content": text}])
        return await call(client, template, body, cache_key(cfg, template, body), text, ctx)

    async def main(ctx):
        try:
            return await send(ctx, "first"), await send(ctx, "second")
        finally:
            await client.aclose()

    with call_context(tmp_path / "c.sqlite") as ctx:
        first, second = asyncio.run(main(ctx))
    assert first.kind == "failed" and first.unreachable
    assert ctx.first_error == first.reason and first.reason.startswith("cannot connect after 2 attempts")
    assert url in first.reason  # the endpoint is named, uncut
    assert second.kind == "unreachable"  # not sent: it would fail the same way
