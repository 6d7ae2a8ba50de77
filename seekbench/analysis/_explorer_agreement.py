"""The trace explorer's judge-vs-reference table and its links: ``seekbench agree``'s numbers, not new ones.

Each table row is a row of :attr:`seekbench.agreement.AgreementResult.summary` (per rater, label
field and step kind, then the rater's ``all (pooled)`` row; the judges' rule-derived labels apart,
as the rater ``rule-derived``), copied as it is. The traces a row links to are where that rater
disagrees with the reference in that stratum, read from :attr:`AgreementResult.disagreements`,
the items behind the confusion matrices' off-diagonal cells.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from ..agreement import PANEL_RATER, POOLED_FIELD, RULE_RATER, AgreementResult
from ..labels import AnnotationSet

#: Provenance keys read, in this order, as a judge's explanation of its label.
EXPLANATION_KEYS = ("explanation", "rationale", "reasoning", "reason")
#: The summary columns each explorer row carries (the agreement table's columns).
ROW_COLUMNS = (
    "rater",
    "field",
    "step_kind",
    "n_compared",
    "n_excluded",
    "n_rule_derived",
    "n_unresolved_ties",
    "n_traces",
    "raw_agreement",
    "kappa",
    "kappa_lower",
    "kappa_upper",
    "ac1",
    "ac1_lower",
    "ac1_upper",
    "note",
)


def _explanation(provenance, unscored_reason=None) -> str | None:
    if isinstance(provenance, dict):
        for key in EXPLANATION_KEYS:
            text = provenance.get(key)
            if isinstance(text, str) and text.strip():
                return text.strip()
        if provenance.get("kind") == "rule" and provenance.get("rule"):
            rep = provenance.get("repeat_of")
            return f"rule {provenance['rule']}" + (f" (repeats step {rep})" if rep is not None else "")
    return unscored_reason or None


def _json_value(v):
    """Numbers and strings as JSON takes them: NaN (no coefficient) is None, numpy scalars Python ones."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _explanations(result: AgreementResult, judges: Sequence[AnnotationSet]) -> dict:
    """(rater, trace id, step, field) -> the explanation of each disagreeing label that has a record.

    A judge's label is its own record; a rule-derived one is the first judge's rule record at that
    step (as :data:`RULE_RATER` is formed); the panel's label has none.
    """
    d = result.disagreements
    wanted = set(zip(d["trace_id"], d["step"], d["field"], strict=True))
    names = {j.name for j in judges}
    out: dict = {}
    for j in judges:
        r = j.records
        for t, s, f, p, u in zip(
            r["trace_id"].astype(str), r["step"], r["field"], r["provenance"], r["unscored_reason"], strict=True
        ):
            key = (t, int(s), f)
            if key not in wanted:
                continue
            is_rule = isinstance(p, dict) and p.get("kind") == "rule"
            rater = RULE_RATER if is_rule and RULE_RATER not in names else j.name
            out.setdefault((rater, *key), _explanation(p, u))
    return out


def explorer_agreement(
    result: AgreementResult, judges: Sequence[AnnotationSet], order: Sequence[str]
) -> tuple[dict, dict[str, list[dict]]]:
    """The explorer's agreement table and each trace's disagreements, from one agreement result.

    Parameters
    ----------
    result : AgreementResult
        :func:`seekbench.agreement.compare_annotations` of the reference and the judges (the
        report's, or ``seekbench agree``'s with the same inputs and options).
    judges : sequence of AnnotationSet
        The judges as single-rater sets (their label provenance gives the explanations).
    order : sequence of str
        The explorer's trace ids in index order.

    Returns
    -------
    (dict, dict)
        ``{"reference", "n_boot", "seed", "alpha", "rows"}``: ``rows`` holds per summary row its
        :data:`ROW_COLUMNS` (NaN as None), ``n_disagree`` (items where the rater's label is not
        the reference's: ``n_compared`` x (1 - ``raw_agreement``)) and ``traces`` (the index
        positions of the traces with one, ascending; a pooled row's: any of its rater's strata).
        Then trace id -> its disagreements (``step``, ``field``, ``kind``, ``reference``,
        ``judge``, ``rater``, ``explanation``), by step, field and rater.
    """
    pos = {str(t): i for i, t in enumerate(order)}
    d = result.disagreements
    why = _explanations(result, judges)
    traces_of: dict = defaultdict(set)
    n_of: dict = defaultdict(int)
    by_trace: dict[str, list[dict]] = defaultdict(list)
    for rater, fld, kind, tid, step, ref, val in zip(
        d["rater"],
        d["field"],
        d["step_kind"],
        d["trace_id"].astype(str),
        d["step"],
        d["reference_value"],
        d["rater_value"],
        strict=True,
    ):
        for key in ((rater, fld, kind), (rater, POOLED_FIELD)):
            n_of[key] += 1
            if tid in pos:
                traces_of[key].add(pos[tid])
        by_trace[tid].append(
            {
                "step": int(step),
                "field": fld,
                "kind": kind,
                "reference": str(ref),
                "judge": str(val),
                "rater": rater,
                "explanation": None if rater == PANEL_RATER else why.get((rater, tid, int(step), fld)),
            }
        )
    rank = {r: i for i, r in enumerate(result.raters)}
    for items in by_trace.values():
        items.sort(key=lambda x: (x["step"], x["field"], rank.get(x["rater"], len(rank))))
    rows = []
    for rec in result.summary.to_dict("records"):
        key = (
            (rec["rater"], POOLED_FIELD)
            if rec["field"] == POOLED_FIELD
            else (rec["rater"], rec["field"], rec["step_kind"])
        )
        row = {c: _json_value(rec.get(c)) for c in ROW_COLUMNS}
        row["n_disagree"] = int(n_of.get(key, 0))
        row["traces"] = sorted(traces_of.get(key, ()))
        rows.append(row)
    opts = result.options
    meta = {
        "reference": result.reference,
        "n_boot": opts.get("n_boot"),
        "seed": opts.get("seed"),
        "alpha": opts.get("alpha"),
        "rows": rows,
    }
    return meta, dict(by_trace)
