"""What every importer gives back, and small helpers they share."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar, overload

from ..._errors import UserInputError
from ..._version import SCHEMA_VERSION

_T = TypeVar("_T")
_U = TypeVar("_U")
_V = TypeVar("_V")


class RecordContext(TypedDict):
    """Where a record came from, unpacked into every :class:`UserInputError` an importer raises."""

    file: str
    line: int | None
    trace_id: str | None


@dataclass
class ImportedRecord:
    """One source record after conversion: a canonical trace, or the error that stopped it.

    Exactly one of ``trace`` and ``error`` is set. ``line`` is the 1-based line
    (or record number) in the source file.
    """

    line: int | None
    trace: dict[str, Any] | None = None
    error: UserInputError | None = None
    warnings: list[str] = field(default_factory=list)
    #: Defaults the importer chose (an agent from the file name), printed once per file.
    notes: list[str] = field(default_factory=list)
    #: Where the trace's fields came from (``question`` -> ``$.prompt[120:168]``), for ``convert --explain``:
    #: a path (:mod:`._jsonpath`) into the raw record whose value is the field's or the one it was derived
    #: from, or words where no one path names it (``joined: $.task_id, $.trial``, a span of an OTel trace).
    #: A field that was not found has no entry. ``messages`` and ``tagged`` name where the steps were read.
    sources: dict[str, str] = field(default_factory=dict)
    #: True when the importer vouches that ``trace`` satisfies ``trace.schema.json`` and the step order
    #: rules of :func:`~seekbench.traces.validate_trace`, so the reader does not check it again. Only an
    #: importer that builds every part of the trace itself and checks what it copies may say so, with a
    #: property test holding its output to jsonschema (the seekbench importer: see its module docstring).
    valid: bool = False


def new_trace(
    *,
    trace_id: str,
    agent: str,
    question: str,
    fmt: str,
    file: str | None,
    line: int | None,
    record_id: str | None = None,
    path: str | None = "$",
) -> dict[str, Any]:
    """A canonical trace skeleton with the fields every importer fills.

    ``path`` is where the record sits inside its document (a JSON path); the document itself,
    ``"$"``, is recorded as no path (None).
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "trace_id": trace_id,
        "agent": agent,
        "dataset": None,
        "question_id": None,
        "question": question,
        "gold_answers": [],
        "final_answer": None,
        "correct": None,
        "source": {
            "format": fmt,
            "file": file,
            "line": line,
            "record_id": record_id,
            "path": None if path == "$" else path,
        },
        "steps": [],
    }


@overload
def expect_type(
    value: object, types: type[_T], *, what: str, file: str, line: int | None, trace_id: str | None, path: str
) -> _T: ...
@overload
def expect_type(
    value: object,
    types: tuple[type[_T], type[_U]],
    *,
    what: str,
    file: str,
    line: int | None,
    trace_id: str | None,
    path: str,
) -> _T | _U: ...
@overload
def expect_type(
    value: object,
    types: tuple[type[_T], type[_U], type[_V]],
    *,
    what: str,
    file: str,
    line: int | None,
    trace_id: str | None,
    path: str,
) -> _T | _U | _V: ...
def expect_type(
    value: Any,
    types: type | tuple[type, ...],
    *,
    what: str,
    file: str,
    line: int | None,
    trace_id: str | None,
    path: str,
) -> Any:
    """Raise the one user error wording for a field of the wrong JSON type; else return ``value``.

    The return is ``value`` itself, typed as the checked type, so callers narrow by assigning it back
    (``rec = expect_type(rec, dict, ...)``).
    """
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        names = {
            str: "string",
            int: "integer",
            float: "number",
            list: "array",
            dict: "object",
            bool: "boolean",
            type(None): "null",
        }
        want = " or ".join(names.get(t, t.__name__) for t in (types if isinstance(types, tuple) else (types,)))
        got = names.get(type(value), type(value).__name__)
        raise UserInputError(f"{what} must be {want}, got {got}", file=file, line=line, trace_id=trace_id, path=path)
    return value


def finite_score(value: object) -> float | None:
    """A document's retrieval score as a float: None for a non-number, a bool, NaN, an infinity or an
    integer beyond float range (``float(10**400)`` raises), none of which is a score.

    >>> finite_score(3), finite_score(True), finite_score(10**400), finite_score(float("nan"))
    (3.0, None, None, None)
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        score = float(value)
    except OverflowError:
        return None
    return score if math.isfinite(score) else None


def starts_with_bytes(path: str | os.PathLike, magic: bytes) -> bool:
    """True for a readable file whose first bytes are ``magic`` (a binary format's signature)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


def default_agent(file: str) -> str:
    """The agent of a file that names none: its stem (``runs/qwen-7b.jsonl`` -> ``qwen-7b``)."""
    return os.path.splitext(os.path.basename(file))[0] or os.path.basename(file)


def agent_note(file: str) -> str:
    """The one note line saying the agent came from the file name."""
    return f"note: {file} names no agent; using its file name {default_agent(file)!r} (pass --agent NAME to set one)"
