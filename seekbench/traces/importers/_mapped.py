"""Importer driven by a mapping file (``--map FILE``, :mod:`._mapping`): records of any JSON shape.

Records are read as the JSON importers read them (JSONL, or one JSON document; a top-level array is
one record per item), then ``[trace] path`` picks the records inside each document. Each field is
read at its path; a required one (the question, the steps or messages) that matches nothing is an
error naming the file, line, trace and path, never an empty trace. Steps:

- with ``[trace] messages``, the message list is read as :mod:`._openai_chat` reads one (tool calls,
  results matched by id, the final answer), and the other ``[trace]`` paths override its fields;
- with ``[steps] path``, each match is one step: its kind from ``[steps.kinds]``, else the step kind
  the value names (``search``, ``CorrectAnswer``, ``think`` ...); a step with no kind but a tool name
  is a tool call, a search or an ``other`` action by its name (``--search-tools``), or the answer
  when its tool gives the answer (``submit``, ``final_answer`` ..., ``--answer-tool``;
  :mod:`._answer_tools`); any other step is ``other``. A tool result (``[tool] result``) becomes
  its own step right after the call, holding the step's documents (``[documents]``, else those
  read from the result's text).

Without ``[trace] answer`` the final answer is the text of the last ``answer`` step.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import cast

from ..._errors import UserInputError
from ..._limits import ReadLimits
from .._ontology import canonical_kind
from ._answer_tools import resolve_answer_tools
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, new_trace
from ._chat_records import is_messages
from ._documents import parse_tool_output
from ._fields import question_key, verdict
from ._json_documents import iter_documents
from ._jsonpath import container, find
from ._mapping import Mapping, load_mapping
from ._tools import record_tool_kinds, resolve_search_tools

FORMAT = "mapped"


def sniff(path: str, head: str, first: object) -> bool:
    """Never detected: a mapping file is given with ``--map``."""
    return False


def iter_records(
    path: str | os.PathLike,
    *,
    mapping: str | os.PathLike | Mapping,
    agent: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each record of ``path`` as the mapping file says.

    Parameters
    ----------
    path : str or PathLike
        JSONL, or one JSON document.
    mapping : str, PathLike or Mapping
        The mapping file (TOML, :mod:`._mapping`), or one already loaded.
    agent : str, optional
        The agent when the map names no ``[trace] agent`` (default: the file's stem, with a note).
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps.
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).

    Yields
    ------
    ImportedRecord
        With ``sources``: the path each field was read at.
    """
    m = load_mapping(mapping)
    tools = (resolve_search_tools(search_tools), resolve_answer_tools(answer_tool))
    file = str(path)
    where = m.trace.get("path", "$")
    bare = m.trace.get("messages") == "$"  # records that are message lists themselves: a list stays whole

    def single(value: list) -> bool:
        return where != "$" or (bare and is_messages(value))

    for line, doc, prefix in iter_documents(path, single=single, limits=limits):
        if isinstance(doc, UserInputError):
            yield ImportedRecord(line, error=doc)
            continue
        hits = [(prefix, doc)] if where == "$" else find(doc, where, base=prefix)
        if not hits:
            err = _missing(m, "trace", "path", {"file": file, "line": line, "trace_id": None}, prefix)
            yield ImportedRecord(line, error=err)
        for base, rec in hits:
            try:
                yield _convert(rec, m, file=file, line=line, base=base, agent=agent, tools=tools)
            except UserInputError as e:
                yield ImportedRecord(line, error=e)


def _missing(m: Mapping, table: str, key: str, ctx: RecordContext, base: str) -> UserInputError:
    path = getattr(m, table)[key]
    return UserInputError(
        f"[{table}] {key} = {path!r} (from {m.file}) matches nothing in this record; fix the path in the mapping file",
        path=base if path == "$" else base + path[1:],
        **ctx,
    )


def _get(obj: object, path: str | None, base: str) -> tuple[str, object] | None:
    """The first ``(concrete path, value)`` of ``path`` in ``obj`` (which sits at ``base``), or None."""
    if path is None:
        return None
    hits = find(obj, path, base=base)
    return hits[0] if hits else None


def _text(value: object, what: str, ctx: RecordContext, path: str, *, numbers: bool = True) -> str | None:
    """A string field: a string, a number (as text) or null; an error for anything else."""
    if value is None or isinstance(value, str):
        return value
    if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise UserInputError(f"{what} must be a string, got {type(value).__name__}", path=path, **ctx)


