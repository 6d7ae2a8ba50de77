"""Judge vs. human: every agreement number of spec section 9 for two or more annotation sets."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from .._renamed import renamed_keyword
from ..labels import AnnotationSet
from ..metrics import MetricOptions, check_bootstrap_options
from ._ac1 import ac1_from_confusion
from ._align import FIELDS, STATUSES, align_pair, field_labels, rater_sets
from ._counts import confusion, confusion_columns, encode_pairs, interval, resampled_sums
from ._judge_costs import costs_with_panel
from ._kappa import kappa_from_confusion
from ._multi_rater import multi_rater_table, pairwise_kappa, wide_labels
from ._panel import PANEL_RATER, TIE_LABEL, PanelResult, panel_annotation_set, tie_keys
from ._pooled import stratified_agreement
from ._strata import (
    POOLED_FIELD,
    POOLED_KIND,
    RULE_RATER,
    UNKNOWN_KIND,
    kind_column,
    rule_rater,
    split_rule_derived,
    step_kinds,
    strata,
    stratum_label,
)

if TYPE_CHECKING:  # _sensitivity imports this module's callers; the class is needed for the annotation only
    from ._sensitivity import SensitivityResult

SUMMARY_COLUMNS = [
    "rater",
    "field",
    "step_kind",
    "n_compared",
    "n_excluded",
    *[f"n_{s.replace(' ', '_').replace('-', '_')}" for s in STATUSES[1:]],
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
]
#: The row pooling every (field, step kind) stratum of a rater; it says so in its name.
OVERALL = POOLED_FIELD
#: The columns of :attr:`AgreementResult.disagreements`.
DISAGREEMENT_COLUMNS = ["rater", "field", "step_kind", "trace_id", "step", "reference_value", "rater_value"]


@dataclass
class AgreementResult:
    """What :func:`compare_annotations` computes.

    Attributes
    ----------
    reference : str
        The reference rater (e.g. the human annotators).
    raters : list of str
        The raters compared with it: each judge (its own decisions only), the majority panel
        when there is one, then :data:`~seekbench.agreement._strata.RULE_RATER` holding the
        judges' rule-derived labels (InitialQuery, RepeatQuery), scored as the rule's.
    fields : list of str
    strata : list of (str, str)
        The (field, step kind) pairs compared, e.g. ``("grounding", "reasoning")`` and
        ``("grounding", "search")``: never pooled into one row.
    summary : DataFrame
        One row per (rater, field, step_kind), then per rater one row with ``field ==
        "all (pooled)"`` and ``step_kind == "all"``: ``n_compared``, ``n_excluded`` and its
        reasons (``n_reference_only``, ``n_rater_only``, ``n_unscored_by_rater``,
        ``n_unscored_by_reference``, ``n_rule_derived``), ``n_unresolved_ties`` (the panel's
        open ties, scored as misses), ``n_traces``, ``raw_agreement``, Cohen's ``kappa`` and
        Gwet's ``ac1`` with 95% bootstrap CIs over whole traces; NaN (no coefficient) where
        ``n_compared`` is 0. The pooled row stratifies: p_o and the chance agreement p_e are
        n-weighted means of the strata's (a label of one stratum never matches another's by
        chance), then kappa = (p_o - p_e) / (1 - p_e).
    confusion : dict
        ``(rater, field, step_kind) -> DataFrame`` of counts, rows the reference's labels (the
        panel's have a column for :data:`~seekbench.agreement._panel.TIE_LABEL`).
    prevalence : DataFrame
        Per rater, field, step kind and label: its share among the reference's and the
        rater's labels on the compared items, and pooled.
    exclusions : DataFrame
        ``rater, field, step_kind, reason, n``: the items not compared and why.
    multi_rater : DataFrame
        With three or more raters (reference and judges, not the panel), per stratum:
        Krippendorff's alpha (nominal, all pairable items) and Fleiss' kappa (items every
        rater labeled) with CIs and item counts. Empty otherwise.
    pairwise : dict
        ``(field, step_kind) -> DataFrame``: Cohen's kappa of every pair of raters (reference,
        judges, panel) on the items both labeled; diagonal 1.
    panel : PanelResult or None
    costs : DataFrame
        Per judge (and the panel, whose cost is its members' sum): see
        :func:`~seekbench.agreement.judge_costs`.
    sensitivity : SensitivityResult or None
        With ``traces``: how far each rater's labels move RQI, CE and ERF(8) per agent.
    disagreements : DataFrame
        :data:`DISAGREEMENT_COLUMNS`: every compared item where the rater's label is not the
        reference's, per (rater, field, step_kind) stratum, the items behind the off-diagonal
        cells of ``confusion`` (so a stratum has ``n_compared`` x (1 - ``raw_agreement``) of
        them). Not in :meth:`to_dict` (one row per item); the trace explorer lists them.
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
    sensitivity: SensitivityResult | None = None
    options: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    strata: list = field(default_factory=list)
    disagreements: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DISAGREEMENT_COLUMNS))

    def to_dict(self) -> dict:
        """JSON-ready (NaN stays NaN here; ``seekbench._io.dumps`` writes it as null)."""
        out = {
            "reference": self.reference,
            "raters": self.raters,
            "fields": self.fields,
            "strata": [{"field": f, "step_kind": k} for f, k in self.strata],
            "summary": self.summary.to_dict("records"),
            "confusion": [
                {
                    "rater": r,
                    "field": f,
                    "step_kind": k,
                    "labels": [str(x) for x in m.index],
                    "matrix": m.to_numpy().tolist(),
                }
                for (r, f, k), m in self.confusion.items()
            ],
            "prevalence": self.prevalence.to_dict("records"),
            "exclusions": self.exclusions.to_dict("records"),
            "multi_rater": self.multi_rater.to_dict("records"),
            "pairwise": {stratum_label(f, k): m.to_dict() for (f, k), m in self.pairwise.items()},
            "panel": None if self.panel is None else self.panel.summary.iloc[0].to_dict(),
            "costs": self.costs.to_dict("records"),
            "sensitivity": None
            if self.sensitivity is None
            else {
                "table": self.sensitivity.table.to_dict("records"),
                "rankings": self.sensitivity.rankings.to_dict("records"),
                "options": self.sensitivity.options,
            },
            "options": self.options,
            "warnings": self.warnings,
        }
        return out


