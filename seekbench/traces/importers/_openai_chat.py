"""Importer for chat logs, read by their shape: message lists with tool calls in any form.

A record is ``{"messages": [...], "id"?, "agent"/"model"?, "question"?, "gold_answers"
(or "golden_answers" / "ground_truth")?, "dataset"?, "question_id"?, "is_correct"?}`` or a
bare list of messages; one per JSONL line, or the whole file is one JSON document (a record,
a conversation or a list of records). The messages may also be under any other key, be a
``prompt`` + ``completion`` pair, or Responses-API items (:mod:`._chat_records`,
:mod:`._responses_items`). Mapping, in message order: system/developer messages
-> ``metadata["system"]``; the first user message is the question (``metadata["prompt"]``
when the record or ``question=`` gives one), later user messages -> ``other``; assistant
``reasoning_content`` (or ``reasoning``, or ``thinking`` blocks) -> reasoning, ``content`` beside
tool calls -> reasoning; each tool call (every shape of :mod:`._tool_call_shapes`) -> search,
or ``other`` for a tool that does not retrieve (:mod:`._tools`), or the answer for an answer
tool (:mod:`._answer_tools`); ``tool`` = function name, ``query`` from the ``query`` / ``q`` /
``queries`` / ``search_query`` argument (a list is joined with `` | ``), ``url`` from ``url`` /
``urls`` / ``link`` / ``doc_id`` / ``document_id``; each ``tool`` (or ``function``) message,
matched by ``tool_call_id`` (Anthropic ``tool_result`` blocks by ``tool_use_id``), ->
search_result placed right after its call when the call was made in the same model turn, with
documents parsed by :mod:`._documents`; the last assistant message without tool calls -> answer,
``final_answer`` = its last ``<answer>`` block if any, else its content (unless an answer tool
gave the answer). A tool message without ``tool_call_id`` matches the one call of the same turn
still waiting, if there is exactly one; an id no waiting call has is a user error. Tool calls
written as text in the messages are read by :mod:`._chat_text_calls`. A search_result depends
on its call, every other step on the step before it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import cast

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import resolve_answer_tools
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._chat_records import Found, find_messages, has_messages, is_messages, record_key, run_state_agent
from ._chat_steps import (  # noqa: F401  (re-exported: the ATIF, Inspect and OpenTelemetry importers use them)
    StepBuilder,
    content_text,
    extract_answer,
    parse_arguments,
    search_step,
)
from ._chat_text_calls import has_text_calls, prompt_question, tagged_message
from ._fields import HEADER_FIELDS, apply_fields, consumed_fields, get_path, record_fields, record_id
from ._json_documents import _no_constant, import_documents, iter_documents  # noqa: F401  (re-exported)
from ._jsonpath import first
from ._responses_items import as_messages
from ._tagged import boxed, resolve_tags
from ._tool_call_shapes import block_results, block_text, has_blocks, message_calls
from ._tools import record_tool_kinds, resolve_search_tools

FORMAT = "openai_chat"
#: Tool calls written into message text in tags :mod:`._chat_text_calls` does not read (MCP, Llama's ``<function=``).
_CALL_TAGS = re.compile(r"<use_mcp_tool>|<function=", re.IGNORECASE)
_HEAD = re.compile(r'"messages"\s*:\s*\[\s*\{|^\s*\[\s*\{\s*"role"\s*:')


def sniff(path: str, head: str, first: object) -> bool:
    """True for a chat record, a bare conversation, or a list of records."""
    if isinstance(first, dict):
        return _is_record(first)
    if isinstance(first, list):
        return bool(first) and (is_conversation(first) or all(_is_record(r) or is_conversation(r) for r in first))
    return first is None and '"schema_version"' not in head[:2000] and bool(_HEAD.search(head))


def _is_record(obj: object) -> bool:
    return has_messages(obj)


def is_conversation(obj: object) -> bool:
    """True for a list whose first item is a message (a dict with ``role``) or a Responses item."""
    return is_messages(obj)


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    question: str | None = None,
    answer_tag: str | None = "answer",
    question_field: str | None = None,
    answer_field: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each chat record in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        JSONL of records or conversations, or one JSON document.
    agent : str, optional
        The agent when a record names none; default the file's stem (with a note).
    question : str, optional
        The question when a record has no ``question`` field (else the first user message).
    answer_tag : str or None, default "answer"
        Take ``final_answer`` from the last ``<answer_tag>`` block of the answer (else its last
        ``\\boxed{}``); None keeps the content.
    question_field, answer_field : str, optional
        Dotted paths of the question and the gold answers (default: the common keys, :mod:`._fields`).
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).

    Yields
    ------
    ImportedRecord
    """
    yield from import_documents(
        path,
        is_conversation,
        _convert,
        limits=limits,
        agent=agent,
        question=question,
        answer_tag=answer_tag,
        question_field=question_field,
        answer_field=answer_field,
        search_tools=resolve_search_tools(search_tools),
        answer_tools=resolve_answer_tools(answer_tool),
    )


