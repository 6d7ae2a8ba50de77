"""Importer for the Search-R1 family: tagged generations, chat-template transcripts and rollout records.

Input, one of:

- a text file of one or more chat-template transcripts (Search-R1's ``example/case.txt``: Qwen
  ``<|im_start|>role``, Llama 3 headers; a ``system`` turn after the model's turn starts the next
  transcript) or one plain generation: one trace per transcript;
- JSONL, or one JSON array (ReSearch / FlashRAG and DeepResearcher dumps), of records holding
  the text in the first of :data:`TEXT_FIELDS` (or ``field=``, a dotted path), the prompt in the
  first of :data:`PROMPT_FIELDS` when it is apart (verl / ROLL / slime rollouts: ``prompt`` +
  ``response``), beside ``question``, gold and correctness fields (:mod:`._fields`, ``common=True``).

The system and user turns before the model's first turn are the prompt: never steps (example
tags inside instructions are ignored), kept in ``metadata["prompt_preamble"]``; the question is
the user turn's text after its last ``Question:`` (else the whole user turn) unless the record
gives one. Turn markers inside a response are turn boundaries: a later user or tool turn holds
tool results (``<tool_response>``, ``<information>``) or is an ``other`` step. Without markers,
a plain prompt ends at its ``Question: ...`` line when the question is known or the instructions
show example tags. Steps follow :mod:`._tagged`.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple, cast

from ..._errors import UserInputError
from ..._io import read_text
from ..._limits import DEFAULT_LIMITS, ReadLimits
from ._answer_tools import answer_call, resolve_answer_tools
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._chat_records import record_key
from ._chat_template import END_TOKENS, Turn, has_markers, split_turns, transcripts
from ._documents import parse_passages, parse_tool_output  # noqa: F401  (re-exported)
from ._fields import (  # noqa: F401
    GOLD_FIELDS,
    HEADER_FIELDS,
    apply_fields,
    consumed_fields,
    get_path,
    gold_list,
    named_field,
    question_key,
    record_fields,
    record_id,
)
from ._json_documents import iter_documents
from ._tagged import (  # noqa: F401
    DEFAULT_TAGS,
    QUESTION_LINE,
    TOOL_TAG_HINT,
    TaggedSteps,
    resolve_tags,
    split_tagged,
)
from ._tools import record_tool_kinds, resolve_search_tools

FORMAT = "search_r1"
#: Fields holding the model's text, first present wins (``output`` may be an object holding ``final_response``).
TEXT_FIELDS = (
    "output",
    "response",
    "responses",
    "text",
    "generation",
    "trajectory",
    "sequences_str",
    "gen_text_store",
    "message_str",
    "completion",
    "final_response",
)
#: Fields holding the prompt when it is kept apart from the response.
PROMPT_FIELDS = ("prompt", "input", "prompts")
_NESTED_TEXT = ("final_response", "response", "text", "output", "generation")
_SNIFF_TAG = re.compile(r"<(think|search|information|result|answer|tool_call)>|<\|begin_of_query\|>", re.IGNORECASE)
_PLAIN_USER = re.compile(r"(?:^|(?<=\s))User:[ \t]*")
_PLAIN_ASSISTANT = re.compile(r"(?:^|(?<=\s))Assistant:[ \t]*\n?")
_QUESTION_MARK = re.compile(r"question\s*[:：][ \t]*(?=\S)", re.IGNORECASE)


class _Span(NamedTuple):
    """A match-like span (``start()`` / ``end()``) for a question found by comparison."""

    s: int
    e: int

    def start(self) -> int:
        return self.s

    def end(self) -> int:
        return self.e


def sniff(path: str, head: str, first: object) -> bool:
    """True for a record (or a JSON array of records) with tagged text, or a text file carrying the tags."""
    if isinstance(first, list) and first and isinstance(first[0], dict):
        first = first[0]
    if isinstance(first, dict):
        if any(k in first for k in ("messages", "steps", "trace")):
            return False
        return any(isinstance(v, str) and _SNIFF_TAG.search(v) for v in _text_candidates(first))
    if first is not None:
        return False
    return head.lstrip()[:1] not in ("{", "[") and bool(_SNIFF_TAG.search(head))


def _text_candidates(rec: dict) -> list[object]:
    out = [rec.get(k) for k in TEXT_FIELDS]
    if isinstance(rec.get("output"), dict):
        out += [rec["output"].get(k) for k in _NESTED_TEXT]
    return out


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    question: str | None = None,
    tags: Mapping[str, object] | None = None,
    field: str | None = None,
    question_field: str | None = None,
    answer_field: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each transcript or record in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        A text file of transcripts, JSONL of records, or a JSON array of records.
    agent : str, optional
        Used when a record names none (``agent`` / ``model``); default the file's stem (with a note).
    question : str, optional
        Used when a record names none and no prompt gives one.
    tags : mapping, optional
        Step kind -> tag name (or ``[open, close]`` delimiters), replacing that kind's :data:`DEFAULT_TAGS`.
    field, question_field, answer_field : str, optional
        Dotted paths of the text, the question and the gold answers (default: the common keys).
    search_tools : str or list, optional
        The tool names that are searches (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose ``<tool_call>`` gives the answer, beside ``submit``, ... (:mod:`._answer_tools`).
    limits : ReadLimits, optional
        A line, or a whole text or JSON file, past ``limits.record_bytes`` is a user error.

    Yields
    ------
    ImportedRecord
        A trace, or the :class:`UserInputError` of one bad record.
    """
    spec = resolve_tags(tags)
    opts: dict[str, Any] = {
        "spec": spec,
        "agent": agent,
        "question": question,
        "search_tools": resolve_search_tools(search_tools),
        "answer_tools": resolve_answer_tools(answer_tool),
    }
    file = str(path)
    if _first_char(file) not in ("{", "["):
        yield from _text_file(file, max_bytes=(limits or DEFAULT_LIMITS).record_bytes, **opts)
        return
    for line, doc, prefix in iter_documents(path, single=_not_records, limits=limits):
        try:
            if isinstance(doc, UserInputError):
                raise doc
            yield _convert(
                doc,
                file=file,
                line=line,
                prefix=prefix,
                field=field,
                question_field=question_field,
                answer_field=answer_field,
                **opts,
            )
        except UserInputError as e:
            yield ImportedRecord(line, error=e)


