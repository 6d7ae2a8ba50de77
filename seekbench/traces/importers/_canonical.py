"""Reader for seekbench's own canonical JSONL (schemas/trace.schema.json)."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..._errors import UserInputError
from ..._io import iter_jsonl
from ..._limits import DEFAULT_LIMITS, ReadLimits
from ._base import ImportedRecord

FORMAT = "canonical"


def sniff(path: str, head: str, first: object) -> bool:
    return isinstance(first, dict) and "schema_version" in first and "steps" in first and "trace_id" in first


def iter_records(path: str | os.PathLike, *, limits: ReadLimits | None = None) -> Iterator[ImportedRecord]:
    """Yield the canonical traces of a JSONL file; validation happens in the loader."""
    file = str(path)
    for line, obj in iter_jsonl(path, max_bytes=(limits or DEFAULT_LIMITS).record_bytes):
        if isinstance(obj, UserInputError):
            yield ImportedRecord(line, error=obj)
        elif not isinstance(obj, dict):
            yield ImportedRecord(
                line, error=UserInputError("record must be a JSON object", file=file, line=line, path="$")
            )
        else:
            src = obj.get("source")
            if isinstance(src, dict) and src.get("line") is None and src.get("file") is None:
                src.update({"file": file, "line": line})
            yield ImportedRecord(line, trace=obj, sources=_sources(obj))


#: Trace field -> the canonical key it is read from (``correct`` from its value).
_FIELDS = {
    "trace_id": "$.trace_id",
    "agent": "$.agent",
    "question": "$.question",
    "final_answer": "$.final_answer",
    "gold_answers": "$.gold_answers",
    "correct": "$.correct.value",
    "dataset": "$.dataset",
}


def _sources(obj: dict) -> dict[str, str]:
    """The fields a canonical trace holds, each read at its own key (``convert --explain``)."""
    out = {}
    for name, path in _FIELDS.items():
        value = obj.get(name)
        if name == "correct":
            value = value.get("value") if isinstance(value, dict) else None
        if value not in (None, []):
            out[name] = path
    return out
