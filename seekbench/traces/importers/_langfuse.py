"""Importer for Langfuse traces: the public API's trace JSON with its observations and scores.

A trace is what ``GET /api/public/traces/{id}`` answers: ``{id, name, timestamp, input, output,
metadata, tags, userId, sessionId, release, version, observations: [...], scores: [...]}``. One
trace per file, one per JSONL line, a JSON list of them, or a list answer ``{data: [...], meta}``
whose items carry their observations in full (the trace list API gives observation ids only: that
is a user error saying to fetch each trace). The observations API's answer (``{data: [observation,
...]}``, each with its ``traceId``) is read too, one trace per ``traceId``.

An observation is ``{id, traceId, type, name, startTime, endTime, parentObservationId, input,
output, model, usageDetails, metadata, level, statusMessage}``, ``type`` one of GENERATION, SPAN,
EVENT, TOOL, RETRIEVER, AGENT, CHAIN, EMBEDDING, EVALUATOR, GUARDRAIL. Walking the observation
tree (:mod:`._langfuse_steps`: nested by ``parentObservationId``, in ``startTime`` order, ties in
file order):

- a GENERATION gives its output message's reasoning, its text as reasoning, or as the answer when
  it is the last generation with text and no tool call;
- a TOOL (or a leaf SPAN, as ``@observe`` records a decorated function, whose name is a search
  tool) of a retrieving tool (:func:`._tools.is_search_tool`: by name, by ``search_tools``, or
  because RETRIEVER observations sit under it) gives a search (``name``; the query from its
  ``input``) and a search_result (``output``) whose documents are those of the retrievers under it,
  else parsed from the output; any other tool gives an ``other`` step naming it and an ``other``
  step with its output;
- a TOOL (or a tool call in a generation's output) of an answer tool (``submit``, ``final_answer``
  ..., ``answer_tool``; :mod:`._answer_tools`) gives the answer step, its input the answer; a later
  generation's text is then reasoning, not a second answer;
- a RETRIEVER outside any tool gives a search (its ``input`` the query) and a search_result with
  the documents of its ``output`` (LangChain ``Document`` lists, or any tool-output shape);
- when a trace has no TOOL or RETRIEVER observation, the tool calls in generation outputs are the
  searches (or actions), and the ``tool`` messages in later generation inputs their results;
- SPAN, AGENT, CHAIN, EVENT, EMBEDDING, EVALUATOR and GUARDRAIL observations give no step; their
  children are walked.

The question is the trace ``metadata.question``, else the trace ``input`` (text, the ``question`` /
``query`` / ``input`` of an object, or the first user message), else the first generation's first
user message; gold answers, dataset, question id and ``is_correct`` come from the trace
``metadata`` (``gold_answers`` / ``golden_answers`` / ``ground_truth``, else ``expected_output``).
``correct`` is the first score named like correctness (``correct``, ``correctness``,
``is_correct``, ``accuracy``, ``exact_match``): BOOLEAN 1 / 0, a NUMERIC 1 / 0, a CATEGORICAL
correct / incorrect (true / false, yes / no); its ``source`` is human for ANNOTATION scores, judge
for EVAL, else source_data. The answer falls back to the trace ``output`` when no generation gives
one. The agent is the trace ``metadata.agent``, else the trace ``name`` and, when known, ``/`` +
the first generation's ``model`` (or either alone), else ``--agent``, else the file name.

The trace id is the Langfuse trace id (also ``source.record_id``), and each step's
``source_ref.record_id`` the id of its observation: ``export-labels --to langfuse`` writes scores
with that ``traceId`` and ``observationId``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import cast

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import answer_source, resolve_answer_tools
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._fields import apply_fields, gold_list, record_fields, verdict
from ._json_documents import iter_documents
from ._langfuse_steps import (
    CONTAINERS,
    Observations,
    ObservationSteps,
    answers,
    as_text,
    check_observation,
    generation,
    messages_at,
    retriever,
    tool,
)
from ._openai_chat import content_text, extract_answer
from ._tools import is_search_tool, record_tool_kinds, resolve_search_tools

FORMAT = "langfuse"
OBSERVATION_TYPES = frozenset(
    {"GENERATION", "SPAN", "EVENT", "TOOL", "RETRIEVER", "AGENT", "CHAIN", "EMBEDDING", "EVALUATOR", "GUARDRAIL"}
)
#: Score names (lowercased, non-letters dropped) read as the trace's correctness.
CORRECT_SCORES = ("correct", "correctness", "iscorrect", "accuracy", "exactmatch")
_SCORE_SOURCE = {"ANNOTATION": "human", "EVAL": "judge"}
_QUESTION_KEYS = ("question", "query", "input")
_ANSWER_KEYS = ("answer", "output", "content", "text")


def is_trace(obj: object) -> bool:
    """A Langfuse trace: a string ``id`` and an ``observations`` list beside trace fields (or typed observations)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not isinstance(obj.get("observations"), list):
        return False
    if any(k in obj for k in ("timestamp", "htmlPath", "sessionId", "userId", "projectId")):
        return True
    return bool(obj["observations"]) and all(is_observation(o) for o in obj["observations"][:3])