def _aligned(
    ref: AnnotationSet, other: AnnotationSet, f: str, kind: str, kinds: dict, rule_keys: set | None, ties: set | None
) -> pd.DataFrame:
    """:func:`align_pair` on one stratum, with the judge's rule-derived items excluded as such
    (``rule_keys``) and the panel's open ties scored as :data:`TIE_LABEL` (``ties``)."""
    al = align_pair(ref, other, f)
    al = al[(kind_column(al, kinds) == kind).to_numpy()].reset_index(drop=True)
    keys = [(str(t), int(st), f) for t, st in zip(al["trace_id"], al["step"], strict=True)]
    if rule_keys:
        is_rule = np.array([k in rule_keys for k in keys], dtype=bool)
        al.loc[is_rule & (al["status"] == "reference only").to_numpy(), "status"] = "rule-derived"
    if ties:
        tie = (
            np.array([k in ties for k in keys], dtype=bool)
            & (al["status"] == "unscored by rater").to_numpy()
            & al["reference"].notna().to_numpy()
        )
        al.loc[tie, "status"] = "compared"
        al.loc[tie, "rater"] = TIE_LABEL
    return al


def _compare_rater(
    ref: AnnotationSet,
    other: AnnotationSet,
    name: str,
    strata_list: list[tuple[str, str]],
    kinds: dict,
    universe: list,
    n_boot: int,
    seed,
    alpha: float,
    *,
    rule_keys: set | None = None,
    ties: set | None = None,
) -> tuple[list[dict], dict, list[dict], list[dict], list[pd.DataFrame]]:
    rows, confs, prev, excl, dis = [], {}, [], [], []
    per_stratum = []
    for f, kind in strata_list:
        cats = [*field_labels(f), *([TIE_LABEL] if ties is not None else [])]
        al = _aligned(ref, other, f, kind, kinds, rule_keys, ties)
        counts = al["status"].value_counts()
        comp = al[al["status"] == "compared"]
        c1, c2, _, g, _ = encode_pairs(
            comp["reference"].tolist(), comp["rater"].tolist(), cats, comp["trace_id"].tolist()
        )
        q = len(cats)
        conf = confusion(c1, c2, q)
        confs[(name, f, kind)] = pd.DataFrame(
            conf.astype(int), index=pd.Index(cats, name=ref.name), columns=pd.Index(cats, name=name)
        )
        n = conf.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            for k, lab in enumerate(cats):
                r_k, c_k = conf[k].sum(), conf[:, k].sum()
                prev.append(
                    {
                        "rater": name,
                        "field": f,
                        "step_kind": kind,
                        "label": lab,
                        "reference_share": r_k / n,
                        "rater_share": c_k / n,
                        "pooled": (r_k + c_k) / (2 * n),
                    }
                )
        for st in STATUSES[1:]:
            if counts.get(st, 0):
                excl.append({"rater": name, "field": f, "step_kind": kind, "reason": st, "n": int(counts[st])})
        off = comp[(comp["reference"] != comp["rater"]).to_numpy()]
        if len(off):
            dis.append(
                pd.DataFrame(
                    {
                        "rater": name,
                        "field": f,
                        "step_kind": kind,
                        "trace_id": off["trace_id"].astype(str).to_numpy(),
                        "step": off["step"].astype(int).to_numpy(),
                        "reference_value": off["reference"].astype(str).to_numpy(),
                        "rater_value": off["rater"].astype(str).to_numpy(),
                    }
                )
            )
        n_ties = int((comp["rater"] == TIE_LABEL).sum())
        per_stratum.append((f, kind, q, conf, counts, comp["trace_id"].nunique(), c1, c2, g, n_ties))
    width = sum(p[2] ** 2 for p in per_stratum)
    items: list[np.ndarray] = []
    groups: list[object] = []
    offset = 0
    for _, _, q, _, _, _, c1, c2, g, _ in per_stratum:
        cols = np.zeros((len(c1), width))
        cols[:, offset : offset + q * q] = confusion_columns(c1, c2, q)
        items.append(cols)
        groups.extend(g)
        offset += q * q
    sums = resampled_sums(
        np.concatenate(items) if items else np.zeros((0, width)), groups, n_boot=n_boot, seed=seed, universe=universe
    )
    boot_blocks: list[np.ndarray] = []  # filled only when there are resamples (sums is not None)
    blocks, qs, offset = [], [], 0
    for f, kind, q, conf, counts, n_tr, _, _, _, n_ties in per_stratum:
        q_labels = len(field_labels(f))  # AC1's chance term counts the field's labels, not the tie response
        bb = None if sums is None else sums[:, offset : offset + q * q].reshape(-1, q, q)
        offset += q * q
        if bb is not None:
            boot_blocks.append(bb)
        blocks.append(conf[None])
        qs.append(q_labels)
        n = conf.sum()
        rows.append(
            _row(
                name,
                f,
                kind,
                counts,
                n_tr,
                n_ties,
                float(np.trace(conf) / n) if n else np.nan,
                float(kappa_from_confusion(conf)),
                float(ac1_from_confusion(conf, q_labels)) if n else np.nan,
                interval(None if bb is None else kappa_from_confusion(bb), alpha),
                interval(None if bb is None else ac1_from_confusion(bb, q_labels), alpha),
            )
        )
    po, kap, ac1 = (float(x[0]) for x in stratified_agreement(blocks, qs)) if per_stratum else (np.nan,) * 3
    total: dict = {}
    for p in per_stratum:
        for k, v in p[4].items():
            total[k] = total.get(k, 0) + int(v)
    if sums is not None and per_stratum:
        _, bk, ba = stratified_agreement(boot_blocks, qs)
        kci, aci = interval(bk, alpha), interval(ba, alpha)
    else:
        kci = aci = (np.nan, np.nan)
    rows.append(
        _row(
            name,
            POOLED_FIELD,
            POOLED_KIND,
            total,
            len(set(groups)),
            sum(p[9] for p in per_stratum),
            po,
            kap,
            ac1,
            kci,
            aci,
        )
    )
    return rows, confs, prev, excl, dis


