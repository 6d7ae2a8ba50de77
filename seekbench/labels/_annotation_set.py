"""Annotation sets: step labels kept apart from the traces, one JSONL record per label.

Several raters can label the same traces; each set is a table with columns
``trace_id, step, field, value, unscored_reason, rater, provenance``.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import pandas as pd

from .._errors import UserInputError
from .._io import iter_jsonl, write_jsonl
from .._schema_version import check_schema_version
from .._schemas import validator
from .._version import SCHEMA_VERSION
from ..traces import LABEL_FIELDS, canonical_field, canonical_value, json_path

COLUMNS = ["trace_id", "step", "field", "value", "unscored_reason", "rater", "provenance"]
_MAX_STEP = 2**63 - 1


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class AnnotationSet:
    """The labels of one or more raters for steps of some traces.

    Attributes
    ----------
    records : DataFrame
        One row per label (see ``COLUMNS``); ``value`` is canonical, or None when unscored.
    name : str
        A display name (the rater for single-rater sets, else the file name).
    """

    records: pd.DataFrame
    name: str = "labels"
    skipped: list[UserInputError] = field(default_factory=list)

    @property
    def raters(self) -> list[str]:
        return sorted(self.records["rater"].unique().tolist())

    def __len__(self) -> int:
        return len(self.records)

    def for_rater(self, rater: str) -> AnnotationSet:
        return AnnotationSet(self.records[self.records["rater"] == rater].reset_index(drop=True), name=rater)

    def to_records(self) -> list[dict]:
        out = []
        for row in self.records.itertuples(index=False):
            rec = {
                "schema_version": SCHEMA_VERSION,
                "trace_id": row.trace_id,
                "step": int(row.step),
                "field": row.field,
                "value": row.value,
                "rater": row.rater,
                "provenance": row.provenance,
            }
            if row.value is None:
                rec["unscored_reason"] = row.unscored_reason or "unscored"
            out.append(rec)
        return out

    def save(self, path: str | os.PathLike) -> int:
        """Write the set as JSONL atomically; return the number of records."""
        return write_jsonl(path, self.to_records())

    @classmethod
    def from_records(cls, records: Iterable[dict], *, name: str = "labels") -> AnnotationSet:
        df = pd.DataFrame(list(records), columns=COLUMNS)
        df["step"] = df["step"].astype("int64")
        df["value"] = df["value"].astype(object).where(df["value"].notna(), None)
        return cls(df, name=name)

    @classmethod
    def from_traces(cls, traces: Iterable[dict], *, source: str | None = None) -> AnnotationSet:
        """Split the inline labels of traces into an annotation set (rater from ``inline_labels``)."""
        now = utc_now()
        recs = []
        name = None
        for tr in traces:
            meta = tr.get("inline_labels") or {}
            rater = meta.get("rater") or f"inline:{source or 'traces'}"
            name = name or rater
            prov = {"kind": meta.get("kind", "human"), "source": source, "time": now}
            for st in tr["steps"]:
                for f, v in (st.get("labels") or {}).items():
                    if v is not None:
                        recs.append(
                            {
                                "trace_id": tr["trace_id"],
                                "step": st["index"],
                                "field": f,
                                "value": v,
                                "unscored_reason": None,
                                "rater": rater,
                                "provenance": prov,
                            }
                        )
        return cls.from_records(recs, name=name or "inline")


def load_annotations(path: str | os.PathLike, *, skip_invalid: bool = False) -> AnnotationSet:
    """Read an annotation set from JSONL, validating every record.

    Label values are normalised (case, legacy spellings); a value outside the
    ontology is a user error naming file, line, trace id and field.
    """
    file = str(path)
    recs: list[dict] = []
    skipped: list[UserInputError] = []
    n_lines = 0
    for line, obj, last in _with_last(iter_jsonl(path)):
        n_lines += 1
        try:
            if isinstance(obj, UserInputError):
                raise torn_line_error(path, line) if last and _torn(path) else obj
            recs.append(_check_record(obj, file=file, line=line))
        except UserInputError as e:
            if not skip_invalid:
                raise
            skipped.append(e)
    if n_lines == 0:
        raise UserInputError("annotation file is empty; expected one JSON label record per line", file=file)
    aset = AnnotationSet.from_records(recs, name=os.path.basename(file))
    aset.skipped = skipped
    return aset


#: The fix for an annotation set whose last line was cut off mid-record.
TORN_FIX = "re-run the annotate command that wrote it to recover it, or delete the last line"


def torn_line_error(path: str | os.PathLike, line: int) -> UserInputError:
    """The error for a last line cut off mid-record (a run stopped while writing it), with the fix."""
    return UserInputError(
        f"the last line is cut off mid-record (a run stopped while writing it: a full disk, a kill); {TORN_FIX}",
        file=str(path),
        line=line,
    )


def _torn(path: str | os.PathLike) -> bool:
    """True when the file does not end with a newline: its last line was not finished."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def _with_last(items: Iterable[tuple[int, object]]) -> Iterator[tuple[int, object, bool]]:
    """``(line, value, is_last)`` for each of ``items``."""
    it = iter(items)
    prev = next(it, None)
    while prev is not None:
        cur = next(it, None)
        yield prev[0], prev[1], cur is None
        prev = cur


def _check_record(obj: object, *, file: str, line: int) -> dict:
    tid = obj.get("trace_id") if isinstance(obj, dict) else None
    tid = tid if isinstance(tid, str) else None
    if isinstance(obj, dict):
        check_schema_version(obj.get("schema_version"), what="annotation", file=file, line=line, trace_id=tid)
        obj = dict(obj)
        if isinstance(obj.get("field"), str):
            obj["field"] = canonical_field(obj["field"]) or ("correct" if obj["field"] == "correct" else obj["field"])
    from jsonschema.exceptions import best_match

    err = best_match(validator("annotation").iter_errors(obj))
    if err is not None:
        raise UserInputError(err.message[:200], file=file, line=line, trace_id=tid, path=json_path(err.absolute_path))
    obj = cast(dict[str, Any], obj)  # the schema check above passed, and the schema requires an object
    if obj["step"] > _MAX_STEP:  # the schema's integer is unbounded; the step column is int64
        raise UserInputError(
            f"step {obj['step']} is out of range (at most {_MAX_STEP})",
            file=file,
            line=line,
            trace_id=tid,
            path="$.step",
        )
    value = obj["value"]
    if value is not None and obj["field"] in LABEL_FIELDS:
        canon = canonical_value(obj["field"], value)
        if canon is None:
            raise UserInputError(
                f"label {value!r} is outside the ontology for {obj['field']}",
                file=file,
                line=line,
                trace_id=tid,
                path="$.value",
            )
        value = canon
    return {
        "trace_id": obj["trace_id"],
        "step": obj["step"],
        "field": obj["field"],
        "value": value,
        "unscored_reason": obj.get("unscored_reason"),
        "rater": obj["rater"],
        "provenance": obj["provenance"],
    }