def _not_records(value: list) -> bool:
    """A JSON array is split into records only when it holds objects (else it is one bad record)."""
    return not (value and all(isinstance(v, dict) for v in value))


def _first_char(file: str) -> str:
    """The first non-blank character of the file ("" for a missing or blank file)."""
    if not os.path.isfile(file):
        return ""  # read_text then raises the user error
    with open(file, "rb") as fh:
        head = fh.read(1 << 16)
    return head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1]


def _text_file(
    file: str,
    *,
    spec: list,
    agent: str | None,
    question: str | None,
    search_tools: frozenset[str] | None,
    answer_tools: frozenset[str],
    max_bytes: int,
) -> Iterator[ImportedRecord]:
    try:
        text = read_text(file, max_bytes=max_bytes)
    except UserInputError as e:
        yield ImportedRecord(1, error=e)
        return
    if not text.strip():  # a blank file holds no generation
        return
    groups = transcripts(split_turns(text, _first_role(text))) if has_markers(text) else [None]
    name = os.path.basename(file)
    for k, group in enumerate(groups):
        start = 0 if group is None or k == 0 else max(text.rfind("<", 0, group[0].start), 0)  # its first marker
        line = text.count("\n", 0, start) + 1
        tid = name if len(groups) == 1 else f"{name}#{k + 1}"
        ctx: RecordContext = {"file": file, "line": line, "trace_id": tid}
        trace = new_trace(
            trace_id=tid,
            agent=agent or default_agent(file),
            question=question or "",
            fmt=FORMAT,
            file=file,
            line=line,
            record_id=None,
        )
        trace["question_id"] = question_key(question, None)
        steps = TaggedSteps(text, spec, ctx, "$", fmt=FORMAT, search_tools=search_tools, by_line=True)
        sources: dict = {}
        _fill(trace, steps, text, group, sources, have_question=bool(question), answer_tools=answer_tools)
        yield ImportedRecord(
            line, trace=trace, warnings=steps.warnings, notes=[] if agent else [agent_note(file)], sources=sources
        )


def _first_role(text: str) -> str:
    """The role of text before the first marker: the prompt when an assistant marker comes first, else output."""
    turns = split_turns(text, "?")
    first_marked = next((t for t in turns if t.role != "?"), None)
    return "user" if first_marked is not None and first_marked.role == "assistant" else "assistant"


def _text_field(rec: dict, field: str | None, ctx: RecordContext, prefix: str) -> str:
    """The dotted path of the record's text field; a user error naming the fields to add or set."""
    if field is not None:
        named_field(rec, field, "--field", ctx, prefix)
        return field
    for key in TEXT_FIELDS:
        value = rec.get(key)
        if value is None:
            continue
        if isinstance(value, dict):
            inner = next((k for k in _NESTED_TEXT if isinstance(value.get(k), str)), None)
            if inner is not None:
                return f"{key}.{inner}"
        expect_type(value, str, what=key, path=f"{prefix}.{key}", **ctx)
        return key
    raise UserInputError(
        f"no tagged text: add a {' / '.join(TEXT_FIELDS[:4])} field, or name it with --field",
        path=f"{prefix}.output",
        **ctx,
    )