def _row(name, f, kind, counts, n_traces, n_ties, po, kappa, ac1, kci, aci) -> dict:
    row = {
        "rater": name,
        "field": f,
        "step_kind": kind,
        "n_compared": int(counts.get("compared", 0)),
        "n_excluded": int(sum(counts.get(s, 0) for s in STATUSES[1:])),
    }
    row.update({f"n_{s.replace(' ', '_').replace('-', '_')}": int(counts.get(s, 0)) for s in STATUSES[1:]})
    row.update(
        {
            "n_unresolved_ties": int(n_ties),
            "n_traces": int(n_traces),
            "raw_agreement": po,
            "kappa": kappa,
            "kappa_lower": kci[0],
            "kappa_upper": kci[1],
            "ac1": ac1,
            "ac1_lower": aci[0],
            "ac1_upper": aci[1],
        }
    )
    row["note"] = _note(row, counts)
    return row


def _note(row: dict, counts) -> str:
    """Why a coefficient of the row is missing (tables print it beside n/a); empty when none is."""
    if row["n_compared"] == 0:
        why = ", ".join(f"{int(counts[s])} {s}" for s in STATUSES[1:] if counts.get(s, 0))
        return f"n = 0: no step compared ({why or 'no label'}); no coefficient"
    if np.isnan(row["kappa"]):
        return "kappa undefined: one label on every compared step (chance agreement 1); see AC1"
    return ""


