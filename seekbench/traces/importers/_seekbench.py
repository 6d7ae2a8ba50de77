"""Importer for SeekBench JSONL (the format of the SeekBench release, labels included).

One record per line: ``question``, ``ground_truth``, ``is_correct``, ``reward``,
``final_answer``, ``model`` (the agent), ``dataset``, ``id`` and ``trace``, a
list of steps typed ``reasoning`` / ``search`` / ``search_result`` /
``CorrectAnswer`` / ``IncorrectAnswer`` with an ``annotation`` holding
the step type label and ``attributes`` (legacy spellings such as
``groundness: "Not Grounded"``, ``information_clarity``, ``information_quality``).

The traces come out valid by construction, so the reader does not validate them again
(:attr:`ImportedRecord.valid`; issue 28: validating them cost about a fifth of reading the 1x
release corpus). The converter builds every object of the trace itself, from literals, with the
keys the schema allows, and checks the type of every value it copies (``expect_type``, or the
exact class first). Labels are canonical spellings, so inside their enums; the step kind is a
step kind. What the schema or the order rules ask beyond types is checked after conversion by
:func:`_valid_as_built`: non-empty trace id, agent and rater, a line >= 1, step indices in
[0, 2**63 - 1] and increasing, ``depends_on`` naming earlier steps. A trace that fails it is
validated as every other importer's, which words the error as before.
``tests/traces/importers/test_seekbench_valid.py`` holds this to jsonschema on fuzzed records:
a converted trace is vouched for exactly when jsonschema and the order rules accept it. A change
to the converter or the schema that breaks this fails there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..._errors import UserInputError
from ..._io import iter_jsonl
from ..._limits import DEFAULT_LIMITS, ReadLimits
from .._ontology import LABEL_VALUES, canonical_field, canonical_kind, canonical_value
from .._trace_check import INT64_MAX
from ._base import ImportedRecord, RecordContext, expect_type, finite_score, new_trace

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
    names = _Spellings()
    for line, obj in iter_jsonl(path, max_bytes=(limits or DEFAULT_LIMITS).record_bytes):
        if isinstance(obj, UserInputError):
            yield ImportedRecord(line, error=obj)
            continue
        try:
            sources: dict[str, str] = {}
            trace = convert(obj, file=file, line=line, rater=rater, sources=sources, names=names)
            yield ImportedRecord(line, trace=trace, sources=sources, valid=_valid_as_built(trace))
        except UserInputError as e:
            yield ImportedRecord(line, error=e)


def convert(
    rec: object,
    *,
    file: str,
    line: int | None,
    rater: str,
    sources: dict[str, str] | None = None,
    names: _Spellings | None = None,
) -> dict[str, Any]:
    """Convert one parsed SeekBench record; ``sources`` (when given) gets the path each field was read at,
    ``names`` keeps the spellings of step types and labels seen so far (one per file)."""
    sources = {} if sources is None else sources
    # Types are tested by exact class first, as in _convert_step; expect_type words the error.
    if rec.__class__ is not dict:
        rec = expect_type(rec, dict, what="record", file=file, line=line, trace_id=None, path="$")
    rid = rec.get("id")
    trace_id = str(rid) if rid is not None else f"{os.path.basename(file)}:{line}"
    ctx: RecordContext = {"file": file, "line": line, "trace_id": trace_id}
    question = rec.get("question")
    if question.__class__ is not str:
        question = expect_type(question, str, what="question", path="$.question", **ctx)
    agent_key = "agent" if "agent" in rec else "model"
    agent = rec.get(agent_key)
    if agent is None:
        raise UserInputError("missing agent (the 'model' field); add the agent name", path="$.model", **ctx)
    if agent.__class__ is not str:
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
        if dataset.__class__ is not str:
            dataset = expect_type(dataset, str, what="dataset", path="$.dataset", **ctx)
        sources["dataset"] = "$.dataset"
    trace["dataset"] = dataset
    gold_key = "ground_truth" if "ground_truth" in rec else "gold_answers"
    if gold_key in rec:
        sources["gold_answers"] = f"$.{gold_key}"
    gold = rec.get("ground_truth", rec.get("gold_answers", []))
    if isinstance(gold, str):
        gold = [gold]
    if gold.__class__ is not list:
        gold = expect_type(gold, list, what="ground_truth", path="$.ground_truth", **ctx)
    for i, g in enumerate(gold):
        if g.__class__ is not str:
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
        if is_correct.__class__ is not bool:
            is_correct = expect_type(is_correct, bool, what="is_correct", path="$.is_correct", **ctx)
        trace["correct"] = {
            "value": is_correct,
            "source": "source_data",
            "detail": {"field": "is_correct", "reward": rec.get("reward")},
        }
    steps = rec.get("trace")
    if steps.__class__ is not list:
        steps = expect_type(steps, list, what="trace", path="$.trace", **ctx)
    trace["inline_labels"] = {"rater": rater, "kind": "human"}
    names = _Spellings() if names is None else names
    paths = names.step_paths(len(steps))
    trace["steps"] = [_convert_step(s, pos, paths[pos], ctx, names) for pos, s in enumerate(steps)]
    extra = {k: v for k, v in rec.items() if k not in _KEPT}
    if extra:
        trace["metadata"] = extra
    return trace


def _valid_as_built(trace: dict[str, Any]) -> bool:
    """True when a trace made by :func:`convert` satisfies what its construction does not ensure (see
    the module docstring); then it satisfies the whole schema and the order rules."""
    line = trace["source"]["line"]
    rater = trace["inline_labels"]["rater"]
    if not (
        trace["trace_id"]
        and trace["agent"]
        and rater.__class__ is str
        and rater
        and trace["source"]["file"].__class__ is str
        and (line is None or (line.__class__ is int and line >= 1))
    ):
        return False
    previous = -1
    seen: set[int] = set()
    for step in trace["steps"]:
        index = step["index"]
        if not previous < index <= INT64_MAX:
            return False
        if "depends_on" in step:
            for dep in step["depends_on"]:
                if dep not in seen:  # an int (converted so), hence no True == 1 confusion
                    return False
        seen.add(index)
        previous = index
    return True


def _question_id(rec: dict[str, Any], dataset: str | None) -> str | None:
    qid = rec.get("question_id")
    if qid is not None:
        return str(qid)
    q = rec.get("question")
    # Several agents answer the same question: the question text identifies it within a dataset.
    return f"{dataset or ''}::{' '.join(q.split()).lower()}" if isinstance(q, str) else None


#: Spellings kept per table of :class:`_Spellings`: a real file has a few dozen; a file with a new step type
#: on every line must not grow the reader's memory (the rest are worked out each time, as before).
_MAX_SPELLINGS = 1024


class _Spellings:
    """The canonical step kind, label field and label value of each spelling one file uses, worked out
    once per file: a file spells its few step types and labels over and over (a dict lookup per label
    instead of squashing the spelling each time; ``scripts/bench/release_speed.py``)."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}
        self.fields: dict[str, str] = {}
        self.values: dict[str, dict[str, str]] = {f: {} for f in LABEL_VALUES}
        self.paths: list[str] = []  # "$.trace[i]" at i: every trace's steps have the same paths

    def step_paths(self, n: int) -> list[str]:
        """The paths of the first ``n`` steps of a record (the steps' ``source_ref.path``), made once
        per file: about a tenth of converting a step went to formatting its path."""
        paths = self.paths
        while len(paths) < n:
            paths.append(f"$.trace[{len(paths)}]")
        return paths

    def kind(self, raw: object, path: str, ctx: RecordContext) -> str:
        """The step kind of the step type ``raw`` (``other`` for a string outside the aliases)."""
        kind = canonical_kind(raw)
        if kind is None:
            if not isinstance(raw, str):
                raise UserInputError("step type missing or not a string", path=f"{path}.type", **ctx)
            kind = "other"
        if raw.__class__ is str and len(self.kinds) < _MAX_SPELLINGS:
            self.kinds[raw] = kind
        return kind

    def field(self, name: str, path: str, ctx: RecordContext) -> str:
        """The label field an attribute ``name`` names (the step type's own field is no attribute)."""
        field = canonical_field(name)
        if field is None or field == "reasoning_type":
            raise UserInputError(f"unknown label field {name!r}", path=f"{path}.annotation.attributes.{name}", **ctx)
        if name.__class__ is str and len(self.fields) < _MAX_SPELLINGS:
            self.fields[name] = field
        return field

    def value(self, field: str, raw: object, where: str, ctx: RecordContext) -> str:
        """The canonical label of ``raw`` for ``field``; ``where`` is the path of ``raw`` for the error."""
        value = canonical_value(field, raw)
        if value is None:
            raise UserInputError(
                f"label {raw!r} is outside the ontology for {field}; allowed: {', '.join(LABEL_VALUES[field])}",
                path=where,
                **ctx,
            )
        if raw.__class__ is str and len(self.values[field]) < _MAX_SPELLINGS:
            self.values[field][raw] = value
        return value


