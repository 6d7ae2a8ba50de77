"""Importer for Search-R1-style tagged generations (``<think>``, ``<search>``, ``<information>``, ``<answer>``).

Input: JSONL records holding the tagged text in the first of ``output``, ``response``,
``text``, ``generation``, ``trajectory`` (or ``field=``), beside ``question``,
``golden_answers`` / ``gold_answers`` / ``ground_truth`` (string, list or ``{"target": [...]}``),
``id``, ``agent`` / ``model``, ``dataset``, ``question_id``, ``is_correct``; or a text file
(first non-blank character not ``{``) holding one generation, the question from ``question=``.

The prompt (text through a chat-template assistant marker; else, with a known question,
through ``Question: <question>`` outside any block, or the text before the first tag) goes
to ``metadata["prompt_preamble"]``, never into steps. Text between blocks is reasoning;
text after the last answer is ``other``. An unclosed tag (truncated generation) runs to the
next opening tag or the end; its step's ``source_ref.path`` ends in ``(unclosed <tag>)`` and
``metadata["unclosed_tags"]`` lists it. Each step depends on the previous one.
"""

from __future__ import annotations

import bisect
import os
import re
from collections import namedtuple
from collections.abc import Iterator, Mapping

from ..._errors import UserInputError
from .._io import iter_jsonl, read_text
from ._base import ImportedRecord, expect_type, new_trace
from ._documents import parse_passages, parse_tool_output  # noqa: F401  (re-exported)

FORMAT = "search_r1"
DEFAULT_AGENT = "search_r1"
TEXT_FIELDS = ("output", "response", "text", "generation", "trajectory")
GOLD_FIELDS = ("golden_answers", "gold_answers", "ground_truth")
#: Record keys the shared header reader consumes; the rest go to ``metadata``.
HEADER_FIELDS = frozenset({"id", "agent", "model", "question", "dataset", "question_id", "is_correct", *GOLD_FIELDS})
#: step kind -> tag name. ReSearch, for one, writes results in ``<result>``: ``tags={"search_result": "result"}``.
DEFAULT_TAGS = {"reasoning": "think", "search": "search", "search_result": "information", "answer": "answer"}

_SNIFF_TAG = re.compile(r"<(think|search|information|result|answer)>", re.IGNORECASE)
_SNIFF_FIELD = re.compile(r'"(?:output|response|text|generation|trajectory)"\s*:\s*"')
_OTHER_KEYS = re.compile(r'"(?:schema_version|steps|trace|messages)"\s*:')
_SPECIAL = re.compile(r"<\|im_start\|>\s*(?:system|user|assistant|tool)?|<\|start_header_id\|>\w*<\|end_header_id\|>"
                      r"|<\|[A-Za-z0-9_]+\|>")  # chat-template tokens and the role names they introduce
_ASSISTANT = re.compile(r"<\|im_start\|>\s*assistant\b[ \t]*\n?|<\|assistant\|>\s*|<｜Assistant｜>\s*"
                        r"|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>\s*")
_QUESTION_LINE = re.compile(r"question\s*[:：]\s*([^\n<]+)", re.IGNORECASE)
_TAG_NAME = re.compile(r"[A-Za-z_][\w\-.:]*")
#: A piece of a generation: ``kind`` None for text outside tags; ``start``/``end`` span the tags too.
_Block = namedtuple("_Block", "kind start end body tag closed", defaults=(None, True))


def sniff(path: str, head: str, first: object) -> bool:
    """True for a JSONL record or a text file carrying Search-R1 tags."""
    if isinstance(first, dict):
        return (not any(k in first for k in ("messages", "steps", "trace"))
                and any(isinstance(first.get(k), str) and _SNIFF_TAG.search(first[k]) for k in TEXT_FIELDS))
    if first is not None:
        return False
    if head.lstrip().startswith("{"):  # a first record too long for the 64 KiB head
        return bool(_SNIFF_FIELD.search(head) and _SNIFF_TAG.search(head) and not _OTHER_KEYS.search(head))
    return bool(_SNIFF_TAG.search(head))


