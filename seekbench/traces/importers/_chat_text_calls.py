"""Tool calls written as text inside chat turns: ``<tool_call>`` JSON, and the Search-R1 tag sets.

Qwen-Agent-based web agents (WebSailor, WebDancer, Tongyi DeepResearch) keep a chat log whose
assistant messages hold ``<think>`` and ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``
as text and whose next user (or tool) message holds ``<tool_response>...</tool_response>``; Search-R1
style agents logged as chats write ``<search>``, ``<information>`` and ``<answer>`` the same way.
A conversation is read this way when an assistant message's text holds a call tag and no message
carries a structured call. Each message's text is split by :mod:`._tagged`: calls wait for the
next result block, which answers the oldest waiting call (the text carries no call ids); the last
``<answer>`` gives ``final_answer``, and a final message with neither an answer nor a call is the
answer. The question is the user's question: the line after the first user message's last
``Question:``, else its text after a last ``User:`` line (the tool instructions before it), the
whole message being kept in ``metadata["prompt_preamble"]``.
"""

from __future__ import annotations

import re

from ._answer_tools import answer_call
from ._base import RecordContext
from ._chat_steps import StepBuilder
from ._tagged import QUESTION_LINE, TaggedSteps, boxed

#: Call tags this module reads out of message text.
TEXT_CALL = re.compile(r"<tool_call>|<search>|<\|begin_of_query\|>", re.IGNORECASE)
_USER_LINE = re.compile(r"(?:^|\n)[ \t]*User:[ \t]*")


def has_text_calls(pairs: list[tuple[object, str]]) -> bool:
    """True when an assistant message's text holds a call tag and no message carries a structured call."""
    tagged = False
    for msg, _ in pairs:
        if not isinstance(msg, dict):
            continue
        if msg.get("tool_calls") or msg.get("function_call") or msg.get("tool_call_id") is not None:
            return False  # structured calls or results: read as such
        content = msg.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
            return False
        tagged = tagged or (
            msg.get("role") == "assistant" and isinstance(content, str) and bool(TEXT_CALL.search(content))
        )
    return tagged


def prompt_question(content: str) -> tuple[str, int, int] | None:
    """``(question, start, end)`` of a prompt: the line after its last ``Question:``, else the text after a
    last ``User:`` line that instructions precede (WebSailor's prompt ends in ``User: {question}``); None
    without either."""
    found = list(QUESTION_LINE.finditer(content))
    if found and found[-1].group(1).strip():
        start, end = found[-1].span(1)
    else:
        marks = list(_USER_LINE.finditer(content))
        if not marks or not content[: marks[-1].start()].strip():
            return None
        start, end = marks[-1].end(), len(content)
    body = content[start:end]
    start += len(body) - len(body.lstrip())
    q = body.strip()
    return (q, start, start + len(q)) if q else None


def tagged_message(
    b: StepBuilder,
    content: str,
    role: str,
    p: str,
    ctx: RecordContext,
    *,
    spec: list,
    fmt: str,
    search_tools: frozenset[str] | None,
    answer_tools: frozenset[str] | None,
    final: bool,
    kinds: dict[str, str],
) -> str | None:
    """Add the steps of one message's tagged text to ``b``; returns the answer it gives, or None."""
    if role == "tool" and any(o.lower() in content.lower() for k, o, _ in spec if k == "search_result"):
        role = "user"  # the result is in its tags: the text around them (newlines) is no second result
    ts = TaggedSteps(content, spec, ctx, f"{p}.content", fmt=fmt, search_tools=search_tools)
    ts.add_segment(role, 0, len(content))
    steps = ts.finish()
    kinds.update(ts.tool_kinds)
    if role == "assistant":
        b.new_turn()
    answer = ts.final_answer
    calls = [s for s in steps if s.get("tool") is not None]
    if role == "assistant" and final and answer is None and not calls:
        texts = [s for s in steps if s["kind"] == "reasoning" and s["original_kind"] == "text"]
        if texts:  # the final message, neither answering in tags nor calling: its text is the answer
            texts[-1]["kind"] = "answer"
            answer = boxed(texts[-1]["text"]) or texts[-1]["text"]
    for s in steps:
        path = s["source_ref"]["path"]
        for key in ("index", "depends_on", "source_ref"):
            del s[key]
        given = answer_call(s, answer_tools)
        if given is not None:
            kinds[s["tool"]], answer = "answer", given
        if s["kind"] == "search_result" and b.add_oldest_result(s, path):
            continue
        b.add(s, path, is_call=s.get("tool") is not None)
    return answer
