"""Importer for OpenAI Chat Completions message lists (tool calling).

A record is ``{"messages": [...], "id"?, "agent"/"model"?, "question"?, "gold_answers"
(or "golden_answers" / "ground_truth")?, "dataset"?, "question_id"?, "is_correct"?}`` or a
bare list of messages; one per JSONL line, or the whole file is one JSON document (a record,
a conversation or a list of records). Mapping, in message order: system/developer messages
-> ``metadata["system"]``; the first user message is the question (``metadata["prompt"]``
when the record or ``question=`` gives one), later user messages -> ``other``; assistant
``reasoning_content`` (or ``reasoning``) -> reasoning, ``content`` beside tool calls ->
reasoning; each ``tool_calls[i]`` (or legacy ``function_call``) -> search, ``tool`` = function
name, ``query`` from the ``query`` / ``q`` / ``queries`` / ``search_query`` argument (a list is
joined with `` | ``), ``url`` from ``url`` / ``urls`` / ``link`` / ``doc_id`` / ``document_id``;
each ``tool`` (or ``function``) message, matched by ``tool_call_id``, -> search_result placed
right after its call, with documents from a JSON list of ``{title, text|content|snippet, url,
id, score}`` (bare or under ``results`` / ``documents`` / ``docs`` / ``organic`` / ``items`` /
``data``), else ``Doc i(Title: t)`` passages, else one document holding the text; the last
assistant message, without tool calls -> answer, ``final_answer`` = its last ``<answer>``
block if any, else its content. A tool message without ``tool_call_id`` matches the one call
of the same turn still waiting, if there is exactly one; an id no waiting call has is a user
error. A search_result depends on its call, every other step on the step before it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator

from ..._errors import UserInputError
from ..._io import NonFiniteNumber, loads, nonfinite_path
from ..._limits import ReadLimits
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._chat_records import (
    as_messages,
    find_messages,
    has_messages,
    is_messages,
    record_key,
    run_state_agent,
)
from ._documents import parse_tool_output
from ._fields import (
    HEADER_FIELDS,
    apply_fields,
    consumed_fields,
    record_fields,
    record_id,
)
from ._json_documents import _no_constant, import_documents, iter_documents  # noqa: F401  (re-exported)
from ._tagged import boxed
from ._tools import (
    QUERY_KEYS,
    URL_KEYS,
    is_search_tool,
    record_tool_kinds,
    resolve_search_tools,
)

FORMAT = "openai_chat"
#: Tool calls written into message text (Qwen / Hermes tags, Search-R1 tags, MCP tags): not read as calls here.
_CALL_TAGS = re.compile(r"<tool_call>|<search>|<use_mcp_tool>|<function=", re.IGNORECASE)
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
    )


def content_text(value: object, ctx: RecordContext, path: str) -> str | None:
    """Message content as text: a string, or a list of content parts (non-text parts become ``[type]``)."""
    if value is None or isinstance(value, str):
        return value
    value = expect_type(value, list, what="content", path=path, **ctx)
    for i, part in enumerate(value):
        expect_type(part, (str, dict), what="content part", path=f"{path}[{i}]", **ctx)
    return "\n".join(
        p if isinstance(p, str) else p["text"] if isinstance(p.get("text"), str) else f"[{p.get('type', 'part')}]"
        for p in value
    )


def parse_arguments(raw: object, ctx: RecordContext, path: str) -> dict:
    """Tool-call arguments as an object: a JSON-encoded string, an object, or empty."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, dict):
        return raw
    raw = expect_type(raw, str, what="tool-call arguments", path=path, **ctx)
    try:
        value = loads(raw)
    except NonFiniteNumber as e:
        raise UserInputError(
            f"{e} in tool-call arguments: seekbench cannot hold it; write a finite number",
            path=nonfinite_path(raw, path),
            **ctx,
        ) from e
    except (ValueError, RecursionError) as e:
        detail = (
            f" (column {e.colno}): {e.msg}"
            if isinstance(e, json.JSONDecodeError)
            else ": nested too deeply to read"
            if isinstance(e, RecursionError)
            else f": {e}"
        )
        raise UserInputError(
            f"invalid JSON in tool-call arguments{detail}; arguments must be a JSON object encoded as a string",
            path=path,
            **ctx,
        ) from e
    value = expect_type(value, dict, what="tool-call arguments (decoded)", path=path, **ctx)
    return value