def iter_records(path: str | os.PathLike, *, agent: str | None = None, question: str | None = None,
                 tags: Mapping[str, object] | None = None, field: str | None = None) -> Iterator[ImportedRecord]:
    """Convert each tagged generation in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        A JSONL file of records or a text file holding one generation.
    agent, question : str, optional
        Used when a record names none (``agent`` / ``model``, ``question``); agent default ``"search_r1"``.
    tags : mapping, optional
        Step kind -> tag name (or ``[open, close]`` delimiters), merged over :data:`DEFAULT_TAGS`.
    field : str, optional
        The record field holding the tagged text (default: the first of :data:`TEXT_FIELDS`).

    Yields
    ------
    ImportedRecord
        A trace, or the :class:`UserInputError` of one bad record.
    """
    spec = resolve_tags(tags)
    file = str(path)
    if not _starts_with_brace(file):
        ctx = {"file": file, "line": 1, "trace_id": os.path.basename(file)}
        trace = new_trace(trace_id=ctx["trace_id"], agent=agent or DEFAULT_AGENT, question=question or "",
                          fmt=FORMAT, file=file, line=1, record_id=None)
        trace["question_id"] = question_key(question, None)
        try:
            text = read_text(path)
            if text.strip():  # a blank file holds no generation
                warnings = _fill(trace, text, spec, ctx, base="$", have_question=bool(question), by_line=True)
                yield ImportedRecord(1, trace=trace, warnings=warnings)
        except UserInputError as e:
            yield ImportedRecord(1, error=e)
        return
    for line, obj in iter_jsonl(path):
        try:
            if isinstance(obj, UserInputError):
                raise obj
            trace, warnings = _convert(obj, file=file, line=line, spec=spec, agent=agent, question=question,
                                       field=field)
            yield ImportedRecord(line, trace=trace, warnings=warnings)
        except UserInputError as e:
            yield ImportedRecord(line, error=e)