def _convert(
    doc: object,
    *,
    file: str,
    line: int,
    prefix: str,
    agent: str | None,
    question: str | None,
    answer_tag: str | None,
    question_field: str | None = None,
    answer_field: str | None = None,
    search_tools: frozenset[str] | None = None,
    answer_tools: frozenset[str] | None = None,
    field: str | None = None,
    fmt: str = FORMAT,
    spec: list | None = None,
) -> ImportedRecord:
    """One record's trace. ``field`` names the message list (else it is found, :mod:`._chat_records`);
    ``fmt`` and ``spec`` (tags) are the Search-R1 importer's when it reads a message list."""
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    messages: object
    model_path: str | None = None
    used: frozenset[str]
    if isinstance(doc, list):
        rec, messages, mpath, used = {}, doc, prefix, frozenset()
    else:
        doc = expect_type(doc, dict, what="record (an object with messages, or a list of messages)", path=prefix, **ctx)
        rec, messages, mpath, used = doc, None, f"{prefix}.messages", frozenset({"messages"})
        found = (
            Found(cast(list, get_path(doc, field)), f"$.{field}", frozenset({field.split(".")[0]}))
            if field
            else find_messages(doc)
        )
        if found is not None:
            messages, mpath, used, model_path = found.messages, prefix + found.path[1:], found.keys, found.model_path
            if found.path == "$":  # (item, path) pairs with paths from the record: put them under its prefix
                messages = [(m, prefix + at[1:]) for m, at in found.messages]
    rid = record_id(rec, ctx, prefix)
    key = rid if rid is not None else record_key(rec)
    trace_id = key or f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    messages = expect_type(messages, list, what="messages", path=mpath, **ctx)
    fields = record_fields(rec, ctx, prefix, common=True, question_field=question_field, answer_field=answer_field)
    sources = dict(fields["sources"])
    model = get_path(rec, model_path[2:]) if model_path else None
    if fields["agent"] is None and isinstance(model, str) and model_path:  # a stored response's model
        fields["agent"] = model
        sources["agent"] = prefix + model_path[1:]
    who = fields["agent"] or run_state_agent(rec) or agent
    trace = new_trace(
        trace_id=trace_id,
        agent=who or default_agent(file),
        question="",
        fmt=fmt,
        file=file,
        line=line,
        record_id=rid if rid is not None else key,
        path=prefix,
    )
    given = fields["question"] if fields["question"] is not None else question
    id_key = next((k for k in ("id", "task_id", "idx", "sample_id") if rec.get(k) is not None), None)
    if key is not None and id_key is not None:  # ID-trialN when a trial is given
        trial = rec.get("trial") if id_key != "id" else None
        joined = isinstance(trial, int) and not isinstance(trial, bool)
        sources["trace_id"] = f"joined: {prefix}.{id_key}, {prefix}.trial" if joined else f"{prefix}.{id_key}"
    if mpath != prefix or not rec:  # one message list at one path
        sources["messages"] = mpath
    else:  # one conversation joined from several keys (a run state, a stored request + response, prompt + completion)
        sources["messages_from"] = " and ".join(f"{prefix}.{k}" for k in rec if k in used)
    skip = HEADER_FIELDS | consumed_fields(fields) | used  # the keys holding the steps are not metadata
    meta: dict = {k: v for k, v in rec.items() if k not in skip}
    b = StepBuilder(fmt, ctx)
    pairs = as_messages(messages, mpath)
    text_mode = spec is not None or has_text_calls(pairs)
    spec = spec if spec is not None else resolve_tags(None)
    roles = [m.get("role") if isinstance(m, dict) else None for m, _ in pairs]
    last_assistant = max((i for i, r in enumerate(roles) if r == "assistant"), default=-1)
    user_seen = False
    kinds: dict[str, str] = {}
    answered: str | None = None  # the arguments' path of an answer tool's call: a later message is no second answer
    for k, (msg, p) in enumerate(pairs):
        msg = expect_type(msg, dict, what="message", path=p, **ctx)
        role = msg.get("role")
        role = expect_type(role, str, what="role", path=f"{p}.role", **ctx)
        raw = msg.get("content")
        blocks = isinstance(raw, list) and any(has_blocks(raw, t) for t in ("tool_use", "tool_result", "thinking"))
        cpath = _content_path(rec, prefix, p)
        content = block_text(raw)[0] if isinstance(raw, list) and blocks else content_text(raw, ctx, cpath)
        if role in ("system", "developer"):
            meta.setdefault("system", []).append(content)
        elif role == "user" and not user_seen:
            user_seen = True
            if given is None:
                given = content or ""
                sources["question"] = cpath
                found_q = prompt_question(given) if text_mode else None
                if found_q is not None:
                    meta["prompt_preamble"] = given
                    given = found_q[0]
                    sources["question"] = f"{sources['question']}[{found_q[1]}:{found_q[2]}]"
            elif not text_mode:
                meta["prompt"] = content
            elif (content or "").strip() != given.strip():  # instructions around the question
                meta["prompt_preamble"] = content
        elif text_mode and isinstance(content, str):
            answer = tagged_message(
                b,
                content,
                role if role in ("assistant", "tool") else "user",
                p,
                ctx,
                spec=spec,
                fmt=fmt,
                search_tools=search_tools,
                answer_tools=answer_tools,
                final=k == last_assistant,
                kinds=kinds,
            )
            if answer is not None:
                trace["final_answer"] = answer
        elif role == "assistant":
            continues = k > 0 and roles[k - 1] == "assistant"  # one model turn (Responses items, split messages)
            answer, called = _assistant(
                b, msg, content, (p, cpath), ctx, final=k == last_assistant and not answered, answer_tag=answer_tag,
                kinds=kinds, search_tools=search_tools, answer_tools=answer_tools, continues=continues,
            )  # fmt: skip
            if answer is not None:
                trace["final_answer"] = answer
            answered = called or answered
        elif role in ("tool", "function"):
            if not b.add_result(content, msg.get("tool_call_id"), p, f"{p}.tool_call_id"):
                raise UserInputError(
                    "tool message has no tool_call_id and no single call is waiting for a result; add tool_call_id",
                    path=f"{p}.tool_call_id",
                    **ctx,
                )
        elif isinstance(raw, list) and has_blocks(raw, "tool_result"):
            for r in block_results(raw, p, ctx):
                if not b.add_result(r.text, r.call_id, r.path, r.id_path):
                    raise UserInputError(
                        "tool_result block has no tool_use_id and no single call is waiting for a result; "
                        "add tool_use_id",
                        path=r.id_path,
                        **ctx,
                    )
            if content and content.strip():
                b.add({"kind": "other", "text": content, "original_kind": role}, cpath)
        else:
            b.add({"kind": "other", "text": content, "original_kind": role}, p)
    trace["question"] = given or ""
    apply_fields(trace, fields)
    trace["steps"] = b.finish()
    answers = [s for s in trace["steps"] if s["kind"] == "answer"]
    if answers:
        last = answers[-1]
        sources["final_answer"] = answered if answered and last.get("tool") is not None else last["source_ref"]["path"]
        if (
            not text_mode
            and last.get("tool") is None
            and answer_tag
            and trace["final_answer"]
            and f"<{answer_tag.lower()}>" not in last["text"].lower()
        ):
            trace["final_answer"] = boxed(trace["final_answer"]) or trace["final_answer"]  # MiroFlow, ReCall
    if meta:
        trace["metadata"] = meta
    record_tool_kinds(trace, kinds)
    warnings = []
    # roles was built from pairs, one role per message (a role only for a dict), so the lengths are equal
    if not kinds and any(
        r == "assistant"
        and isinstance(m, dict)
        and isinstance(m.get("content"), str)
        and _CALL_TAGS.search(m["content"])
        for (m, _), r in zip(pairs, roles, strict=True)
    ):
        warnings.append(
            f"{file}:{line}: trace {ctx['trace_id']}: assistant messages hold tool-call tags seekbench does "
            "not read (<use_mcp_tool>, <function=...>); map the calls with a mapping file or convert the text "
            "with --format search_r1 --field FIELD --tags tool_call=TAG"
        )
    return ImportedRecord(
        line, trace=trace, sources=sources, warnings=warnings, notes=[] if who else [agent_note(file)]
    )


def _assistant(
    b: StepBuilder,
    msg: dict,
    content: str | None,
    paths: tuple[str, str],
    ctx: RecordContext,
    *,
    final: bool,
    answer_tag: str | None,
    kinds: dict,
    search_tools: frozenset[str] | None,
    answer_tools: frozenset[str] | None,
    continues: bool,
) -> tuple[str | None, str | None]:
    """One assistant message's steps; returns ``(final answer or None, the arguments' path of its answer tool's
    call or None)``. ``paths`` are the message's path and that of its text (:func:`_content_path`)."""
    p, cpath = paths
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
            search_tools=search_tools,
            answer_tools=answer_tools,
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
        reasoning, content, ("content", where), calls, final=final, answer_tag=answer_tag, continues=continues
    )
    return (answer if answer is not None else said), answer_path


def _content_path(rec: dict, prefix: str, p: str) -> str:
    """Where the text of the message at ``p`` sits: ``p`` itself when the record holds a string there (a
    string prompt, a run state's or stored request's string input, made a message by the reader), else its
    ``content``."""
    hit = first(rec, "$" + p[len(prefix) :]) if rec and p.startswith(prefix) else None
    return p if hit is not None and isinstance(hit[1], str) else f"{p}.content"