def _text_arg(args: dict, keys: tuple[str, ...], ctx: RecordContext, path: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            for i, v in enumerate(value):
                expect_type(v, str, what=key, path=f"{path}.{key}[{i}]", **ctx)
            return " | ".join(value)
        value = expect_type(value, str, what=key, path=f"{path}.{key}", **ctx)
        return value
    return None


def search_step(
    name: object,
    raw_args: object,
    ctx: RecordContext,
    path: str,
    args_path: str,
    *,
    classify: bool = False,
    search_tools: frozenset[str] | None = None,
) -> dict:
    """A search step from a tool name and its arguments (query, url and raw text filled). With ``classify``
    a tool that does not retrieve (:mod:`._tools`) gives an ``other`` step keeping its name and arguments."""
    name = expect_type(name, str, what="function name", path=path, **ctx)
    args = parse_arguments(raw_args, ctx, args_path)
    text = raw_args if isinstance(raw_args, str) or raw_args is None else json.dumps(raw_args, ensure_ascii=False)
    if classify and not is_search_tool(name, search_tools):
        return {"kind": "other", "tool": name, "text": text}
    step = {"kind": "search", "tool": name, "text": text, "query": _text_arg(args, QUERY_KEYS, ctx, args_path)}
    url = _text_arg(args, URL_KEYS, ctx, args_path)
    if url is not None:
        step["url"] = url
    return step


def extract_answer(content: str, tag: str | None) -> str:
    """The last ``<tag>...</tag>`` block of ``content`` (an unclosed last tag runs to the end), else the content."""
    if tag:
        closed = re.findall(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", content, re.DOTALL | re.IGNORECASE)
        opened = [m.end() for m in re.finditer(rf"<{re.escape(tag)}>", content, re.IGNORECASE)]
        if opened and f"</{tag.lower()}>" not in content[opened[-1] :].lower():
            return content[opened[-1] :].strip()
        if closed:
            return closed[-1].strip()
    return content.strip()


class StepBuilder:
    """Collects steps in order, places each result right after its call, and numbers them at the end."""

    def __init__(self, fmt: str, ctx: RecordContext) -> None:
        self.fmt, self.ctx = fmt, ctx
        self.steps: list[dict] = []
        self.pending: list[tuple[str | None, dict]] = []  # (call id, search step) awaiting a result
        self.batch = 0  # position where the current model turn's steps start

    def new_turn(self) -> None:
        self.batch = len(self.steps)

    def _ref(self, path: str) -> dict:
        return {
            "format": self.fmt,
            "file": self.ctx["file"],
            "line": self.ctx["line"],
            "record_id": self.ctx["trace_id"],
            "path": path,
        }

    def add(self, step: dict, path: str, call_id: str | None = None, *, is_call: bool = False) -> None:
        """Append ``step``; a call (``is_call``) then waits for its result under ``call_id``."""
        step["source_ref"] = self._ref(path)
        self.steps.append(step)
        if is_call:
            self.pending.append((call_id, step))

    def model_turn(
        self,
        reasoning: tuple[str, str, str] | None,
        message: str | None,
        message_ref: tuple[str, str],
        calls: list[tuple[dict, str, str | None]],
        *,
        final: bool,
        answer_tag: str | None,
    ) -> str | None:
        """One model turn: its reasoning, its message (reasoning beside calls; the answer when it is the
        final turn and makes no call), then its calls ``(step, path, call id)``. Returns the final answer or None."""
        self.new_turn()
        if reasoning is not None and reasoning[0].strip():
            self.add({"kind": "reasoning", "text": reasoning[0], "original_kind": reasoning[1]}, reasoning[2])
        answers = final and not calls and bool(message and message.strip())
        if message and message.strip():
            self.add(
                {"kind": "answer" if answers else "reasoning", "text": message, "original_kind": message_ref[0]},
                message_ref[1],
            )
        for step, path, call_id in calls:
            self.add(step, path, call_id, is_call=True)
        return extract_answer(message, answer_tag) if answers and message is not None else None

    def add_result(self, text: str | None, call_id: object, path: str, id_path: str) -> bool:
        """Add a search_result for ``call_id``; False when it is None and no single call of this turn waits."""
        match: int | None
        if call_id is None:  # only unambiguous: one call waiting, made in the current model turn
            if len(self.pending) != 1 or not any(s is self.pending[0][1] for s in reversed(self.steps[self.batch :])):
                return False
            match = 0
        else:
            call_id = expect_type(call_id, str, what="tool call id", path=id_path, **self.ctx)
            match = next((i for i, (cid, _) in enumerate(self.pending) if cid == call_id), None)
            if match is None:
                raise UserInputError(
                    f"tool call id {call_id!r} matches no earlier tool call without a result; "
                    "fix the id or remove this result",
                    path=id_path,
                    **self.ctx,
                )
        _, call = self.pending.pop(match)
        step = {
            "kind": "search_result",
            "text": text or "",
            "documents": parse_tool_output(text),
            "_call": call,
            "source_ref": self._ref(path),
        }
        if call["kind"] == "other":  # an action's result is no search result
            step = {
                "kind": "other",
                "text": text or "",
                "original_kind": "tool_result",
                "_call": call,
                "source_ref": step["source_ref"],
            }
        # Searched from the end: a call is almost always recent, so a 10,000-step trace stays linear.
        at = next(i for i in range(len(self.steps) - 1, -1, -1) if self.steps[i] is call)
        self.steps.insert(at + 1 if at >= self.batch else len(self.steps), step)
        return True

    def finish(self) -> list[dict]:
        """Number the steps and fill ``depends_on`` (a result on its call, any other step on the previous one)."""
        position = {id(s): i for i, s in enumerate(self.steps)}
        for i, s in enumerate(self.steps):
            s["index"] = i
            call = s.pop("_call", None)
            s["depends_on"] = [position[id(call)]] if call is not None else ([i - 1] if i else [])
        return self.steps


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
) -> ImportedRecord:
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    messages: object
    if isinstance(doc, list):
        rec, messages, mpath = {}, doc, prefix
    else:
        doc = expect_type(doc, dict, what="record (an object with messages, or a list of messages)", path=prefix, **ctx)
        found = find_messages(doc)
        rec, messages, mpath = doc, None, f"{prefix}.messages"
        if found is not None:
            messages, where = found
            mpath = prefix + where[1:]
    rid = record_id(rec, ctx, prefix)
    key = rid if rid is not None else record_key(rec)
    trace_id = key or f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    messages = expect_type(messages, list, what="messages", path=mpath, **ctx)
    fields = record_fields(rec, ctx, prefix, common=True, question_field=question_field, answer_field=answer_field)
    who = fields["agent"] or run_state_agent(rec) or agent
    trace = new_trace(
        trace_id=trace_id,
        agent=who or default_agent(file),
        question="",
        fmt=FORMAT,
        file=file,
        line=line,
        record_id=rid if rid is not None else key,
        path=prefix,
    )
    given = fields["question"] if fields["question"] is not None else question
    sources = dict(fields["sources"])
    id_key = next((k for k in ("id", "task_id", "idx", "sample_id") if rec.get(k) is not None), None)
    if key is not None and id_key is not None:  # ID-trialN when a trial is given
        trial = rec.get("trial") if id_key != "id" else None
        joined = isinstance(trial, int) and not isinstance(trial, bool)
        sources["trace_id"] = f"joined: {prefix}.{id_key}, {prefix}.trial" if joined else f"{prefix}.{id_key}"
    if mpath != prefix or not rec:  # one message list at one path (not a run state's two lists)
        sources["messages"] = mpath
    # the keys holding the steps (an Agents SDK run state's items, or the message list) are not metadata
    steps_keys = (
        {"original_input", "generated_items"} if mpath == prefix and rec else {mpath[len(prefix) + 1 :].split(".")[0]}
    )
    skip = HEADER_FIELDS | consumed_fields(fields) | steps_keys
    meta: dict = {k: v for k, v in rec.items() if k not in skip}
    b = StepBuilder(FORMAT, ctx)
    pairs = as_messages(messages, mpath)
    roles = [m.get("role") if isinstance(m, dict) else None for m, _ in pairs]
    last_assistant = max((i for i, r in enumerate(roles) if r == "assistant"), default=-1)
    user_seen = False
    kinds: dict[str, str] = {}
    for k, (msg, p) in enumerate(pairs):
        msg = expect_type(msg, dict, what="message", path=p, **ctx)
        role = msg.get("role")
        role = expect_type(role, str, what="role", path=f"{p}.role", **ctx)
        content = content_text(msg.get("content"), ctx, f"{p}.content")
        if role in ("system", "developer"):
            meta.setdefault("system", []).append(content)
        elif role == "user" and not user_seen:
            user_seen = True
            if given is None:
                given = content or ""
                # a run state's string input is the message itself, not an object with content
                sources["question"] = p if p.endswith(".original_input") else f"{p}.content"
            else:
                meta["prompt"] = content
        elif role == "assistant":
            _assistant(
                b,
                msg,
                content,
                p,
                ctx,
                final=k == last_assistant,
                answer_tag=answer_tag,
                trace=trace,
                kinds=kinds,
                search_tools=search_tools,
            )
        elif role in ("tool", "function"):
            if not b.add_result(content, msg.get("tool_call_id"), p, f"{p}.tool_call_id"):
                raise UserInputError(
                    "tool message has no tool_call_id and no single call is waiting for a result; add tool_call_id",
                    path=f"{p}.tool_call_id",
                    **ctx,
                )
        else:
            b.add({"kind": "other", "text": content, "original_kind": role}, p)
    trace["question"] = given or ""
    apply_fields(trace, fields)
    trace["steps"] = b.finish()
    answers = [s for s in trace["steps"] if s["kind"] == "answer"]
    if answers:
        sources["final_answer"] = answers[-1]["source_ref"]["path"]
        if answer_tag and trace["final_answer"] and f"<{answer_tag.lower()}>" not in answers[-1]["text"].lower():
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
            f"{file}:{line}: trace {ctx['trace_id']}: assistant messages hold tool-call tags but no "
            "tool_calls; if the calls are in the text, convert the transcript with --format search_r1 "
            "--field FIELD (the field holding it)"
        )
    return ImportedRecord(
        line, trace=trace, sources=sources, warnings=warnings, notes=[] if who else [agent_note(file)]
    )


