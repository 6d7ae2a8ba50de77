"""One chat record's messages walked, in order, into steps: the middle of the chat importer's conversion.

The mapping is the one :mod:`._openai_chat` describes. Per message: a system or developer message
is kept in ``metadata["system"]``; the first user message gives the question when the record names
none (in text mode the question inside the prompt, the rest kept as ``prompt_preamble``), else it
is kept as ``prompt`` (``prompt_preamble`` in text mode); in text mode (tool calls written as tags,
:mod:`._chat_text_calls`) any other message with text is read by its tags; otherwise an assistant
message gives its reasoning, tool calls and text (:func:`assistant_turn`), a tool message or
``tool_result`` blocks the results of the calls waiting, and any other message an ``other`` step.
"""

from __future__ import annotations

from typing import NamedTuple

from ..._errors import UserInputError
from ._base import expect_type
from ._chat_steps import StepBuilder, content_text, search_step
from ._chat_text_calls import prompt_question, tagged_message
from ._jsonpath import first
from ._tool_call_shapes import block_results, block_text, has_blocks, message_calls


class ChatReading(NamedTuple):
    """How every message of a record is read."""

    fmt: str  # the format each step's source_ref names
    spec: list  # the tags of tool calls written in the text (:func:`._tagged.resolve_tags`)
    text_mode: bool  # the tool calls are tags in the text, not structured calls
    answer_tag: str | None
    search_tools: frozenset[str] | None
    answer_tools: frozenset[str] | None


class Walked(NamedTuple):
    """What the messages give besides the steps added to the builder."""

    question: str | None  # the record's question, else the first user message's
    final_answer: str | None  # the last answer a message gave; None when none did
    answered: str | None  # the arguments' path of an answer tool's call, or None
    kinds: dict[str, str]  # each tool's kind (search, answer, other)


def walk_messages(
    b: StepBuilder,
    pairs: list[tuple[object, str]],
    rec: dict,
    prefix: str,
    reading: ChatReading,
    *,
    question: str | None,
    meta: dict,
    sources: dict,
) -> Walked:
    """Add the steps of the ``(message, path)`` pairs of ``rec`` (at ``prefix``) to ``b``.

    ``question`` is the record's (None: the first user message gives it); ``meta`` and ``sources``
    (the trace's metadata and the field sources) get the system prompts, the prompt and where the
    question came from.
    """
    ctx = b.ctx
    roles = [m.get("role") if isinstance(m, dict) else None for m, _ in pairs]
    last_assistant = max((i for i, r in enumerate(roles) if r == "assistant"), default=-1)
    user_seen = False
    kinds: dict[str, str] = {}
    final_answer: str | None = None
    answered: str | None = None  # the arguments' path of an answer tool's call: a later message is no second answer
    for k, (msg, p) in enumerate(pairs):
        msg = expect_type(msg, dict, what="message", path=p, **ctx)
        role = msg.get("role")
        role = expect_type(role, str, what="role", path=f"{p}.role", **ctx)
        raw = msg.get("content")
        blocks = isinstance(raw, list) and any(has_blocks(raw, t) for t in ("tool_use", "tool_result", "thinking"))
        cpath = content_path(rec, prefix, p)
        content = block_text(raw)[0] if isinstance(raw, list) and blocks else content_text(raw, ctx, cpath)
        answer = None
        if role in ("system", "developer"):
            meta.setdefault("system", []).append(content)
        elif role == "user" and not user_seen:
            user_seen = True
            question = _first_user(content, cpath, question, reading.text_mode, meta, sources)
        elif reading.text_mode and isinstance(content, str):
            answer = tagged_message(
                b,
                content,
                role if role in ("assistant", "tool") else "user",
                p,
                ctx,
                spec=reading.spec,
                fmt=reading.fmt,
                search_tools=reading.search_tools,
                answer_tools=reading.answer_tools,
                final=k == last_assistant,
                kinds=kinds,
            )
        elif role == "assistant":
            continues = k > 0 and roles[k - 1] == "assistant"  # one model turn (Responses items, split messages)
            final = k == last_assistant and not answered
            answer, called = assistant_turn(
                b, msg, content, (p, cpath), reading, final=final, kinds=kinds, continues=continues
            )
            answered = called or answered
        elif role in ("tool", "function"):
            if not b.add_result(content, msg.get("tool_call_id"), p, f"{p}.tool_call_id"):
                raise UserInputError(
                    "tool message has no tool_call_id and no single call is waiting for a result; add tool_call_id",
                    path=f"{p}.tool_call_id",
                    **ctx,
                )
        elif isinstance(raw, list) and has_blocks(raw, "tool_result"):
            _tool_result_blocks(b, raw, p)
            if content and content.strip():
                b.add({"kind": "other", "text": content, "original_kind": role}, cpath)
        else:
            b.add({"kind": "other", "text": content, "original_kind": role}, p)
        if answer is not None:
            final_answer = answer
    return Walked(question, final_answer, answered, kinds)


