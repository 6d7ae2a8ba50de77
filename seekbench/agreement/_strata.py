"""What is compared with what: label field x step kind, and whose label it is (spec section 9).

Agreement is measured per label field *and* step kind: grounding of a reasoning step
(does the reasoning follow from the evidence?) and grounding of a search step (does the
query follow from it?) are different questions, with different base rates, and one kappa
over both would mix them. Labels derived by rule (InitialQuery, RepeatQuery;
``provenance.kind == "rule"``) are facts of the trace, not a judge's decisions: they are
split off every judge and scored apart, as the rule's.
"""

from __future__ import annotations

import pandas as pd

from ..labels import AnnotationSet
from ..traces import FIELDS_BY_KIND, STEP_KINDS

#: The row that pools every stratum (stratified: each keeps its own chance agreement).
POOLED_FIELD = "all (pooled)"
POOLED_KIND = "all"
#: The rater that holds every judge's rule-derived labels.
RULE_RATER = "rule-derived"
#: Step kind of a labeled step that is in no trace given and whose kind the labels do not tell.
UNKNOWN_KIND = "unknown"
_KIND_ORDER = {k: i for i, k in enumerate((*STEP_KINDS, UNKNOWN_KIND))}
#: Fields that belong to one step kind only (grounding belongs to two).
_ONLY_KIND = {
    f: kinds[0]
    for f in {f for fs in FIELDS_BY_KIND.values() for f in fs}
    if len(kinds := [k for k, fs in FIELDS_BY_KIND.items() if f in fs]) == 1
}
_ONLY_KIND["correct"] = "answer"


def stratum_label(field: str, kind: str) -> str:
    """``"grounding (reasoning)"``: how a (field, step kind) stratum is named in tables."""
    return field if field == POOLED_FIELD else f"{field} ({kind})"


def step_kinds(traces: list[dict] | None, *sets: AnnotationSet) -> dict[tuple[str, int], str]:
    """The kind of every (trace id, step index): from the traces, else told by the labels.

    Without traces (or for a step not in them) a step labeled with a field of one kind only
    (``reasoning_type``, ``search_type``, ``clarity``, ``sufficiency``, ``correct``) in any set
    has that kind; a step labeled only with ``grounding`` stays :data:`UNKNOWN_KIND`.
    """
    kinds: dict[tuple[str, int], str] = {}
    for s in sets:
        r = s.records
        for t, st, f in zip(r["trace_id"].astype(str), r["step"], r["field"], strict=True):
            kind = _ONLY_KIND.get(f)
            if kind is not None:
                kinds.setdefault((t, int(st)), kind)
    for tr in traces or ():
        tid = str(tr["trace_id"])
        for st in tr.get("steps") or ():
            kinds[(tid, int(st["index"]))] = st["kind"]
    return kinds


def kind_column(frame: pd.DataFrame, kinds: dict[tuple[str, int], str]) -> pd.Series:
    """The step kind of each (``trace_id``, ``step``) row of ``frame``."""
    return pd.Series(
        [kinds.get((str(t), int(s)), UNKNOWN_KIND) for t, s in zip(frame["trace_id"], frame["step"], strict=True)],
        index=frame.index,
        dtype=object,
    )


def strata(sets: list[AnnotationSet], fields: list[str], kinds: dict[tuple[str, int], str]) -> list[tuple[str, str]]:
    """The (field, step kind) pairs any set labels, in field order then step-kind order."""
    seen: set[tuple[str, str]] = set()
    for s in sets:
        r = s.records[s.records["field"].isin(fields)]
        seen.update(zip(r["field"], kind_column(r, kinds), strict=True))
    return sorted(seen, key=lambda fk: (fields.index(fk[0]), _KIND_ORDER.get(fk[1], len(_KIND_ORDER))))


def split_rule_derived(labels: AnnotationSet) -> tuple[AnnotationSet, AnnotationSet]:
    """``(judged, rule)``: the records a judge decided, and those derived by rule.

    Examples
    --------
    >>> recs = [{"trace_id": "t", "step": 0, "field": "search_type", "value": "InitialQuery",
    ...          "unscored_reason": None, "rater": "j", "provenance": {"kind": "rule"}},
    ...         {"trace_id": "t", "step": 2, "field": "search_type", "value": "RefinedQuery",
    ...          "unscored_reason": None, "rater": "j", "provenance": {"kind": "judge"}}]
    >>> judged, rule = split_rule_derived(AnnotationSet.from_records(recs, name="j"))
    >>> judged.records["step"].tolist(), rule.records["step"].tolist()
    ([2], [0])
    """
    r = labels.records
    is_rule = r["provenance"].map(lambda p: isinstance(p, dict) and p.get("kind") == "rule").astype(bool)
    judged = AnnotationSet(r[~is_rule].reset_index(drop=True), name=labels.name, skipped=list(labels.skipped))
    rule = AnnotationSet(r[is_rule].reset_index(drop=True), name=labels.name)
    return judged, rule


def rule_rater(rule_sets: list[AnnotationSet]) -> AnnotationSet | None:
    """Every judge's rule-derived labels as one rater, :data:`RULE_RATER` (the first judge's
    record wins where two carry one for the same step); None when there are none."""
    frames = [s.records for s in rule_sets if len(s.records)]
    if not frames:
        return None
    recs = pd.concat(frames, ignore_index=True).drop_duplicates(["trace_id", "step", "field"], keep="first")
    return AnnotationSet(recs.assign(rater=RULE_RATER).reset_index(drop=True), name=RULE_RATER)