def _assistant(
    b: StepBuilder,
    msg: dict,
    content: str | None,
    p: str,
    ctx: RecordContext,
    *,
    final: bool,
    answer_tag: str | None,
    trace: dict,
    kinds: dict,
    search_tools: frozenset[str] | None,
) -> None:
    reasoning = None
    for key in ("reasoning_content", "reasoning"):
        if msg.get(key) is not None:
            expect_type(msg[key], str, what=key, path=f"{p}.{key}", **ctx)
            reasoning = (msg[key], key, f"{p}.{key}")
            break
    raw_calls = msg.get("tool_calls") or []
    raw_calls = expect_type(raw_calls, list, what="tool_calls", path=f"{p}.tool_calls", **ctx)
    calls: list[tuple[dict, str, str | None]] = []

    def add_call(fn: dict, fp: str, original_kind: str, where: str, call_id: str | None) -> None:
        """One call's step from its ``name`` and ``arguments`` (at ``fp``), typed search or other."""
        step = search_step(
            fn.get("name"),
            fn.get("arguments"),
            ctx,
            f"{fp}.name",
            f"{fp}.arguments",
            classify=True,
            search_tools=search_tools,
        )
        kinds[step["tool"]] = step["kind"]
        calls.append(({**step, "original_kind": original_kind}, where, call_id))

    for j, tc in enumerate(raw_calls):
        tp = p if msg.get("_item") else f"{p}.tool_calls[{j}]"  # a Responses item is the call itself
        fp = p if msg.get("_item") else f"{tp}.function"
        tc = expect_type(tc, dict, what="tool call", path=tp, **ctx)
        fn = tc.get("function")
        fn = expect_type(fn, dict, what="tool call function", path=fp, **ctx)
        expect_type(tc.get("id"), (str, type(None)), what="tool call id", path=f"{tp}.id", **ctx)
        add_call(fn, fp, "tool_call", tp, tc.get("id"))
    legacy = msg.get("function_call")
    if legacy is not None:
        lp = f"{p}.function_call"
        legacy = expect_type(legacy, dict, what="function_call", path=lp, **ctx)
        add_call(legacy, lp, "function_call", lp, None)
    answer = b.model_turn(reasoning, content, ("content", f"{p}.content"), calls, final=final, answer_tag=answer_tag)
    if answer is not None:
        trace["final_answer"] = answer