def _first_user(
    content: str | None, cpath: str, question: str | None, text_mode: bool, meta: dict, sources: dict
) -> str:
    """The question after the first user message: the record's, else this message's text (in text mode the
    question found inside it, the rest its ``prompt_preamble``); the prompt is kept in ``meta``."""
    if question is None:
        question = content or ""
        sources["question"] = cpath
        found = prompt_question(question) if text_mode else None
        if found is not None:
            meta["prompt_preamble"] = question
            question = found[0]
            sources["question"] = f"{sources['question']}[{found[1]}:{found[2]}]"
    elif not text_mode:
        meta["prompt"] = content
    elif (content or "").strip() != question.strip():  # instructions around the question
        meta["prompt_preamble"] = content
    return question


def _tool_result_blocks(b: StepBuilder, raw: list, p: str) -> None:
    """The results of Anthropic ``tool_result`` blocks, each matched to its call by ``tool_use_id``."""
    for r in block_results(raw, p, b.ctx):
        if not b.add_result(r.text, r.call_id, r.path, r.id_path):
            raise UserInputError(
                "tool_result block has no tool_use_id and no single call is waiting for a result; add tool_use_id",
                path=r.id_path,
                **b.ctx,
            )


def assistant_turn(
    b: StepBuilder,
    msg: dict,
    content: str | None,
    paths: tuple[str, str],
    reading: ChatReading,
    *,
    final: bool,
    kinds: dict,
    continues: bool,
) -> tuple[str | None, str | None]:
    """One assistant message's steps; returns ``(final answer or None, the arguments' path of its answer tool's
    call or None)``. ``paths`` are the message's path and that of its text (:func:`content_path`)."""
    p, cpath = paths
    ctx = b.ctx
    reasoning = None
    for key in ("reasoning_content", "reasoning"):
        if msg.get(key) is not None:
            expect_type(msg[key], str, what=key, path=f"{p}.{key}", **ctx)
            reasoning = (msg[key], key, f"{p}.{key}")
            break
    raw = msg.get("content")
    if reasoning is None and isinstance(raw, list) and has_blocks(raw, "thinking"):
        thinking = block_text(raw)[1]
        at = next(i for i, x in enumerate(raw) if isinstance(x, dict) and x.get("type") == "thinking")
        reasoning = (thinking or "", "thinking", f"{p}.content[{at}]")
    calls: list[tuple[dict, str, str | None]] = []
    answer = answer_path = None
    for c in message_calls(msg, p, ctx):
        step = search_step(
            c.name,
            c.args,
            ctx,
            c.name_path,
            c.args_path,
            classify=True,
            search_tools=reading.search_tools,
            answer_tools=reading.answer_tools,
        )
        kinds[step["tool"]] = step["kind"]
        if step["kind"] == "answer":
            answer, answer_path = step["text"], c.args_path
        calls.append(({**step, "original_kind": c.original_kind}, c.path, c.call_id))
    texts = (
        [i for i, x in enumerate(raw) if isinstance(x, dict) and x.get("type") == "text"]
        if isinstance(raw, list)
        else []
    )
    where = f"{p}.content[{texts[0]}]" if len(texts) == 1 and has_blocks(raw, "tool_use") else cpath
    said = b.model_turn(
        reasoning, content, ("content", where), calls, final=final, answer_tag=reading.answer_tag, continues=continues
    )
    return (answer if answer is not None else said), answer_path


def content_path(rec: dict, prefix: str, p: str) -> str:
    """Where the text of the message at ``p`` sits: ``p`` itself when the record holds a string there (a
    string prompt, a run state's or stored request's string input, made a message by the reader), else its
    ``content``."""
    hit = first(rec, "$" + p[len(prefix) :]) if rec and p.startswith(prefix) else None
    return p if hit is not None and isinstance(hit[1], str) else f"{p}.content"