def _prompt_text(rec: dict, text_field: str) -> tuple[str, str] | None:
    """``(field, text)`` of a prompt kept apart from the response: a string, or a chat message list."""
    for key in PROMPT_FIELDS:
        value = rec.get(key)
        if key == text_field or value is None:
            continue
        if isinstance(value, str):
            return key, value
        if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
            users = [i for i, m in enumerate(value) if m.get("role") == "user" and isinstance(m.get("content"), str)]
            if users:
                return f"{key}[{users[-1]}].content", value[users[-1]]["content"]
    return None


def _convert(
    rec: object,
    *,
    file: str,
    line: int | None,
    prefix: str,
    spec: list,
    agent: str | None,
    question: str | None,
    field: str | None,
    question_field: str | None,
    answer_field: str | None,
    search_tools: frozenset[str] | None,
    answer_tools: frozenset[str],
) -> ImportedRecord:
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    rec = expect_type(rec, dict, what="record", path=prefix, **ctx)
    if field is not None and isinstance(get_path(rec, field), list):  # a chat message list, its turns tagged
        from ._openai_chat import _convert as chat_convert  # imported here: that module imports this one's helpers

        return chat_convert(
            rec, file=file, line=line or 0, prefix=prefix, agent=agent, question=question, answer_tag="answer",
            question_field=question_field, answer_field=answer_field, search_tools=search_tools,
            answer_tools=answer_tools, field=field, fmt=FORMAT, spec=spec,
        )  # fmt: skip
    rid = record_id(rec, ctx, prefix)
    rid = rid if rid is not None else record_key(rec)
    trace_id = rid if rid is not None else f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    fields = record_fields(rec, ctx, prefix, common=True, question_field=question_field, answer_field=answer_field)
    name = _text_field(rec, field, ctx, prefix)
    text = cast(str, get_path(rec, name))  # _text_field returns only a path that holds a string
    q = fields["question"] if fields["question"] is not None else question
    trace = new_trace(
        trace_id=trace_id,
        agent=fields["agent"] or agent or default_agent(file),
        question=q or "",
        fmt=FORMAT,
        file=file,
        line=line,
        record_id=rid,
        path=prefix,
    )
    apply_fields(trace, fields)
    sources = dict(fields["sources"])
    id_key = next((k for k in ("id", "task_id", "idx", "sample_id") if rec.get(k) is not None), None)
    if rid is not None and id_key is not None:  # ID-trialN when a trial is given
        trial = rec.get("trial") if id_key != "id" else None
        joined = isinstance(trial, int) and not isinstance(trial, bool)
        sources["trace_id"] = f"joined: {prefix}.{id_key}, {prefix}.trial" if joined else f"{prefix}.{id_key}"
    sources["tagged"] = f"{prefix}.{name}"
    if q is not None and "question" not in sources:
        sources["question"] = "option question"
    steps = TaggedSteps(text, spec, ctx, f"{prefix}.{name}", fmt=FORMAT, search_tools=search_tools)
    prompt = _prompt_text(rec, name.split(".")[0])
    if prompt is not None and not trace["question"]:
        _question_from(trace, prompt[1], split_turns(prompt[1], "user"), sources, f"{prefix}.{prompt[0]}")
    group: list[Turn] | None
    if prompt is not None:  # the response is the model's output from its first character
        group = split_turns(text, "assistant") if has_markers(text) else [Turn("assistant", 0, len(text))]
    else:
        group = split_turns(text, _first_role(text)) if has_markers(text) else None
    hint = _fill(
        trace, steps, text, group, sources, have_question=bool(q), base=f"{prefix}.{name}", answer_tools=answer_tools
    )
    used = consumed_fields(fields) | {name.split(".")[0]}
    extra = {k: v for k, v in rec.items() if k not in HEADER_FIELDS and k not in used}
    if extra:
        trace.setdefault("metadata", {}).update(extra)
    warnings = steps.warnings
    if hint and not any(s.get("tool") for s in trace["steps"]):
        warnings.append(
            f"{file}:{line}: trace {ctx['trace_id']}: the text holds tool tags but no tool call was "
            f"found; set --tags (or --field if {prefix}.{name} is not the model's text)"
        )
    return ImportedRecord(
        line,
        trace=trace,
        warnings=warnings,
        sources=sources,
        notes=[] if fields["agent"] or agent else [agent_note(file)],
    )


def _question_from(trace: dict, text: str, turns: list[Turn], sources: dict, base: str) -> None:
    """Fill an empty question from the last user turn of a prompt: after its last ``Question:``, else all of it."""
    users = [t for t in turns if t.role == "user"]
    if not users:
        return
    t = users[-1]
    body = text[t.start : t.end]
    found = list(QUESTION_LINE.finditer(body))
    if found:
        m = found[-1]
        q, span = m.group(1).strip(), (t.start + m.start(1), t.start + m.end(1))
    else:
        q = END_TOKENS.sub("", body).strip()
        span = (t.start, t.end)
    if q:
        trace["question"] = q
        trace["question_id"] = question_key(q, trace["dataset"])
        sources["question"] = f"{base}[{span[0]}:{span[1]}]"


