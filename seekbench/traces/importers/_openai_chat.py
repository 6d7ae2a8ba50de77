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
from typing import NamedTuple, cast

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
from ._chat_text_calls import has_text_calls
from ._chat_walk import ChatReading, walk_messages
from ._fields import HEADER_FIELDS, apply_fields, consumed_fields, get_path, record_fields, record_id
from ._json_documents import _no_constant, import_documents, iter_documents  # noqa: F401  (re-exported)
from ._responses_items import as_messages
from ._tagged import boxed, resolve_tags
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
    found = _locate(doc, prefix, field, ctx)
    rec, mpath = found.rec, found.path
    rid = record_id(rec, ctx, prefix)
    key = rid if rid is not None else record_key(rec)
    trace_id = key or f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    messages = expect_type(found.messages, list, what="messages", path=mpath, **ctx)
    fields = record_fields(rec, ctx, prefix, common=True, question_field=question_field, answer_field=answer_field)
    sources = dict(fields["sources"])
    model = get_path(rec, found.model_path[2:]) if found.model_path else None
    if fields["agent"] is None and isinstance(model, str) and found.model_path:  # a stored response's model
        fields["agent"] = model
        sources["agent"] = prefix + found.model_path[1:]
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
    _id_and_message_sources(sources, found, key, prefix)
    skip = HEADER_FIELDS | consumed_fields(fields) | found.keys  # the keys holding the steps are not metadata
    meta: dict = {k: v for k, v in rec.items() if k not in skip}
    pairs = as_messages(messages, mpath)
    text_mode = spec is not None or has_text_calls(pairs)
    reading = ChatReading(
        fmt, spec if spec is not None else resolve_tags(None), text_mode, answer_tag, search_tools, answer_tools
    )
    b = StepBuilder(fmt, ctx)
    given = fields["question"] if fields["question"] is not None else question
    walked = walk_messages(b, pairs, rec, prefix, reading, question=given, meta=meta, sources=sources)
    if walked.final_answer is not None:
        trace["final_answer"] = walked.final_answer
    trace["question"] = walked.question or ""
    apply_fields(trace, fields)
    trace["steps"] = b.finish()
    _final_answer(trace, sources, walked.answered, reading)
    if meta:
        trace["metadata"] = meta
    record_tool_kinds(trace, walked.kinds)
    warnings = [] if walked.kinds else _unread_call_tags(pairs, ctx)
    return ImportedRecord(
        line, trace=trace, sources=sources, warnings=warnings, notes=[] if who else [agent_note(file)]
    )


class _Located(NamedTuple):
    """A record (``{}`` for a bare message list) and where its conversation is: ``messages`` (a list, or
    ``(item, path)`` pairs), the list's ``path``, the record ``keys`` holding it, a model name's path or None."""

    rec: dict
    messages: object
    path: str
    keys: frozenset[str]
    model_path: str | None


def _locate(doc: object, prefix: str, field: str | None, ctx: RecordContext) -> _Located:
    """The record ``doc`` (at ``prefix``) and its conversation: at ``field`` when given, else found by shape
    (:func:`._chat_records.find_messages`), else its ``messages`` (whose absence the caller reports)."""
    if isinstance(doc, list):
        return _Located({}, doc, prefix, frozenset(), None)
    doc = expect_type(doc, dict, what="record (an object with messages, or a list of messages)", path=prefix, **ctx)
    found = (
        Found(cast(list, get_path(doc, field)), f"$.{field}", frozenset({field.split(".")[0]}))
        if field
        else find_messages(doc)
    )
    if found is None:
        return _Located(doc, None, f"{prefix}.messages", frozenset({"messages"}), None)
    messages: object = found.messages
    if found.path == "$":  # (item, path) pairs with paths from the record: put them under its prefix
        messages = [(m, prefix + at[1:]) for m, at in found.messages]
    return _Located(doc, messages, prefix + found.path[1:], found.keys, found.model_path)


def _id_and_message_sources(sources: dict, found: _Located, key: str | None, prefix: str) -> None:
    """Add to ``sources`` the field(s) the trace id came from and where the messages are."""
    rec = found.rec
    id_key = next((k for k in ("id", "task_id", "idx", "sample_id") if rec.get(k) is not None), None)
    if key is not None and id_key is not None:  # ID-trialN when a trial is given
        trial = rec.get("trial") if id_key != "id" else None
        joined = isinstance(trial, int) and not isinstance(trial, bool)
        sources["trace_id"] = f"joined: {prefix}.{id_key}, {prefix}.trial" if joined else f"{prefix}.{id_key}"
    if found.path != prefix or not rec:  # one message list at one path
        sources["messages"] = found.path
    else:  # one conversation joined from several keys (a run state, a stored request + response, prompt + completion)
        sources["messages_from"] = " and ".join(f"{prefix}.{k}" for k in rec if k in found.keys)


def _final_answer(trace: dict, sources: dict, answered: str | None, reading: ChatReading) -> None:
    """Where the final answer came from (an answer tool's arguments, else the answer step); a structured
    chat's answer without the answer tag gives its ``\\boxed{}`` content (MiroFlow, ReCall)."""
    answers = [s for s in trace["steps"] if s["kind"] == "answer"]
    if not answers:
        return
    last, tag = answers[-1], reading.answer_tag
    sources["final_answer"] = answered if answered and last.get("tool") is not None else last["source_ref"]["path"]
    if (
        not reading.text_mode
        and last.get("tool") is None
        and tag
        and trace["final_answer"]
        and f"<{tag.lower()}>" not in last["text"].lower()
    ):
        trace["final_answer"] = boxed(trace["final_answer"]) or trace["final_answer"]


def _unread_call_tags(pairs: list[tuple[object, str]], ctx: RecordContext) -> list[str]:
    """A warning when assistant messages hold tool-call tags no reader here knows (a trace with no tool call)."""
    if not any(
        isinstance(m, dict)
        and m.get("role") == "assistant"
        and isinstance(m.get("content"), str)
        and _CALL_TAGS.search(m["content"])
        for m, _ in pairs
    ):
        return []
    return [
        f"{ctx['file']}:{ctx['line']}: trace {ctx['trace_id']}: assistant messages hold tool-call tags seekbench "
        "does not read (<use_mcp_tool>, <function=...>); map the calls with a mapping file or convert the text "
        "with --format search_r1 --field FIELD --tags tool_call=TAG"
    ]