def compare_annotations(
    reference: AnnotationSet,
    *raters: AnnotationSet,
    fields: list[str] | None = None,
    tiebreaker: str | None = None,
    panel: Literal["auto", "never"] = "auto",
    traces: list[dict] | None = None,
    usage: Literal["per_call", "per_record"] = "per_call",
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    options: MetricOptions | None = None,
    overcautious_window: int = 15,
    horizon: int | None = None,
    **metric_options: str,
) -> AgreementResult:
    """Agreement of each rater with the reference, per label field and step kind (spec section 9).

    For every rater R and stratum (field f, step kind), on the steps both the reference and R
    labeled: n, the excluded steps with the reason, raw agreement p_o, Cohen's kappa
    (p_o - p_e) / (1 - p_e) with p_e = sum_k p_ref,k p_R,k, Gwet's AC1, per-label prevalence
    and the confusion matrix; 95% percentile CIs from one seeded bootstrap over whole traces
    (the same resamples for every rater and stratum). Grounding of reasoning steps and of
    search steps are separate strata, never one kappa; a last row per rater pools the strata
    and is named so (``"all (pooled)"``). Labels are normalised first (``Not Grounded`` =
    ``NotGrounded``, ``groundness`` = ``grounding``).

    A judge is scored on its own decisions only: its rule-derived labels
    (``provenance.kind == "rule"``: InitialQuery, RepeatQuery) are excluded from its rows
    (reason ``"rule-derived"``) and scored apart as the rater ``"rule-derived"``. A judge with
    no label of its own compared has n = 0 and no coefficient (NaN), never 1.

    With two or more judges their majority panel (:func:`majority_panel`, on the judges' own
    decisions; ties broken by ``tiebreaker`` or left open) is scored as a rater too, on every
    step the reference labeled that a member labeled: an open tie is the response
    ``"(unresolved tie)"``, which matches no reference label, and is counted in
    ``n_unresolved_ties`` (a panel of two is not scored only where its judges agree). With
    three or more raters in all, Krippendorff's alpha, Fleiss' kappa and a pairwise kappa
    matrix per stratum.

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
        The canonical traces: they give each step's kind, and :func:`metric_sensitivity` is
        computed too, with the metric options. Without them a step's kind is told by its
        other labels (a step with a ``reasoning_type`` label is a reasoning step, ...); a step
        labeled with ``grounding`` only is of kind ``"unknown"``, with a warning.
    usage : {"per_call", "per_record"}
        How label provenance records usage (see :func:`judge_costs`).
    n_boot, seed, alpha : bootstrap resamples (0 skips CIs), seed, 1 - level.
    options : MetricOptions, optional
        The metric options of the sensitivity part (needs ``traces``).
    overcautious_window : int
        Passed to :func:`metric_sensitivity`.
    horizon : int, optional
        Deprecated spelling of ``overcautious_window`` (a ``FutureWarning``; removed in the next release).
    **metric_options
        Single options of :class:`~seekbench.metrics.MetricOptions`; each overrides ``options``.

    Returns
    -------
    AgreementResult
        Kappa and AC1 in [-1, 1], higher is better. Undefined values are NaN with one
        ``UndefinedMetricWarning`` per reason.

    Examples
    --------
    >>> def rec(t, s, v, r, f="grounding"):
    ...     return {"trace_id": t, "step": s, "field": f, "value": v, "unscored_reason": None,
    ...             "rater": r, "provenance": {"kind": "human"}}
    >>> human = AnnotationSet.from_records([rec("a", 0, "Grounded", "h"), rec("a", 1, "NotGrounded", "h"),
    ...                                     rec("b", 0, "Grounded", "h")])
    >>> judge = AnnotationSet.from_records([rec("a", 0, "grounded", "j"), rec("a", 1, "Not Grounded", "j")])
    >>> traces = [{"trace_id": t, "agent": "x", "steps": [{"index": 0, "kind": "reasoning"},
    ...                                                    {"index": 1, "kind": "reasoning"}]} for t in ("a", "b")]
    >>> import warnings
    >>> with warnings.catch_warnings():  # the sensitivity part: no evidence labels, one agent
    ...     warnings.simplefilter("ignore", UndefinedMetricWarning)
    ...     res = compare_annotations(human, judge, traces=traces, n_boot=0)
    >>> row = res.summary.iloc[0]  # step 0 of trace b: labeled by the reference only
    >>> row["field"], row["step_kind"], int(row["n_compared"]), int(row["n_reference_only"]), float(row["kappa"])
    ('grounding', 'reasoning', 2, 1, 1.0)
    """
    overcautious_window = renamed_keyword("compare_annotations", "horizon", horizon, overcautious_window, default=15)
    check_bootstrap_options(n_boot, alpha)
    metric_opts = MetricOptions.resolve(options, **metric_options)
    if traces is None and (options is not None or metric_options):
        given = ", ".join(metric_options) or "options"
        raise UserInputError(f"metric options ({given}) need traces=")
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
    split = {n: split_rule_derived(s) for n, s in judges.items()}
    decided = {n: judged for n, (judged, _) in split.items()}
    rules = rule_rater([rule for _, rule in split.values()]) if RULE_RATER not in sets else None
    kinds = step_kinds(traces, *sets.values())
    panel_res = None
    compared = dict(decided)
    if tiebreaker is not None and (panel == "never" or len(judges) < 2):
        raise UserInputError("--tiebreaker needs a panel: give two or more judged raters")
    if panel == "auto" and len(judges) >= 2:
        panel_set, panel_res = panel_annotation_set(list(decided.values()), tiebreaker=tiebreaker)
        compared[PANEL_RATER] = panel_set
    all_strata = strata([ref, *compared.values()], list(fields), kinds)
    universe = sorted({str(t) for s in sets.values() for t in s.records["trace_id"]})
    rows, confs, prev, excl, dis = [], {}, [], [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        for name, s in compared.items():
            rule_keys = _keys(split[name][1]) if name in split else set().union(*(_keys(r) for _, r in split.values()))
            ties = tie_keys(s) if name == PANEL_RATER else None
            r, c, p, e, d = _compare_rater(
                ref, s, name, all_strata, kinds, universe, n_boot, seed, alpha, rule_keys=rule_keys, ties=ties
            )
            rows += r
            confs.update(c)
            prev += p
            excl += e
            dis += d
        rule_strata = [] if rules is None else [(f, k) for f, k in all_strata if f in set(rules.records["field"])]
        if rules is None or not rule_strata:
            rules = None  # no rule-derived label in the fields compared
        else:
            r, c, p, e, d = _compare_rater(ref, rules, RULE_RATER, rule_strata, kinds, universe, n_boot, seed, alpha)
            rows, prev, excl, dis = rows + r, prev + p, excl + e, dis + d
            confs.update(c)
        multi_sets = {ref_name: ref, **decided}
        many = len(multi_sets) >= 3
        multi = multi_rater_table(multi_sets, all_strata if many else [], kinds, n_boot, seed, alpha)
        with_panel = {**multi_sets, **({PANEL_RATER: compared[PANEL_RATER]} if panel_res else {})}
        pairwise = (
            {(f, k): pairwise_kappa(wide_labels(with_panel, f, k, kinds), list(field_labels(f))) for f, k in all_strata}
            if many
            else {}
        )
    msgs = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UndefinedMetricWarning)))
    unknown = [stratum_label(f, k) for f, k in all_strata if k == UNKNOWN_KIND]
    if unknown:
        msgs.append(
            f"step kind unknown for {', '.join(unknown)}: these steps are in no trace given and carry no "
            "label that tells their kind; pass the traces to separate reasoning and search steps"
        )
    undefined = [r for r in rows if np.isnan(r["kappa"])]
    if undefined:
        msgs.append(
            "Cohen's kappa is undefined (no compared item, or one label on every item: p_e = 1) for "
            + ", ".join(f"{r['rater']}/{stratum_label(r['field'], r['step_kind'])}" for r in undefined)
            + "; see AC1 and n"
        )
    for m in dict.fromkeys(msgs):
        warnings.warn(m, UndefinedMetricWarning, stacklevel=2)
    sensitivity = None
    if traces is not None:
        from ._sensitivity import metric_sensitivity

        judged_sets = [*judges.values(), *([compared[PANEL_RATER]] if panel_res else [])]
        sensitivity = metric_sensitivity(
            traces,
            ref,
            *judged_sets,
            n_boot=n_boot,
            seed=seed,
            alpha=alpha,
            options=metric_opts,
            overcautious_window=overcautious_window,
        )
    return AgreementResult(
        reference=ref_name,
        raters=[*compared, *([RULE_RATER] if rules is not None else [])],
        fields=list(fields),
        summary=pd.DataFrame(rows, columns=SUMMARY_COLUMNS),
        confusion=confs,
        prevalence=pd.DataFrame(
            prev, columns=["rater", "field", "step_kind", "label", "reference_share", "rater_share", "pooled"]
        ),
        exclusions=pd.DataFrame(excl, columns=["rater", "field", "step_kind", "reason", "n"]),
        multi_rater=multi,
        pairwise=pairwise,
        panel=panel_res,
        costs=costs_with_panel(judges, panel_res, usage),
        sensitivity=sensitivity,
        options={
            "fields": list(fields),
            "tiebreaker": tiebreaker,
            "panel": panel,
            "usage": usage,
            "n_boot": n_boot,
            "seed": seed,
            "alpha": alpha,
            **(metric_opts.as_dict() if traces is not None else {}),
        },
        warnings=msgs,
        strata=all_strata,
        disagreements=(pd.concat(dis, ignore_index=True) if dis else pd.DataFrame(columns=DISAGREEMENT_COLUMNS)),
    )


def _keys(labels: AnnotationSet) -> set[tuple[str, int, str]]:
    r = labels.records
    return {(str(t), int(s), f) for t, s, f in zip(r["trace_id"], r["step"], r["field"], strict=True)}