def _gold(value: object, ctx: RecordContext, path: str) -> list[str]:
    """Gold answers: a string or number, or lists of them nested to any depth (flattened in order)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [g for i, v in enumerate(value) for g in _gold(v, ctx, f"{path}[{i}]")]
    text = _text(value, "gold answer", ctx, path)
    return [] if text is None else [text]


def _convert(
    rec: object,
    m: Mapping,
    *,
    file: str,
    line: int | None,
    base: str,
    agent: str | None,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
) -> ImportedRecord:
    """One record as the map says; ``tools`` are the search and the answer tools."""
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    sources: dict[str, str] = {}
    hit = _get(rec, m.trace.get("id"), base)
    if hit is not None and hit[1] is not None:
        rid = _text(hit[1], "id", ctx, hit[0])
        sources["trace_id"] = hit[0]
    else:
        rid = None
    trace_id = rid or f"{os.path.basename(file)}:{line}" + ("" if base == "$" else base[1:])
    ctx["trace_id"] = trace_id
    fields: dict[str, object] = {}
    for key in ("question", "answer", "agent", "dataset"):
        hit = _get(rec, m.trace.get(key), base)
        if hit is None:
            if key == "question" and key in m.trace:  # required: named, it must be there
                raise _missing(m, "trace", key, ctx, base)
            continue
        fields[key] = _text(hit[1], key, ctx, hit[0], numbers=key != "agent")
        sources["final_answer" if key == "answer" else key] = hit[0]
    gold = _get(rec, m.trace.get("gold"), base)
    if gold is not None:
        sources["gold_answers"] = gold[0]
    correct = _get(rec, m.trace.get("correct"), base)
    if correct is not None and correct[1] is not None:
        value = verdict(correct[1])
        if value is None:
            raise UserInputError(
                f"correct must be a boolean, 0 / 1 or a verdict word (correct, incorrect, yes, no), got {correct[1]!r}",
                path=correct[0],
                **ctx,
            )
        sources["correct"] = correct[0]
    notes: list[str] = []
    warnings: list[str] = []
    if "messages" in m.trace:
        trace = _from_messages(rec, m, ctx, base, agent, tools, sources, notes, warnings)
    else:
        trace = new_trace(
            trace_id=trace_id, agent="", question="", fmt=FORMAT, file=file, line=line, record_id=rid, path=base
        )
        trace["steps"], kinds = _steps(rec, m, ctx, base, tools)
        answers = [s for s in trace["steps"] if s["kind"] == "answer"]
        if answers and answers[-1].get("text") is not None and "answer" not in fields:
            trace["final_answer"] = answers[-1]["text"].strip()
            sources["final_answer"] = answers[-1]["source_ref"]["path"]
        record_tool_kinds(trace, kinds)
    trace["trace_id"], trace["source"]["record_id"] = trace_id, rid
    if "question" in fields:
        trace["question"] = fields["question"] or ""
    if "answer" in fields:
        trace["final_answer"] = fields["answer"]
    if fields.get("agent"):
        trace["agent"] = fields["agent"]
    else:
        trace["agent"] = agent or default_agent(file)
        notes += [] if agent else [agent_note(file)]
    trace["dataset"] = fields.get("dataset")
    trace["gold_answers"] = _gold(None if gold is None else gold[1], ctx, "" if gold is None else gold[0])
    if correct is not None and correct[1] is not None:
        trace["correct"] = {"value": verdict(correct[1]), "source": "source_data", "detail": {"field": correct[0]}}
    trace["question_id"] = question_key(trace["question"], trace["dataset"])
    return ImportedRecord(line, trace=trace, sources=sources, notes=notes, warnings=warnings)


def _from_messages(
    rec: object,
    m: Mapping,
    ctx: RecordContext,
    base: str,
    agent: str | None,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
    sources: dict[str, str],
    notes: list[str],
    warnings: list[str],
) -> dict:
    """The trace the chat reader makes of the message list at ``[trace] messages``."""
    from ._openai_chat import _convert as chat_convert  # the chat reader imports much; only maps need it

    hit = _get(rec, m.trace["messages"], base)
    if hit is None:
        raise _missing(m, "trace", "messages", ctx, base)
    where, messages = hit
    if not isinstance(messages, list):
        raise UserInputError(f"messages must be a list, got {type(messages).__name__}", path=where, **ctx)
    out = chat_convert(
        messages,
        file=ctx["file"],
        line=cast(int, ctx["line"]),  # the chat reader types it int; None only for a record without a line
        prefix=where,
        agent=agent,
        question=None,
        answer_tag="answer",
        search_tools=tools[0],
        answer_tools=tools[1],
    )
    # the chat reader said where it found these in the message list; the map's own paths override below
    for key in ("question", "final_answer"):
        if key in out.sources and key not in sources:
            sources[key] = out.sources[key]
    notes.extend(n for n in out.notes if n != agent_note(ctx["file"]))  # the agent is decided by the caller
    warnings.extend(out.warnings)
    trace = out.trace
    assert trace is not None  # an ImportedRecord from the chat reader carries a trace or raised
    trace["source"].update({"format": FORMAT, "path": None if base == "$" else base})
    for st in trace["steps"]:
        st["source_ref"].update({"format": FORMAT, "record_id": ctx["trace_id"]})
    return trace


def _steps(
    rec: object,
    m: Mapping,
    ctx: RecordContext,
    base: str,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
) -> tuple[list[dict], dict[str, str]]:
    """The steps at ``[steps] path``, a tool result right after its call, numbered in source order."""
    path = m.steps["path"]
    # the list must be there (empty is fine: a trace without steps); a missing or null list is an error
    if not any(isinstance(v, (list, dict)) for _, v in find(rec, container(path) or path)):
        raise _missing(m, "steps", "path", ctx, base)
    out: list[dict] = []
    kinds: dict[str, str] = {}
    for where, el in find(rec, path, base=base):
        for step in _one_step(el, where, m, ctx, tools, kinds):
            step["index"] = len(out)
            out.append(step)
    return out, kinds


def _one_step(
    el: object,
    where: str,
    m: Mapping,
    ctx: RecordContext,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
    kinds: dict,
) -> list[dict]:
    """One step element as one step, or two (a tool call and its result)."""
    from ._openai_chat import search_step  # the query and url of a call are read as the chat reader reads them

    ref = {"format": FORMAT, "file": ctx["file"], "line": ctx["line"], "record_id": ctx["trace_id"], "path": where}
    raw = _get(el, m.steps.get("kind"), where)
    raw_kind = raw[1] if raw is not None and isinstance(raw[1], str) else None
    listed = None if raw_kind is None else m.kinds.get(raw_kind)
    kind = listed or canonical_kind(raw_kind)
    name = _get(el, m.tool.get("name"), where)
    step: dict
    if name is not None and name[1] is not None and kind in (None, "search", "other"):
        # a tool call: a search or an action by its tool's name, unless [steps.kinds] says which
        args = _get(el, m.tool.get("arguments"), where)
        step = search_step(
            name[1],
            None if args is None else args[1],
            ctx,
            name[0],
            where if args is None else args[0],
            classify=listed is None,
            search_tools=tools[0],
            answer_tools=tools[1] if listed is None else None,
        )
        if listed == "other":
            step = {"kind": "other", "tool": step["tool"], "text": step["text"]}
        kinds[step["tool"]] = step["kind"]
    else:
        step = {"kind": kind or "other"}
        if name is not None and name[1] is not None:
            step["tool"] = _text(name[1], "tool name", ctx, name[0], numbers=False)
    if raw_kind is not None:
        step["original_kind"] = raw_kind
    for key in ("text", "query"):
        hit = _get(el, m.steps.get(key), where)
        if hit is not None:
            step[key] = _text(hit[1], key, ctx, hit[0])
    dep = _get(el, m.steps.get("depends_on"), where)
    if dep is not None and dep[1] is not None:
        deps = dep[1] if isinstance(dep[1], list) else [dep[1]]
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in deps):
            raise UserInputError("depends_on must be a step index or a list of them", path=dep[0], **ctx)
        step["depends_on"] = list(deps)
    step["source_ref"] = ref
    docs = _documents(el, m, ctx, where)
    result = _get(el, m.tool.get("result"), where) if "tool" in step and name is not None else None
    if result is None:
        if docs is not None:
            step["documents"] = docs
        return [step]
    value = result[1]
    text = value if isinstance(value, str) or value is None else json.dumps(value, ensure_ascii=False)
    after: dict = {
        "kind": "search_result" if step["kind"] == "search" else "other",
        "text": text or "",
        "source_ref": {**ref, "path": result[0]},
    }
    if step["kind"] == "search":
        after["documents"] = docs if docs is not None else parse_tool_output(text)
    else:
        after["original_kind"] = "tool_result"
    return [step, after]


def _documents(el: object, m: Mapping, ctx: RecordContext, where: str) -> list[dict] | None:
    """The step's documents at ``[documents] path`` (None when the step has no such list)."""
    path = m.documents.get("path")
    if path is None or not find(el, container(path) or path):
        return None
    out = []
    for rank, (dpath, d) in enumerate(find(el, path, base=where), start=1):
        doc: dict = {"id": None, "title": None, "text": None, "rank": rank}
        for key in ("id", "title", "url", "text", "score"):
            hit = _get(d, m.documents.get(key), dpath)
            if hit is None or hit[1] is None:
                continue
            if key == "score":
                if not isinstance(hit[1], (int, float)) or isinstance(hit[1], bool):
                    raise UserInputError("document score must be a number", path=hit[0], **ctx)
                doc[key] = float(hit[1])
            elif key == "text" and not isinstance(hit[1], (str, int, float)):
                doc[key] = json.dumps(hit[1], ensure_ascii=False)  # a structured document keeps all it holds
            else:
                doc[key] = _text(hit[1], f"document {key}", ctx, hit[0])
        if isinstance(d, str) and "text" not in m.documents:  # a list of plain passages
            doc["text"] = d
        out.append(doc)
    return out