def _fill(
    trace: dict,
    steps: TaggedSteps,
    text: str,
    group: list[Turn] | None,
    sources: dict,
    *,
    have_question: bool,
    base: str = "$",
    answer_tools: frozenset[str] | None = None,
) -> bool:
    """Queue the model's turns (the prompt's turns are not steps), build the steps, fill the trace.
    Returns whether the model's text holds tool tags (to warn when no tool call was found)."""
    meta: dict = {}
    plain = _plain_turns(text) if group is None else None
    if plain is not None:  # a plain template ("... User: q. Assistant:"): the user turn is the question
        prompt = [Turn("user", plain[0], plain[1])]
        model = [Turn("assistant", plain[2], len(text))]
    elif group is None:  # no chat markers: the prompt, if any, ends at its question line
        start = _preamble_end(text, steps.spec, trace["question"], have_question)
        prompt = [Turn("user", 0, start)] if start else []
        model = [Turn("assistant", start, len(text))]
    else:
        first = next((i for i, t in enumerate(group) if t.role == "assistant"), len(group))
        prompt, model = group[:first], group[first:]
    if plain is not None:
        meta["prompt_preamble"] = text[: plain[2]].strip()
        if not trace["question"]:
            q = text[plain[0] : plain[1]].strip().rstrip(".").strip()
            trace["question"], trace["question_id"] = q, question_key(q, trace["dataset"])
            sources["question"] = f"{base}[{plain[0]}:{plain[1]}]"
    elif prompt:
        meta["prompt_preamble"] = text[prompt[0].start : prompt[-1].end].strip()
        if not trace["question"]:
            _question_from(trace, text, [p._replace(role="user") for p in prompt[-1:]], sources, base)
    for t in model:
        steps.add_segment(t.role, t.start, t.end)
    trace["steps"] = steps.finish()
    trace["final_answer"] = steps.final_answer
    for s in trace["steps"]:  # a <tool_call> of an answer tool (submit, final_answer, ...) is the answer
        given = answer_call(s, answer_tools)
        if given is not None:
            steps.tool_kinds[s["tool"]], trace["final_answer"] = "answer", given
    answers = [s for s in trace["steps"] if s["kind"] == "answer"]
    if answers:
        sources["final_answer"] = answers[-1]["source_ref"]["path"]
    meta.update(steps.meta)
    if meta:
        trace.setdefault("metadata", {}).update(meta)
    record_tool_kinds(trace, steps.tool_kinds)
    return any(TOOL_TAG_HINT.search(text, t.start, t.end) for t in model)


def _plain_turns(text: str) -> tuple[int, int, int] | None:
    """``(start, end, output_start)``: the user turn of a token-free template (``... User: q. Assistant:``,
    ReSearch without a chat template) and where the model's output starts; None without such a pair."""
    user = _PLAIN_USER.search(text)
    if user is None:
        return None
    assistant = _PLAIN_ASSISTANT.search(text, user.end())  # one forward scan each: linear in the text
    if assistant is None:
        return None
    return user.end(), user.end() + len(text[user.end() : assistant.start()].rstrip()), assistant.end()


def _preamble_end(text: str, spec: list, question: str | None, have_question: bool) -> int:
    """Where the generation starts in text without chat markers: after a ``Question: ...`` line that
    is outside any block and is the known question, or follows example tags of instructions; else 0."""
    blocks = split_tagged(text, spec)
    tagged = [b for b in blocks if b.kind is not None]  # in text order, not overlapping
    starts = [b.start for b in tagged]
    known = question.strip().lower() if have_question and question else None
    qm: re.Match[str] | _Span
    for qm in _QUESTION_MARK.finditer(text):
        if known is not None:  # compared, not compiled into the pattern: a question may be megabytes long
            if text[qm.end() : qm.end() + len(known)].lower() != known:
                continue
            qm = _Span(qm.start(), qm.end() + len(known))
        k = bisect.bisect_right(starts, qm.start()) - 1  # the last tagged block starting at or before qm
        if k >= 0 and qm.start() < tagged[k].end:
            continue
        if not have_question and (k < 0 or k + 1 >= len(tagged)):
            continue  # unknown question: only instructions that show example tags, with the model's tags after
        rest = text[qm.end() :].split("\n", 1)[0]  # the rest of the question line, unless a tag starts there
        return qm.end() + (0 if any(o.lower() in rest.lower() for _, o, _ in spec) else len(rest))
    return 0