def is_observation(obj: object) -> bool:
    """An observation of the observations API: ``traceId``, ``startTime`` and a Langfuse ``type``."""
    return isinstance(obj, dict) and "traceId" in obj and "startTime" in obj and obj.get("type") in OBSERVATION_TYPES


def _is_list_answer(obj: object) -> bool:
    if not (isinstance(obj, dict) and isinstance(obj.get("data"), list) and isinstance(obj.get("meta"), dict)):
        return False
    first = obj["data"][0] if obj["data"] else None
    return (
        first is None or is_trace(first) or is_observation(first) or (isinstance(first, dict) and "htmlPath" in first)
    )


def sniff(path: str, head: str, first: object) -> bool:
    """True for a Langfuse trace, a list of them, or the API's list answer (``{data, meta}``)."""
    if isinstance(first, list):
        return bool(first) and all(is_trace(x) for x in first[:3])
    return is_trace(first) or _is_list_answer(first)


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    answer_tag: str | None = "answer",
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each Langfuse trace in ``path`` to a canonical trace (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        One trace (JSON), JSONL of traces, a JSON list of traces, or a list answer ``{data, meta}``.
    agent : str, optional
        The agent when the trace names none (no ``metadata.agent``, trace name or model).
    answer_tag : str or None, default "answer"
        Take ``final_answer`` from the last ``<answer_tag>`` block of the answer; None keeps the text.
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).
    limits : ReadLimits, optional
        The byte limits of the read.

    Yields
    ------
    ImportedRecord
    """
    file, chosen = str(path), (resolve_search_tools(search_tools), resolve_answer_tools(answer_tool))
    for line, doc, prefix in iter_documents(path, single=lambda _: False, limits=limits):
        if isinstance(doc, UserInputError):
            yield ImportedRecord(line, error=doc)
            continue
        for rec, where in _traces(doc, prefix):
            ctx: RecordContext = {
                "file": file,
                "line": line,
                "trace_id": rec.get("id") if isinstance(rec, dict) else None,
            }
            try:
                yield _convert(rec, where, ctx, agent=agent, answer_tag=answer_tag, tools=chosen)
            except UserInputError as e:
                yield ImportedRecord(line, error=e)
            except (TypeError, ValueError, AttributeError, KeyError) as e:  # a field of an unexpected JSON type
                detail = str(e).splitlines()[0][:160] if str(e).strip() else type(e).__name__
                yield ImportedRecord(
                    line,
                    error=UserInputError(
                        f"malformed Langfuse trace: a field has the wrong type ({detail})", path=where, **ctx
                    ),
                )


def _traces(doc: object, prefix: str) -> Iterator[tuple[object, str]]:
    """The traces of one document: itself, the items of a list answer, or observations grouped by trace."""
    if not _is_list_answer(doc):
        yield doc, prefix
        return
    data = cast(dict, doc)["data"]  # _is_list_answer checked it is an object with a data list
    if data and is_observation(data[0]):
        grouped: dict[str, list] = {}
        for i, o in enumerate(data):
            tid = o.get("traceId") if isinstance(o, dict) else None
            grouped.setdefault(str(tid), []).append((o, f"{prefix}.data[{i}]"))
        for tid, obs in grouped.items():
            yield {"id": tid, "observations": obs, "_located": True}, f"{prefix}.data"
        return
    for i, rec in enumerate(data):
        yield rec, f"{prefix}.data[{i}]"


def _convert(
    rec: object,
    where: str,
    ctx: RecordContext,
    *,
    agent: str | None,
    answer_tag: str | None,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
) -> ImportedRecord:
    """One Langfuse trace; ``tools`` are the search and the answer tools."""
    search_tools, answer_tools = tools
    rec = expect_type(rec, dict, what="Langfuse trace", path=where, **ctx)
    tid = rec.get("id")
    if not isinstance(tid, str) or not tid.strip():
        raise UserInputError("trace id must be a non-empty string", path=f"{where}.id", **ctx)
    raw = rec.get("observations")
    raw = expect_type(raw, list, what="observations", path=f"{where}.observations", **ctx)
    located = raw if rec.get("_located") else [(o, f"{where}.observations[{i}]") for i, o in enumerate(raw)]
    tree = Observations([(check_observation(o, ctx, p), p) for o, p in located])
    meta_in: dict = rec["metadata"] if isinstance(rec.get("metadata"), dict) else {}
    fields = record_fields(meta_in, ctx, f"{where}.metadata")
    if not fields["gold_answers"]:
        key = next((k for k in ("expected_output", "expectedOutput") if meta_in.get(k) is not None), None)
        if key is not None:
            fields["gold_answers"] = gold_list(meta_in[key], ctx, f"{where}.metadata.{key}")
            fields["sources"]["gold_answers"] = f"{where}.metadata.{key}"
    obs = list(tree.walk())
    gens = [o for o in obs if o.get("type") == "GENERATION"]
    with_model = next((o for o in gens if isinstance(o.get("model"), str) and o["model"]), None)
    model = None if with_model is None else with_model["model"]
    name = rec.get("name") if isinstance(rec.get("name"), str) and rec.get("name") else None
    who = fields["agent"] or (f"{name}/{model}" if name and model else name or model) or agent
    trace = new_trace(
        trace_id=tid,
        agent=who or default_agent(ctx["file"]),
        question="",
        fmt=FORMAT,
        file=ctx["file"],
        line=ctx["line"],
        record_id=tid,
        path=where,
    )
    b = ObservationSteps(ctx, tree, search_tools, answer_tools)
    has_tools = any(o.get("type") in ("TOOL", "RETRIEVER") or _search_span(o, tree, search_tools) for o in obs)
    final = next((o for o in reversed(gens) if answers(o, ctx, tree.path[o["id"]])), None)
    inside: set[str] = set()  # observations under a tool: its retrievers gave the tool's documents
    for o in obs:
        if o["id"] in inside:
            continue
        b.obs = o
        kind = o.get("type")
        if kind == "GENERATION":
            answer = generation(b, o, final=o is final, with_calls=not has_tools, answer_tag=answer_tag)
            trace["final_answer"] = answer if answer is not None else trace["final_answer"]
        elif kind == "TOOL" or _search_span(o, tree, search_tools):
            answer = tool(b, o)
            trace["final_answer"] = answer if answer is not None else trace["final_answer"]
            inside.update(c["id"] for c in tree.below(o))
        elif kind == "RETRIEVER":
            retriever(b, o)
        elif kind not in CONTAINERS:
            raise UserInputError(
                f"unknown observation type {kind!r}; expected one of {', '.join(sorted(OBSERVATION_TYPES))}",
                path=f"{tree.path[o['id']]}.type",
                **ctx,
            )
    sources = dict(fields["sources"])
    if not fields["agent"] and (name or model):
        parts = ([f"{where}.name"] if name else []) + ([f"{tree.path[with_model['id']]}.model"] if with_model else [])
        # two values joined with "/": said in words (a map names one path per field)
        sources["agent"] = f"joined: {', '.join(parts)}" if len(parts) > 1 else parts[0]
    at = answer_source(b.steps, b.answered)
    if at is not None:
        sources["final_answer"] = at
    if trace["final_answer"] is None and rec.get("output") is not None:
        text = _answer_text(rec["output"])
        b.obs = {}
        b.new_turn()
        b.add({"kind": "answer", "text": text, "original_kind": "trace.output"}, f"{where}.output")
        trace["final_answer"] = extract_answer(text, answer_tag)
        sources["final_answer"] = f"{where}.output"
    question, sources["question"] = _question(rec, fields, gens, tree, ctx, where)
    trace["question"] = question or ""
    apply_fields(trace, fields)
    if trace["correct"] is None:
        trace["correct"] = _correct(rec.get("scores"))
        if trace["correct"] is not None:
            detail = trace["correct"]["detail"]
            sources["correct"] = f"{where}.scores[{detail['index']}].{detail.pop('key')}"
    trace["steps"] = b.finish()
    trace["metadata"] = _metadata(rec, meta_in, len(obs))
    record_tool_kinds(trace, b.kinds)
    for o in obs:
        o.pop("_order", None)
    return ImportedRecord(ctx["line"], trace=trace, sources=sources, notes=[] if who else [agent_note(ctx["file"])])


def _search_span(o: dict, tree: Observations, search_tools: frozenset[str] | None) -> bool:
    """A leaf SPAN named as a search tool: how ``@observe`` records a decorated search function."""
    name = o.get("name")
    return (
        o.get("type") == "SPAN"
        and not tree.children[o["id"]]
        and isinstance(name, str)
        and bool(name)
        and is_search_tool(name, search_tools)
    )


def _answer_text(value: object) -> str:
    if isinstance(value, dict):
        value = next((value[k] for k in _ANSWER_KEYS if isinstance(value.get(k), str)), value)
    return as_text(value) or ""


def _question(
    rec: dict, fields: dict, gens: list[dict], tree: Observations, ctx: RecordContext, where: str
) -> tuple[str | None, str | None]:
    if fields["question"] is not None:
        return fields["question"], fields["sources"].get("question")
    value = rec.get("input")
    if isinstance(value, str) and value.strip():
        return value, f"{where}.input"
    if isinstance(value, dict):
        key = next((k for k in _QUESTION_KEYS if isinstance(value.get(k), str)), None)
        if key is not None:
            return value[key], f"{where}.input.{key}"
    candidates: list[tuple[object, str]] = [(value, f"{where}.input")] if isinstance(value, (list, dict)) else []
    candidates += [(g.get("input"), f"{tree.path[g['id']]}.input") for g in gens[:1]]
    for v, p in candidates:
        for m, mp in messages_at(v, p):
            if m.get("role") == "user":
                return content_text(m.get("content"), ctx, f"{mp}.content"), f"{mp}.content"
    return None, None


def _correct(scores: object) -> dict | None:
    """The first score named like correctness, as the trace's ``correct``; None when there is none."""
    for i, s in enumerate(scores if isinstance(scores, list) else []):
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            continue  # a score id (list answers) or a malformed score: nothing to read
        if re.sub(r"[^a-z]", "", s["name"].lower()) not in CORRECT_SCORES:
            continue
        key = "stringValue" if s.get("dataType") == "CATEGORICAL" else "value"
        if s.get(key) is None:
            key = "stringValue" if "stringValue" in s else "value"
        raw = s.get(key)
        value = verdict(raw)
        source = _SCORE_SOURCE.get(str(s.get("source") or "").upper(), "source_data")
        # key says which of the two was read, for the stated source; popped before the trace is written
        detail = {"score": s["name"], "value": raw, "data_type": s.get("dataType"), "index": i, "key": key}
        return {"value": value, "source": source, "detail": detail}
    return None


def _metadata(rec: dict, meta_in: dict, n: int) -> dict:
    info = {
        k: rec[k]
        for k in ("name", "sessionId", "userId", "release", "version", "environment", "tags")
        if rec.get(k) not in (None, [], "")
    }
    info["trace_id"], info["observations"] = rec["id"], n
    scores = [
        {
            k: s.get(k)
            for k in ("name", "value", "stringValue", "dataType", "source", "observationId", "comment")
            if s.get(k) is not None
        }
        for s in (rec["scores"] if isinstance(rec.get("scores"), list) else [])
        if isinstance(s, dict)
    ]
    if scores:
        info["scores"] = scores
    out: dict = {"langfuse": info}
    if meta_in:
        out["trace_metadata"] = meta_in
    return out
