"""Importer for SeekBench JSONL (the format of the SeekBench release, labels included).

One record per line: ``question``, ``ground_truth``, ``is_correct``, ``reward``,
``final_answer``, ``model`` (the agent), ``dataset``, ``id`` and ``trace``, a
list of steps typed ``reasoning`` / ``search`` / ``search_result`` /
``CorrectAnswer`` / ``IncorrectAnswer`` with an ``annotation`` holding
the step type label and ``attributes`` (legacy spellings such as
``groundness: "Not Grounded"``, ``information_clarity``, ``information_quality``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..._errors import UserInputError
from ..._io import iter_jsonl
from ..._limits import DEFAULT_LIMITS, ReadLimits
from .._ontology import LABEL_VALUES, canonical_field, canonical_kind, canonical_value
from ._base import ImportedRecord, RecordContext, expect_type, new_trace

FORMAT = "seekbench"
_TYPE_FIELD_BY_KIND = {"reasoning": "reasoning_type", "search": "search_type"}
#: The record's fields the trace holds; the others are kept in its metadata.
_KEPT = frozenset(
    ("question", "ground_truth", "gold_answers", "is_correct", "final_answer")
    + ("model", "agent", "dataset", "id", "trace")
)


def sniff(path: str, head: str, first: object) -> bool:
    """True when the parsed first record looks like SeekBench JSONL."""
    record = first
    return (
        isinstance(record, dict)
        and "schema_version" not in record
        and isinstance(record.get("trace"), list)
        and "question" in record
    )


def iter_records(
    path: str | os.PathLike, *, rater: str | None = None, limits: ReadLimits | None = None
) -> Iterator[ImportedRecord]:
    """Convert each line of a SeekBench JSONL file to a canonical trace with inline labels."""
    file = str(path)
    rater = rater or os.path.splitext(os.path.basename(file))[0]
    for line, obj in iter_jsonl(path, max_bytes=(limits or DEFAULT_LIMITS).record_bytes):
        if isinstance(obj, UserInputError):
            yield ImportedRecord(line, error=obj)
            continue
        try:
            sources: dict[str, str] = {}
            trace = convert(obj, file=file, line=line, rater=rater, sources=sources)
            yield ImportedRecord(line, trace=trace, sources=sources)
        except UserInputError as e:
            yield ImportedRecord(line, error=e)


def convert(
    rec: object, *, file: str, line: int | None, rater: str, sources: dict[str, str] | None = None
) -> dict[str, Any]:
    """Convert one parsed SeekBench record; ``sources`` (when given) gets the path each field was read at."""
    sources = {} if sources is None else sources
    rec = expect_type(rec, dict, what="record", file=file, line=line, trace_id=None, path="$")
    rid = rec.get("id")
    trace_id = str(rid) if rid is not None else f"{os.path.basename(file)}:{line}"
    ctx: RecordContext = {"file": file, "line": line, "trace_id": trace_id}
    question = rec.get("question")
    question = expect_type(question, str, what="question", path="$.question", **ctx)
    agent_key = "agent" if "agent" in rec else "model"
    agent = rec.get(agent_key)
    if agent is None:
        raise UserInputError("missing agent (the 'model' field); add the agent name", path="$.model", **ctx)
    agent = expect_type(agent, str, what="model", path="$.model", **ctx)
    trace = new_trace(
        trace_id=trace_id,
        agent=agent,
        question=question,
        fmt=FORMAT,
        file=file,
        line=line,
        record_id=None if rid is None else str(rid),
    )
    sources.update({"question": "$.question", "agent": f"$.{agent_key}"})
    if rid is not None:
        sources["trace_id"] = "$.id"
    dataset = rec.get("dataset")
    if dataset is not None:
        dataset = expect_type(dataset, str, what="dataset", path="$.dataset", **ctx)
        sources["dataset"] = "$.dataset"
    trace["dataset"] = dataset
    gold_key = "ground_truth" if "ground_truth" in rec else "gold_answers"
    if gold_key in rec:
        sources["gold_answers"] = f"$.{gold_key}"
    gold = rec.get("ground_truth", rec.get("gold_answers", []))
    if isinstance(gold, str):
        gold = [gold]
    gold = expect_type(gold, list, what="ground_truth", path="$.ground_truth", **ctx)
    for i, g in enumerate(gold):
        expect_type(g, str, what="gold answer", path=f"$.ground_truth[{i}]", **ctx)
    trace["gold_answers"] = list(gold)
    trace["question_id"] = _question_id(rec, dataset)
    final = rec.get("final_answer")
    if final is not None and not isinstance(final, str):
        final = str(final)
    trace["final_answer"] = final
    if final is not None:
        sources["final_answer"] = "$.final_answer"
    is_correct = rec.get("is_correct")
    if is_correct is not None:
        sources["correct"] = "$.is_correct"
        is_correct = expect_type(is_correct, bool, what="is_correct", path="$.is_correct", **ctx)
        trace["correct"] = {
            "value": is_correct,
            "source": "source_data",
            "detail": {"field": "is_correct", "reward": rec.get("reward")},
        }
    steps = rec.get("trace")
    steps = expect_type(steps, list, what="trace", path="$.trace", **ctx)
    trace["inline_labels"] = {"rater": rater, "kind": "human"}
    trace["steps"] = [_convert_step(s, pos, ctx) for pos, s in enumerate(steps)]
    extra = {k: v for k, v in rec.items() if k not in _KEPT}
    if extra:
        trace["metadata"] = extra
    return trace


def _question_id(rec: dict[str, Any], dataset: str | None) -> str | None:
    qid = rec.get("question_id")
    if qid is not None:
        return str(qid)
    q = rec.get("question")
    # Several agents answer the same question: the question text identifies it within a dataset.
    return f"{dataset or ''}::{' '.join(q.split()).lower()}" if isinstance(q, str) else None


def _convert_step(s: object, pos: int, ctx: RecordContext) -> dict[str, Any]:
    # The common case is tested by exact class first (``x.__class__ is str``: what a JSON parser
    # makes); anything else goes to expect_type, which accepts subclasses or raises the one wording.
    # A step costs a few microseconds this way, about a fifth of what calling the checks did: the
    # release's 275,486 steps at 1x (scripts/bench/read_speed.py).
    path = f"$.trace[{pos}]"
    if s.__class__ is not dict:
        s = expect_type(s, dict, what="step", path=path, **ctx)
    raw_type = s.get("type")
    kind = canonical_kind(raw_type)
    if kind is None:
        if not isinstance(raw_type, str):
            raise UserInputError("step type missing or not a string", path=f"{path}.type", **ctx)
        kind = "other"
    index = s.get("step_index", pos)
    if index.__class__ is not int:
        index = expect_type(index, int, what="step_index", path=f"{path}.step_index", **ctx)
    step: dict[str, Any] = {
        "index": index,
        "kind": kind,
        "original_kind": raw_type,
        "source_ref": {
            "format": FORMAT,
            "file": ctx["file"],
            "line": ctx["line"],
            "record_id": ctx["trace_id"],
            "path": path,
        },
    }
    text = s.get("content")
    if text is not None:
        if text.__class__ is not str:
            text = expect_type(text, str, what="content", path=f"{path}.content", **ctx)
        step["text"] = text
    if "query" in s:
        query = s["query"]
        if query is not None and query.__class__ is not str:
            expect_type(query, (str, type(None)), what="query", path=f"{path}.query", **ctx)
        step["query"] = query
    if "documents" in s:
        step["documents"] = _documents(s["documents"], f"{path}.documents", ctx)
    dependency = s.get("trace_dependency")
    dep = dependency.get("dependent_on") if isinstance(dependency, dict) else None
    if dep is not None:
        deps = dep if isinstance(dep, list) else [dep]
        for d in deps:
            if d.__class__ is not int:
                expect_type(d, int, what="dependent_on", path=f"{path}.trace_dependency.dependent_on", **ctx)
        step["depends_on"] = list(deps)
    ann = s.get("annotation")
    if ann is not None:
        labels = _labels(ann, kind, path, ctx)
        if labels:
            step["labels"] = labels
    return step


def _documents(docs: object, path: str, ctx: RecordContext) -> list[dict[str, Any]]:
    if docs.__class__ is not list:
        docs = expect_type(docs, list, what="documents", path=path, **ctx)
    out: list[dict[str, Any]] = []
    for r, d in enumerate(docs, start=1):  # a list here
        if isinstance(d, str):
            out.append({"id": None, "title": None, "text": d, "rank": r})
            continue
        if d.__class__ is not dict:
            d = expect_type(d, dict, what="document", path=f"{path}[{r - 1}]", **ctx)
        did = d.get("id")
        title = d.get("title")
        text = d.get("content", d.get("text"))
        doc: dict[str, Any] = {
            "id": None if did is None else str(did),
            "title": title,
            "text": text,
            "rank": r,
        }
        score = d.get("score")
        if isinstance(score, (int, float)) and not isinstance(score, bool):
            doc["score"] = float(score)
        url = d.get("url")
        if isinstance(url, str):
            doc["url"] = url
        for key, value in (("title", title), ("text", text)):
            if value is not None and not isinstance(value, str):
                raise UserInputError(f"document {key} must be string", path=f"{path}[{r - 1}].{key}", **ctx)
        out.append(doc)
    return out


def _labels(ann: object, kind: str, path: str, ctx: RecordContext) -> dict[str, str]:
    if ann is None:
        return {}
    if ann.__class__ is not dict:
        ann = expect_type(ann, dict, what="annotation", path=f"{path}.annotation", **ctx)
    labels: dict[str, str] = {}
    type_field = _TYPE_FIELD_BY_KIND.get(kind)
    ann_type = ann.get("type")  # a dict here
    if type_field and ann_type is not None:
        value = canonical_value(type_field, ann_type)
        if value is None:
            raise UserInputError(
                f"label {ann_type!r} is outside the ontology for {type_field}; "
                f"allowed: {', '.join(LABEL_VALUES[type_field])}",
                path=f"{path}.annotation.type",
                **ctx,
            )
        labels[type_field] = value
    attrs = ann.get("attributes") or {}
    if attrs.__class__ is not dict:
        attrs = expect_type(attrs, dict, what="annotation attributes", path=f"{path}.annotation.attributes", **ctx)
    for name, raw in attrs.items():
        field = canonical_field(name)
        if field is None or field == "reasoning_type":
            raise UserInputError(f"unknown label field {name!r}", path=f"{path}.annotation.attributes.{name}", **ctx)
        if raw is None:
            continue
        value = canonical_value(field, raw)
        if value is None:
            raise UserInputError(
                f"label {raw!r} is outside the ontology for {field}; allowed: {', '.join(LABEL_VALUES[field])}",
                path=f"{path}.annotation.attributes.{name}",
                **ctx,
            )
        labels[field] = value
    return labels
