"""Judge vs. human: every agreement number of spec section 9 for two or more annotation sets."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ..labels import AnnotationSet
from ._align import FIELDS, STATUSES, align_pair, field_labels, rater_sets
from ._fleiss import fleiss_kappa
from ._judge_costs import judge_costs
from ._krippendorff import krippendorff_alpha
from ._pairs import (
    ac1_from_confusion,
    ac1_parts,
    check_boot,
    confusion,
    confusion_columns,
    encode_pairs,
    interval,
    kappa_from_confusion,
    resampled_sums,
)
from ._panel import PANEL_RATER, PanelResult, panel_annotation_set

SUMMARY_COLUMNS = ["rater", "field", "n_compared", "n_excluded", *[f"n_{s.replace(' ', '_')}" for s in STATUSES[1:]],
                   "n_traces", "raw_agreement", "kappa", "kappa_lower", "kappa_upper", "ac1", "ac1_lower",
                   "ac1_upper"]
OVERALL = "overall"


@dataclass
class AgreementResult:
    """What :func:`compare_annotations` computes.

    Attributes
    ----------
    reference : str
        The reference rater (e.g. the human annotators).
    raters : list of str
        The raters compared with it: each judge, then the majority panel when there is one.
    fields : list of str
    summary : DataFrame
        One row per (rater, field) and per rater for ``field == "overall"``: ``n_compared``,
        ``n_excluded`` and its reasons (``n_reference_only``, ``n_rater_only``,
        ``n_unscored_by_rater``, ``n_unscored_by_reference``), ``n_traces``,
        ``raw_agreement``, Cohen's ``kappa`` and Gwet's ``ac1`` with 95% bootstrap CIs over
        whole traces. The overall row stratifies by field: p_o and the chance agreement p_e
        are n-weighted means of the fields' (a label of one field never matches another
        field's by chance), then kappa = (p_o - p_e) / (1 - p_e).
    confusion : dict
        ``(rater, field) -> DataFrame`` of counts, rows the reference's labels.
    prevalence : DataFrame
        Per rater, field and label: its share among the reference's and the rater's labels
        on the compared items, and pooled.
    exclusions : DataFrame
        ``rater, field, reason, n``: the items not compared and why.
    multi_rater : DataFrame
        With three or more raters (reference and judges, not the panel), per field:
        Krippendorff's alpha (nominal, all pairable items) and Fleiss' kappa (items every
        rater labeled) with CIs and item counts. Empty otherwise.
    pairwise : dict
        ``field -> DataFrame``: Cohen's kappa of every pair of raters (reference, judges,
        panel) on the items both labeled; diagonal 1.
    panel : PanelResult or None
    costs : DataFrame
        Per judge (and the panel, whose cost is its members' sum): see
        :func:`~seekbench.agreement.judge_costs`.
    sensitivity : SensitivityResult or None
        With ``traces``: how far each rater's labels move RQI, CE and ERF(8) per agent.
    """

    reference: str
    raters: list[str]
    fields: list[str]
    summary: pd.DataFrame
    confusion: dict
    prevalence: pd.DataFrame
    exclusions: pd.DataFrame
    multi_rater: pd.DataFrame
    pairwise: dict
    panel: PanelResult | None
    costs: pd.DataFrame
    sensitivity: object | None = None
    options: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready (NaN stays NaN here; ``seekbench.traces._io.dumps`` writes it as null)."""
        out = {
            "reference": self.reference, "raters": self.raters, "fields": self.fields,
            "summary": self.summary.to_dict("records"),
            "confusion": [{"rater": r, "field": f, "labels": [str(x) for x in m.index],
                           "matrix": m.to_numpy().tolist()} for (r, f), m in self.confusion.items()],
            "prevalence": self.prevalence.to_dict("records"),
            "exclusions": self.exclusions.to_dict("records"),
            "multi_rater": self.multi_rater.to_dict("records"),
            "pairwise": {f: m.to_dict() for f, m in self.pairwise.items()},
            "panel": None if self.panel is None else self.panel.summary.iloc[0].to_dict(),
            "costs": self.costs.to_dict("records"),
            "sensitivity": None if self.sensitivity is None else {
                "table": self.sensitivity.table.to_dict("records"),
                "rankings": self.sensitivity.rankings.to_dict("records"),
                "options": self.sensitivity.options},
            "options": self.options, "warnings": self.warnings,
        }
        return out


def _stratified(blocks: list[np.ndarray], qs: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overall (p_o, kappa, AC1) over fields from per-field confusion stacks ``(B, q, q)``."""
    n = sum(b.sum(axis=(1, 2)) for b in blocks)
    agree = sum(np.trace(b, axis1=1, axis2=2) for b in blocks)
    pe_c = np.zeros_like(n)
    pe_g = np.zeros_like(n)
    for b, q in zip(blocks, qs):
        nf = b.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            rc = (b.sum(axis=2) * b.sum(axis=1)).sum(axis=1)
            pe_c += np.where(nf > 0, rc / np.where(nf > 0, nf, 1.0), 0.0)
            pe_g += np.where(nf > 0, nf * np.nan_to_num(ac1_parts(b, q)[1]), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = agree / n
        pe_c, pe_g = pe_c / n, pe_g / n
        kappa = np.where((n > 0) & (1.0 - pe_c > 1e-12), (po - pe_c) / (1.0 - pe_c), np.nan)
        ac1 = np.where(n > 0, (po - pe_g) / (1.0 - pe_g), np.nan)
    return po, kappa, ac1


def _compare_rater(ref: AnnotationSet, other: AnnotationSet, name: str, fields: list[str], universe: list,
                   n_boot: int, seed, alpha: float) -> tuple[list[dict], dict, list[dict], list[dict]]:
    rows, confs, prev, excl = [], {}, [], []
    items, groups, blocks, qs, per_field = [], [], [], [], []
    width = sum(len(field_labels(f)) ** 2 for f in fields)
    offset = 0
    for f in fields:
        cats = list(field_labels(f))
        q = len(cats)
        al = align_pair(ref, other, f)
        counts = al["status"].value_counts()
        comp = al[al["status"] == "compared"]
        c1, c2, _, g, _ = encode_pairs(comp["reference"].tolist(), comp["rater"].tolist(), cats,
                                       comp["trace_id"].tolist())
        cols = np.zeros((len(c1), width))
        cols[:, offset:offset + q * q] = confusion_columns(c1, c2, q)
        items.append(cols)
        groups.extend(g)
        conf = confusion(c1, c2, q)
        confs[(name, f)] = pd.DataFrame(conf.astype(int), index=pd.Index(cats, name=ref.name),
                                        columns=pd.Index(cats, name=name))
        n = conf.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            for k, lab in enumerate(cats):
                r_k, c_k = conf[k].sum(), conf[:, k].sum()
                prev.append({"rater": name, "field": f, "label": lab, "reference_share": r_k / n,
                             "rater_share": c_k / n, "pooled": (r_k + c_k) / (2 * n)})
        for s in STATUSES[1:]:
            if counts.get(s, 0):
                excl.append({"rater": name, "field": f, "reason": s, "n": int(counts[s])})
        per_field.append((f, q, conf, counts, comp["trace_id"].nunique(), offset))
        blocks.append(conf[None])
        qs.append(q)
        offset += q * q
    sums = resampled_sums(np.concatenate(items) if items else np.zeros((0, width)), groups, n_boot=n_boot,
                          seed=seed, universe=universe)
    boot_blocks = []
    for f, q, conf, counts, n_tr, off in per_field:
        bb = None if sums is None else sums[:, off:off + q * q].reshape(-1, q, q)
        boot_blocks.append(bb)
        n = conf.sum()
        rows.append(_row(name, f, counts, n_tr, float(np.trace(conf) / n) if n else np.nan,
                         float(kappa_from_confusion(conf)), float(ac1_from_confusion(conf, q)) if n else np.nan,
                         interval(None if bb is None else kappa_from_confusion(bb), alpha),
                         interval(None if bb is None else ac1_from_confusion(bb, q), alpha)))
    po, kap, ac1 = (float(x[0]) for x in _stratified(blocks, qs))
    total: dict = {}
    for r in per_field:
        for k, v in r[3].items():
            total[k] = total.get(k, 0) + int(v)
    if sums is not None and per_field:
        _, bk, ba = _stratified(boot_blocks, qs)
        kci, aci = interval(bk, alpha), interval(ba, alpha)
    else:
        kci = aci = (np.nan, np.nan)
    n_tr = len(set(groups))
    rows.append(_row(name, OVERALL, total, n_tr, po, kap, ac1, kci, aci))
    return rows, confs, prev, excl


def _row(name, f, counts, n_traces, po, kappa, ac1, kci, aci) -> dict:
    row = {"rater": name, "field": f, "n_compared": int(counts.get("compared", 0)),
           "n_excluded": int(sum(counts.get(s, 0) for s in STATUSES[1:]))}
    row.update({f"n_{s.replace(' ', '_')}": int(counts.get(s, 0)) for s in STATUSES[1:]})
    row.update({"n_traces": int(n_traces), "raw_agreement": po, "kappa": kappa, "kappa_lower": kci[0],
                "kappa_upper": kci[1], "ac1": ac1, "ac1_lower": aci[0], "ac1_upper": aci[1]})
    return row


def _wide(sets: dict[str, AnnotationSet], f: str) -> pd.DataFrame:
    keys = ["trace_id", "step"]
    frames = []
    for name, s in sets.items():
        r = s.records
        r = r.loc[r["field"] == f, [*keys, "value"]].drop_duplicates(keys, keep="last")
        frames.append(r.set_index(keys)["value"].rename(name))
    wide = pd.concat(frames, axis=1).sort_index()
    return wide.astype(object).where(wide.notna(), None)


def _pairwise(wide: pd.DataFrame, cats: list) -> pd.DataFrame:
    names = list(wide.columns)
    out = pd.DataFrame(np.nan, index=pd.Index(names, name="rater"), columns=names)
    for i, a in enumerate(names):
        for b in names[i:]:
            c1, c2, _, _, _ = encode_pairs(wide[a].tolist(), wide[b].tolist(), cats)
            k = float(kappa_from_confusion(confusion(c1, c2, len(cats)))) if a != b else 1.0
            out.loc[a, b] = out.loc[b, a] = k
    return out


def _multi(sets: dict[str, AnnotationSet], fields: list[str], n_boot: int, seed, alpha: float) -> pd.DataFrame:
    rows = []
    for f in fields:
        wide = _wide(sets, f)
        cats = list(field_labels(f))
        groups = [t for t, _ in wide.index]
        al = krippendorff_alpha(wide, labels=cats, groups=groups, n_boot=n_boot, seed=seed, alpha=alpha)
        fl = fleiss_kappa(wide, labels=cats, groups=groups, n_boot=n_boot, seed=seed, alpha=alpha)
        rows.append({"field": f, "n_raters": wide.shape[1], "alpha": al.value, "alpha_lower": al.ci[0],
                     "alpha_upper": al.ci[1], "alpha_n_items": al.n_items, "fleiss_kappa": fl.value,
                     "fleiss_lower": fl.ci[0], "fleiss_upper": fl.ci[1], "fleiss_n_items": fl.n_items,
                     "fleiss_n_excluded": fl.n_excluded})
    return pd.DataFrame(rows, columns=["field", "n_raters", "alpha", "alpha_lower", "alpha_upper", "alpha_n_items",
                                       "fleiss_kappa", "fleiss_lower", "fleiss_upper", "fleiss_n_items",
                                       "fleiss_n_excluded"])


def _costs(judges: dict[str, AnnotationSet], panel: PanelResult | None, usage: str) -> pd.DataFrame:
    recs = pd.concat([s.records for s in judges.values()], ignore_index=True) if judges else None
    costs = judge_costs(AnnotationSet(recs), usage=usage) if recs is not None and len(recs) else pd.DataFrame()
    if panel is not None and len(costs):
        members = costs[costs["rater"].isin(panel.members)]
        per = {c: members[c].sum(min_count=len(panel.members)) for c in costs.columns if c.endswith("_per_trace")}
        row = {"rater": PANEL_RATER, "kind": "panel", "n_traces": int(members["n_traces"].max()),
               "n_records": panel.n_items, "n_labeled": panel.n_labeled, "n_unscored": panel.n_items - panel.n_labeled,
               "n_rule": 0, "n_calls": int(members["n_calls"].sum()),
               "cost_usd": members["cost_usd"].sum(min_count=len(panel.members)), **per,
               "top_unscored_reason": "tie left open" if panel.n_ties > panel.n_ties_broken else None}
        costs = pd.concat([costs, pd.DataFrame([row])], ignore_index=True)
    return costs


def compare_annotations(reference: AnnotationSet, *raters: AnnotationSet, fields: list[str] | None = None,
                        tiebreaker: str | None = None, panel: Literal["auto", "never"] = "auto",
                        traces: list[dict] | None = None, usage: Literal["per_call", "per_record"] = "per_call",
                        n_boot: int = 2000, seed: int | None = 0, alpha: float = 0.05,
                        **metric_options) -> AgreementResult:
    """Agreement of each rater with the reference, per label field and overall (spec section 9).

    For every rater R and field f, on the steps both the reference and R labeled: n, the
    excluded steps with the reason, raw agreement p_o, Cohen's kappa
    (p_o - p_e) / (1 - p_e) with p_e = sum_k p_ref,k p_R,k, Gwet's AC1, per-label prevalence
    and the confusion matrix; 95% percentile CIs from one seeded bootstrap over whole traces
    (the same resamples for every rater and field). Labels are normalised first
    (``Not Grounded`` = ``NotGrounded``, ``groundness`` = ``grounding``). With two or more
    judges their majority panel (:func:`majority_panel`; ties broken by ``tiebreaker`` or
    left missing) is scored as a rater too; with three or more raters in all, Krippendorff's
    alpha, Fleiss' kappa and a pairwise kappa matrix per field.

    Parameters
    ----------
    reference : AnnotationSet
        One rater (e.g. ``AnnotationSet.from_traces(traces)`` for inline human labels).
    *raters : AnnotationSet
        Judged labels; a set with several raters counts as one rater each.
    fields : list of str, optional
        Default: the fields the reference labels, in ontology order.
    tiebreaker : str, optional
        The judge that breaks panel ties.
    panel : {"auto", "never"}
        ``"auto"`` forms the panel when there are two or more judges.
    traces : list of dict, optional
        The canonical traces; when given, :func:`metric_sensitivity` is computed too, with
        ``**metric_options``.
    usage : {"per_call", "per_record"}
        How label provenance records usage (see :func:`judge_costs`).
    n_boot, seed, alpha : bootstrap resamples (0 skips CIs), seed, 1 - level.

    Returns
    -------
    AgreementResult
        Kappa and AC1 in [-1, 1], higher is better. Undefined values are NaN with one
        ``UndefinedMetricWarning`` per reason.

    Examples
    --------
    >>> def rec(t, s, v, r):
    ...     return {"trace_id": t, "step": s, "field": "grounding", "value": v, "unscored_reason": None,
    ...             "rater": r, "provenance": {"kind": "human"}}
    >>> human = AnnotationSet.from_records([rec("a", 0, "Grounded", "h"), rec("a", 1, "NotGrounded", "h"),
    ...                                     rec("b", 0, "Grounded", "h")])
    >>> judge = AnnotationSet.from_records([rec("a", 0, "grounded", "j"), rec("a", 1, "Not Grounded", "j")])
    >>> res = compare_annotations(human, judge, n_boot=0)
    >>> row = res.summary.iloc[0]  # step 0 of trace b: labeled by the reference only
    >>> row["field"], int(row["n_compared"]), int(row["n_reference_only"]), float(row["kappa"])
    ('grounding', 2, 1, 1.0)
    """
    check_boot(n_boot, alpha)
    if panel not in ("auto", "never"):
        raise UserInputError(f"panel must be 'auto' or 'never', got {panel!r}")
    if not raters:
        raise UserInputError("give at least one rater to compare with the reference")
    sets = rater_sets(reference, raters)
    ref_name, *judge_names = list(sets)
    ref = sets[ref_name]
    present = set(ref.records["field"])
    if fields is None:
        fields = [f for f in FIELDS if f in present]
    bad = [f for f in fields if f not in FIELDS]
    if bad:
        raise UserInputError(f"unknown label field {bad[0]!r}; choose from: {', '.join(FIELDS)}")
    judges = {n: sets[n] for n in judge_names}
    panel_res = None
    compared = dict(judges)
    if tiebreaker is not None and (panel == "never" or len(judges) < 2):
        raise UserInputError("--tiebreaker needs a panel: give two or more judged raters")
    if panel == "auto" and len(judges) >= 2:
        panel_set, panel_res = panel_annotation_set(list(judges.values()), tiebreaker=tiebreaker)
        compared[PANEL_RATER] = panel_set
    universe = sorted({str(t) for s in sets.values() for t in s.records["trace_id"]})
    rows, confs, prev, excl = [], {}, [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        for name, s in compared.items():
            r, c, p, e = _compare_rater(ref, s, name, fields, universe, n_boot, seed, alpha)
            rows += r
            confs.update(c)
            prev += p
            excl += e
        multi = _multi(sets, fields, n_boot, seed, alpha) if len(sets) >= 3 else _multi({}, [], 0, seed, alpha)
        pairwise = {f: _pairwise(_wide({**sets, **({PANEL_RATER: compared[PANEL_RATER]} if panel_res else {})}, f),
                                 list(field_labels(f))) for f in fields} if len(sets) >= 3 else {}
    msgs = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UndefinedMetricWarning)))
    undefined = [r for r in rows if np.isnan(r["kappa"])]
    if undefined:
        msgs.append("Cohen's kappa is undefined (no compared item, or one label on every item: p_e = 1) for "
                    + ", ".join(f"{r['rater']}/{r['field']}" for r in undefined) + "; see AC1")
    for m in dict.fromkeys(msgs):
        warnings.warn(m, UndefinedMetricWarning, stacklevel=2)
    sensitivity = None
    if traces is not None:
        from ._sensitivity import metric_sensitivity

        sensitivity = metric_sensitivity(traces, ref, *compared.values(), n_boot=n_boot, seed=seed, alpha=alpha,
                                         **metric_options)
    elif metric_options:
        raise UserInputError(f"metric options ({', '.join(metric_options)}) need traces=")
    return AgreementResult(
        reference=ref_name, raters=list(compared), fields=list(fields),
        summary=pd.DataFrame(rows, columns=SUMMARY_COLUMNS), confusion=confs,
        prevalence=pd.DataFrame(prev, columns=["rater", "field", "label", "reference_share", "rater_share", "pooled"]),
        exclusions=pd.DataFrame(excl, columns=["rater", "field", "reason", "n"]), multi_rater=multi,
        pairwise=pairwise, panel=panel_res, costs=_costs(judges, panel_res, usage), sensitivity=sensitivity,
        options={"fields": list(fields), "tiebreaker": tiebreaker, "panel": panel, "usage": usage, "n_boot": n_boot,
                 "seed": seed, "alpha": alpha, **metric_options},
        warnings=msgs)
