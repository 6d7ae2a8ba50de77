"""Normalise annotation sets and line up two raters' labels of the same (trace, step, field)."""

from __future__ import annotations

import pandas as pd

from .._errors import UserInputError
from ..labels import AnnotationSet
from ..traces import LABEL_FIELDS, LABEL_VALUES, canonical_field, canonical_value

#: Label fields the agreement tables cover, in this order (``correct`` is the answer's).
FIELDS = (*LABEL_FIELDS, "correct")
_CORRECT = {
    "true": "true",
    "false": "false",
    "1": "true",
    "0": "false",
    "yes": "true",
    "no": "false",
    "correct": "true",
    "incorrect": "false",
}

#: Why an aligned item is not compared (the ``status`` of :func:`align_pair`; ``"rule-derived"``:
#: the judge's label there came from a rule, not from the judge, and is scored as the rule's).
STATUSES = ("compared", "reference only", "rater only", "unscored by rater", "unscored by reference", "rule-derived")
KEYS = ["trace_id", "step", "field"]


def field_labels(field: str) -> tuple[str, ...]:
    """The possible values of a field, in canonical spelling."""
    return ("true", "false") if field == "correct" else LABEL_VALUES[field]


def _canonical_correct(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _CORRECT.get(value.strip().lower())
    return None


def normalize_annotations(labels: AnnotationSet) -> AnnotationSet:
    """A copy with canonical field names and values (case, spacing, legacy spellings).

    ``groundness`` becomes ``grounding``, ``Not Grounded`` and ``not_grounded`` become
    ``NotGrounded`` (the one alias table, :mod:`seekbench.traces._ontology`); ``correct``
    values become ``"true"``/``"false"``. Unscored records (value None) stay unscored.
    Duplicate records of one (trace, step, field, rater) keep the last.

    Raises
    ------
    UserInputError
        A field or value outside the ontology, naming the trace, step and rater.

    Examples
    --------
    >>> raw = AnnotationSet.from_records([{"trace_id": "t", "step": 0, "field": "groundness",
    ...     "value": "Not Grounded", "unscored_reason": None, "rater": "j", "provenance": {"kind": "judge"}}])
    >>> normalize_annotations(raw).records[["field", "value"]].values.tolist()
    [['grounding', 'NotGrounded']]
    """
    recs = labels.records
    fields, values = [], []
    for row in recs.itertuples(index=False):
        f = row.field if row.field == "correct" else canonical_field(str(row.field))
        if f is None:
            raise UserInputError(
                f"unknown label field {row.field!r} (step {row.step}, rater {row.rater}); "
                f"choose one of: {', '.join(FIELDS)}",
                trace_id=str(row.trace_id),
            )
        v = row.value
        if v is not None:
            v = _canonical_correct(v) if f == "correct" else canonical_value(f, v)
            if v is None:
                raise UserInputError(
                    f"label {row.value!r} is outside the ontology for {f} (step {row.step}, "
                    f"rater {row.rater}); allowed: {', '.join(field_labels(f))}",
                    trace_id=str(row.trace_id),
                )
        fields.append(f)
        values.append(v)
    out = recs.assign(field=fields, value=pd.Series(values, index=recs.index, dtype=object))
    out = out.drop_duplicates(["trace_id", "step", "field", "rater"], keep="last").reset_index(drop=True)
    out["trace_id"] = out["trace_id"].astype(str)
    return AnnotationSet(out, name=labels.name, skipped=list(labels.skipped))


def split_raters(labels: AnnotationSet) -> list[AnnotationSet]:
    """One single-rater set per rater of ``labels`` (a set with one rater is returned as is)."""
    raters = list(dict.fromkeys(labels.records["rater"]))
    if len(raters) <= 1:
        return [
            labels if not raters else AnnotationSet(labels.records, name=str(raters[0]), skipped=list(labels.skipped))
        ]
    return [labels.for_rater(r) for r in raters]


def align_pair(reference: AnnotationSet, rater: AnnotationSet, field: str) -> pd.DataFrame:
    """Every (trace, step) either set has a ``field`` record for, with both values and a status.

    Returns
    -------
    DataFrame
        Columns ``trace_id, step, reference, rater, status``; ``status`` is ``"compared"``
        (both labeled) or the reason the item is excluded: ``"reference only"`` (the rater
        has no record), ``"rater only"``, ``"unscored by rater"`` (its record has no value,
        whatever the reference says) or ``"unscored by reference"``.

    Examples
    --------
    >>> def rec(step, value, rater):
    ...     return {"trace_id": "t", "step": step, "field": "grounding", "value": value,
    ...             "unscored_reason": None if value else "parse failure", "rater": rater, "provenance": {}}
    >>> ref = AnnotationSet.from_records([rec(0, "Grounded", "h"), rec(1, "Grounded", "h")])
    >>> judge = AnnotationSet.from_records([rec(0, "Grounded", "j"), rec(1, None, "j"), rec(2, "Grounded", "j")])
    >>> align_pair(ref, judge, "grounding")["status"].tolist()
    ['compared', 'unscored by rater', 'rater only']
    """

    def part(s: AnnotationSet, name: str) -> pd.DataFrame:
        r = s.records
        r = r.loc[r["field"] == field, ["trace_id", "step", "value"]].drop_duplicates(["trace_id", "step"], keep="last")
        return r.rename(columns={"value": name})

    m = part(reference, "reference").merge(
        part(rater, "rater"), on=["trace_id", "step"], how="outer", indicator=True, sort=True
    )
    ref_v = m["reference"].notna()
    rat_v = m["rater"].notna()
    status = pd.Series("compared", index=m.index, dtype=object)
    status[m["_merge"] == "left_only"] = "reference only"
    status[m["_merge"] == "right_only"] = "rater only"
    both = m["_merge"] == "both"
    status[both & ~rat_v] = "unscored by rater"
    status[both & rat_v & ~ref_v] = "unscored by reference"
    status[(m["_merge"] == "left_only") & ~ref_v] = "unscored by reference"
    status[(m["_merge"] == "right_only") & ~rat_v] = "unscored by rater"
    out = m.drop(columns="_merge").assign(status=status)
    for c in ("reference", "rater"):
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out.reset_index(drop=True)


def rater_sets(reference: AnnotationSet, raters: tuple[AnnotationSet, ...]) -> dict[str, AnnotationSet]:
    """The reference and every rater as normalised single-rater sets, keyed by rater name (reference first).

    Raises
    ------
    UserInputError
        The reference holds several raters, or a rater name occurs twice.
    """
    ref = split_raters(normalize_annotations(reference))
    if len(ref) != 1:
        raise UserInputError(
            f"the reference must hold one rater, found {len(ref)}: "
            f"{', '.join(s.name for s in ref)}; select one with AnnotationSet.for_rater"
        )
    out = {ref[0].name: ref[0]}
    for s in raters:
        for part in split_raters(normalize_annotations(s)):
            if part.name in out:
                raise UserInputError(
                    f"rater {part.name!r} appears twice (reference or another set); rater names must be unique"
                )
            out[part.name] = part
    return out