def _starts_with_brace(file: str) -> bool:
    """True when the first non-blank character of the file is ``{`` (JSONL); False for text or a missing file."""
    if not os.path.isfile(file):
        return False  # read_text then raises the user error
    with open(file, "rb") as fh:
        head = fh.read(1 << 16)
    return head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n").startswith("{")


def resolve_tags(tags: Mapping[str, object] | None) -> list[tuple[str, str, str]]:
    """``[(kind, open, close), ...]`` from the ``tags`` option; a user error for a bad option."""
    merged: dict[str, object] = dict(DEFAULT_TAGS)
    if tags is not None:
        if not isinstance(tags, Mapping):
            raise UserInputError("option tags must map a step kind to a tag name, e.g. {'search_result': 'result'}")
        for kind, name in tags.items():
            if kind not in DEFAULT_TAGS:
                raise UserInputError(f"option tags: unknown step kind {kind!r}; use one of: {', '.join(DEFAULT_TAGS)}")
            merged[kind] = name
    out = []
    for kind, name in merged.items():
        if isinstance(name, str) and _TAG_NAME.fullmatch(name):
            out.append((kind, f"<{name}>", f"</{name}>"))
        elif isinstance(name, (list, tuple)) and len(name) == 2 and all(isinstance(x, str) and x for x in name):
            out.append((kind, name[0], name[1]))
        else:
            raise UserInputError(f"option tags: {kind} must be a tag name like 'result' or an [open, close] pair, "
                                 f"got {name!r}")
    return out


def split_tagged(text: str, spec: list[tuple[str, str, str]]) -> list[_Block]:
    """Split ``text`` into tagged blocks and the text between them. A block ends at its closing tag if that
    comes before the tag opens again; otherwise it is unclosed and ends at the next opening tag of any kind."""
    opener = re.compile("|".join(f"(?P<t{i}>{re.escape(o)})" for i, (_, o, _) in enumerate(spec)), re.IGNORECASE)
    closers = [re.compile(re.escape(c), re.IGNORECASE) for _, _, c in spec]
    same = [re.compile(re.escape(o), re.IGNORECASE) for _, o, _ in spec]
    blocks: list[_Block] = []
    # The next closing tag / reopening of each kind, searched again only once passed: positions only move
    # forward, so a cached match at or after the current position is still the first one (linear time even
    # for thousands of unclosed tags).
    ahead: dict[tuple[int, int], re.Match | None] = {}

    def next_match(pattern: re.Pattern, slot: tuple[int, int], at: int) -> re.Match | None:
        if slot not in ahead or (ahead[slot] is not None and ahead[slot].start() < at):
            ahead[slot] = pattern.search(text, at)
        return ahead[slot]

    pos = 0
    while pos < len(text):
        m = opener.search(text, pos)
        if m is None:
            blocks.append(_Block(None, pos, len(text), text[pos:]))
            break
        if m.start() > pos:
            blocks.append(_Block(None, pos, m.start(), text[pos:m.start()]))
        i = int(m.lastgroup[1:])
        kind, open_tag, _ = spec[i]
        close = next_match(closers[i], (i, 0), m.end())
        again = next_match(same[i], (i, 1), m.end())
        if close is not None and (again is None or close.start() < again.start()):
            blocks.append(_Block(kind, m.start(), close.end(), text[m.end():close.start()], open_tag))
            pos = close.end()
        else:
            nxt = opener.search(text, m.end())
            end = nxt.start() if nxt else len(text)
            blocks.append(_Block(kind, m.start(), end, text[m.end():end], open_tag, closed=False))
            pos = end
    return blocks


def question_key(question: str | None, dataset: str | None) -> str | None:
    """The question id used when a record gives none: dataset plus the whitespace-folded, lowercased question."""
    if not question or not question.strip():
        return None
    return f"{dataset or ''}::{' '.join(question.split()).lower()}"


def record_id(rec: dict, ctx: dict, prefix: str = "$", key: str = "id") -> str | None:
    """``rec[key]`` as a string (a string or an integer in the source), or None."""
    if rec.get(key) is None:
        return None
    expect_type(rec[key], (str, int), what=key, path=f"{prefix}.{key}", **ctx)
    return str(rec[key])


def record_fields(rec: dict, ctx: dict, prefix: str = "$") -> dict:
    """Type-checked record fields shared by the JSON importers: ``agent``, ``question``, ``dataset``,
    ``question_id`` (None when absent), ``gold_answers`` (list of str), ``correct`` (schema object or None)."""
    out: dict = {"agent": None}
    for key in ("model", "agent", "question", "dataset"):  # "agent" wins over the legacy "model"
        if rec.get(key) is not None:
            expect_type(rec[key], str, what=key, path=f"{prefix}.{key}", **ctx)
            out["agent" if key == "model" else key] = rec[key]
        elif key != "model":
            out.setdefault(key, None)
    out["question_id"] = record_id(rec, ctx, prefix, "question_id")
    out["gold_answers"] = []
    for key in GOLD_FIELDS:
        if rec.get(key) is not None:
            out["gold_answers"] = gold_list(rec[key], ctx, f"{prefix}.{key}")
            break
    out["correct"] = None
    if rec.get("is_correct") is not None:
        expect_type(rec["is_correct"], bool, what="is_correct", path=f"{prefix}.is_correct", **ctx)
        out["correct"] = {"value": rec["is_correct"], "source": "source_data", "detail": {"field": "is_correct"}}
    return out


def gold_list(value: object, ctx: dict, path: str) -> list[str]:
    """Gold answers as a list of strings: a string, a list, or ``{"target": ...}``; numbers become strings."""
    if isinstance(value, dict) and "target" in value:
        value, path = value["target"], f"{path}.target"
    if isinstance(value, str):
        return [value]
    expect_type(value, list, what="gold answers", path=path, **ctx)
    out = []
    for i, g in enumerate(value):
        expect_type(g, (str, int, float), what="gold answer", path=f"{path}[{i}]", **ctx)
        out.append(g if isinstance(g, str) else str(g))
    return out


def apply_fields(trace: dict, fields: dict) -> None:
    """Copy :func:`record_fields` output (gold, dataset, ids, correctness) into a trace."""
    trace["gold_answers"] = fields["gold_answers"]
    trace["dataset"] = fields["dataset"]
    trace["correct"] = fields["correct"]
    trace["question_id"] = fields["question_id"] or question_key(trace["question"], fields["dataset"])


def _convert(rec: object, *, file: str, line: int, spec: list, agent: str | None, question: str | None,
             field: str | None) -> tuple[dict, list[str]]:
    ctx = {"file": file, "line": line, "trace_id": None}
    expect_type(rec, dict, what="record", path="$", **ctx)
    rid = record_id(rec, ctx)
    ctx["trace_id"] = rid if rid is not None else f"{os.path.basename(file)}:{line}"
    fields = record_fields(rec, ctx)
    names = [field] if field else [k for k in TEXT_FIELDS if k in rec]
    if not names or names[0] not in rec:
        raise UserInputError(f"no tagged text: add a {field or ' / '.join(TEXT_FIELDS)} field to the record "
                             "(Python callers may pass field= to read_traces to name another one)",
                             path=f"$.{field or 'output'}", **ctx)
    name = names[0]
    expect_type(rec[name], str, what=name, path=f"$.{name}", **ctx)
    q = fields["question"] if fields["question"] is not None else question
    trace = new_trace(trace_id=ctx["trace_id"], agent=fields["agent"] or agent or DEFAULT_AGENT, question=q or "",
                      fmt=FORMAT, file=file, line=line, record_id=rid)
    apply_fields(trace, fields)
    warnings = _fill(trace, rec[name], spec, ctx, base=f"$.{name}", have_question=bool(q), by_line=False)
    extra = {k: v for k, v in rec.items() if k not in HEADER_FIELDS and k != name}
    if extra:
        trace.setdefault("metadata", {}).update(extra)
    return trace, warnings


def _preamble_end(text: str, spec: list, question: str | None, have_question: bool) -> int:
    """Where the generation starts: after the prompt when it can be told apart, else 0."""
    m = _ASSISTANT.search(text)
    if m is not None:
        return m.end()
    if not have_question or not question:
        return 0
    blocks = split_tagged(text, spec)
    tagged = [b for b in blocks if b.kind is not None]  # in text order, not overlapping
    starts = [b.start for b in tagged]
    pat = re.compile(r"question\s*[:：]\s*" + re.escape(question.strip()), re.IGNORECASE)
    for qm in pat.finditer(text):
        k = bisect.bisect_right(starts, qm.start()) - 1  # the last tagged block starting at or before qm
        if k >= 0 and qm.start() < tagged[k].end:
            continue
        rest = text[qm.end():].split("\n", 1)[0]  # the rest of the question line, unless a tag starts there
        return qm.end() + (0 if any(o.lower() in rest.lower() for _, o, _ in spec) else len(rest))
    return next((b.start for b in blocks if b.kind is not None), 0)  # no tag at all: nothing is clearly prompt


def _fill(trace: dict, text: str, spec: list, ctx: dict, *, base: str, have_question: bool,
          by_line: bool) -> list[str]:
    """Parse ``text`` into ``trace["steps"]``, the final answer and metadata; return warnings."""
    start = _preamble_end(text, spec, trace["question"], have_question)
    meta: dict = {}
    preamble = text[:start].strip()
    if preamble:
        meta["prompt_preamble"] = preamble
        asked = _QUESTION_LINE.findall(preamble)
        if asked and not trace["question"]:
            trace["question"] = asked[-1].strip()
            trace["question_id"] = question_key(trace["question"], trace["dataset"])
    closers = re.compile("|".join(re.escape(c) for _, _, c in spec), re.IGNORECASE)
    blocks = split_tagged(text[start:], spec)
    last_answer = max((i for i, b in enumerate(blocks) if b.kind == "answer"), default=-1)
    steps: list[dict] = []
    warnings: list[str] = []
    line, counted = ctx["line"], 0  # the source line of each step, counted incrementally (by_line)
    for i, b in enumerate(blocks):
        body = _SPECIAL.sub("", b.body)
        kind, original = b.kind, (b.tag or "").strip("<>") or None
        if kind is None:
            body = closers.sub("", body)
            kind, original = ("other", "text_after_answer") if 0 <= last_answer < i else ("reasoning", "text")
        if not body.strip() and kind in ("reasoning", "other"):
            continue
        s, e = start + b.start, start + b.end
        path = f"{base}[{s}:{e}]"
        if not b.closed:
            path += f" (unclosed {b.tag})"
            meta.setdefault("unclosed_tags", []).append({"step": len(steps), "tag": b.tag})
            warnings.append(f"{ctx['file']}:{ctx['line']}: trace {ctx['trace_id']}: unclosed {b.tag} at "
                            f"{base}[{s}:{e}]; took the text up to the next tag or the end (truncated generation?)")
        if by_line:
            line += text.count("\n", counted, s)
            counted = s
        step: dict = {"index": len(steps), "kind": kind, "text": body.strip(), "original_kind": original,
                      "depends_on": [len(steps) - 1] if steps else [],
                      "source_ref": {"format": FORMAT, "file": ctx["file"], "line": line,
                                     "record_id": ctx["trace_id"], "path": path}}
        if kind == "search":
            step["tool"] = "search"
            step["query"] = body.strip()
        elif kind == "search_result":
            step["documents"] = parse_passages(body)
        elif kind == "answer":
            trace["final_answer"] = body.strip()
        steps.append(step)
    trace["steps"] = steps
    if meta:
        trace.setdefault("metadata", {}).update(meta)
    return warnings