def _convert_step(s: object, pos: int, path: str, ctx: RecordContext, names: _Spellings) -> dict[str, Any]:
    # The common case is tested by exact class first (``x.__class__ is str``: what a JSON parser
    # makes) and spellings are looked up in ``names``; anything else goes to expect_type (which
    # accepts subclasses or raises the one wording) or to ``names``, which works the spelling out.
    # Paths of errors are made only when there is an error; ``path`` is the step's (its source_ref's).
    if s.__class__ is not dict:
        s = expect_type(s, dict, what="step", path=path, **ctx)
    get = s.get
    raw_type = get("type")
    kind = names.kinds.get(raw_type) if raw_type.__class__ is str else None
    if kind is None:
        kind = names.kind(raw_type, path, ctx)
    index = get("step_index", pos)
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
    text = get("content")
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
        step["documents"] = _documents(s["documents"], path, ctx)
    dependency = get("trace_dependency")
    if dependency is not None and isinstance(dependency, dict):
        dep = dependency.get("dependent_on")
        if dep is not None:
            if dep.__class__ is int:
                step["depends_on"] = [dep]
            else:
                deps = dep if isinstance(dep, list) else [dep]
                for d in deps:
                    if d.__class__ is not int:
                        expect_type(d, int, what="dependent_on", path=f"{path}.trace_dependency.dependent_on", **ctx)
                step["depends_on"] = list(deps)
    ann = get("annotation")
    if ann is not None:
        labels = _labels(ann, kind, path, ctx, names)
        if labels:
            step["labels"] = labels
    return step


def _documents(docs: object, step_path: str, ctx: RecordContext) -> list[dict[str, Any]]:
    if docs.__class__ is not list:
        docs = expect_type(docs, list, what="documents", path=f"{step_path}.documents", **ctx)
    out: list[dict[str, Any]] = []
    append = out.append
    for r, d in enumerate(docs, start=1):
        if d.__class__ is not dict:
            if isinstance(d, str):
                append({"id": None, "title": None, "text": d, "rank": r})
                continue
            d = expect_type(d, dict, what="document", path=f"{step_path}.documents[{r - 1}]", **ctx)
        get = d.get
        did = get("id")
        title = get("title")
        text = d["content"] if "content" in d else get("text")
        doc: dict[str, Any] = {
            "id": None if did is None else str(did),
            "title": title,
            "text": text,
            "rank": r,
        }
        score = get("score")
        if score is not None:
            score = finite_score(score)  # a retrieval score is kept only as a finite number
            if score is not None:
                doc["score"] = score
        url = get("url")
        if url is not None and isinstance(url, str):
            doc["url"] = url
        if title is not None and title.__class__ is not str and not isinstance(title, str):
            raise UserInputError("document title must be string", path=f"{step_path}.documents[{r - 1}].title", **ctx)
        if text is not None and text.__class__ is not str and not isinstance(text, str):
            raise UserInputError("document text must be string", path=f"{step_path}.documents[{r - 1}].text", **ctx)
        append(doc)
    return out


def _labels(ann: object, kind: str, path: str, ctx: RecordContext, names: _Spellings) -> dict[str, str]:
    if ann.__class__ is not dict:
        ann = expect_type(ann, dict, what="annotation", path=f"{path}.annotation", **ctx)
    labels: dict[str, str] = {}
    type_field = _TYPE_FIELD_BY_KIND.get(kind)
    if type_field is not None:
        raw = ann.get("type")
        if raw is not None:
            value = names.values[type_field].get(raw) if raw.__class__ is str else None
            labels[type_field] = value or names.value(type_field, raw, f"{path}.annotation.type", ctx)
    attrs = ann.get("attributes") or {}
    if attrs.__class__ is not dict:
        attrs = expect_type(attrs, dict, what="annotation attributes", path=f"{path}.annotation.attributes", **ctx)
    fields, values = names.fields, names.values
    for name, raw in attrs.items():
        field = fields.get(name) or names.field(name, path, ctx)
        if raw is None:
            continue
        value = values[field].get(raw) if raw.__class__ is str else None
        labels[field] = value or names.value(field, raw, f"{path}.annotation.attributes.{name}", ctx)
    return labels
