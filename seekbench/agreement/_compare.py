"""Judge vs. human: every agreement number of spec section 9 for two or more annotation sets.

:func:`compare_annotations` runs in steps that pass small values: :func:`_raters` decides who is
compared with whom on which strata (:class:`_Raters`); each rater's tables come from
:func:`~seekbench.agreement._rater_tables.rater_tables`; :func:`_all_raters` adds the multi-rater
coefficients; :func:`_messages` says why numbers are undefined, from what the steps return.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from .._renamed import renamed_keyword
from ..labels import AnnotationSet
from ..metrics import MetricOptions, Resampler, check_bootstrap_options
from ._agreement_result import DISAGREEMENT_COLUMNS, SUMMARY_COLUMNS, AgreementResult
from ._align import FIELDS, field_labels, rater_sets
from ._judge_costs import costs_with_panel
from ._multi_rater import multi_rater_table, pairwise_kappa, wide_labels
from ._panel import PANEL_RATER, PanelResult, panel_annotation_set, tie_keys
from ._rater_tables import RaterPair, RaterTables, rater_tables
from ._strata import RULE_RATER, UNKNOWN_KIND, rule_rater, split_rule_derived, step_kinds, strata, stratum_label

if TYPE_CHECKING:  # _sensitivity imports compare_annotations' callers; the class is needed for the annotation only
    from ._sensitivity import SensitivityResult


@dataclass(frozen=True)
class _Raters:
    """Who is compared with the reference, and on which (field, step kind) strata."""

    reference_name: str
    reference: AnnotationSet
    judges: dict[str, AnnotationSet]  # as given
    rule_labels: dict[str, AnnotationSet]  # each judge's rule-derived labels
    compared: dict[str, AnnotationSet]  # each judge's own decisions, then the panel
    rules: AnnotationSet | None  # the judges' rule-derived labels as one rater, when any is in the strata
    panel: PanelResult | None
    kinds: dict
    fields: list[str]
    strata: list[tuple[str, str]]
    universe: list[str]  # every trace of every set: what the bootstrap draws


@dataclass(frozen=True)
class _AllRaters:
    """The coefficients of all raters together, and why any is undefined."""

    multi_rater: pd.DataFrame
    pairwise: dict
    undefined: list[str]


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
    resampler: Resampler | None = None,
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
    resampler : Resampler, optional
        The resampling in place of ``n_boot`` and ``seed`` (B, seed, method; without clusters: the
        units are the traces). Every rater and stratum is resampled with it, so all see the same
        draws of each trace.
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
        Kappa and AC1 in [-1, 1], higher is better. Undefined values are NaN, each reason once
        in ``warnings`` and as an ``UndefinedMetricWarning``.

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
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="compare_annotations")
    metric_opts = MetricOptions.resolve(options, **metric_options)
    if traces is None and (options is not None or metric_options):
        given = ", ".join(metric_options) or "options"
        raise UserInputError(f"metric options ({given}) need traces=")
    if panel not in ("auto", "never"):
        raise UserInputError(f"panel must be 'auto' or 'never', got {panel!r}")
    if not raters:
        raise UserInputError("give at least one rater to compare with the reference")
    who = _raters(reference, raters, fields=fields, tiebreaker=tiebreaker, panel=panel, traces=traces)
    tables = _tables(who, resampler.with_clusters(None, universe=who.universe), alpha)
    together = _all_raters(who, resampler, alpha)
    msgs = _messages(together.undefined, who.strata, tables.rows)
    for m in dict.fromkeys(msgs):
        warnings.warn(m, UndefinedMetricWarning, stacklevel=2)
    sensitivity = None
    if traces is not None:
        from ._sensitivity import metric_sensitivity

        judged_sets = [*who.judges.values(), *([who.compared[PANEL_RATER]] if who.panel else [])]
        sensitivity = metric_sensitivity(
            traces,
            who.reference,
            *judged_sets,
            alpha=alpha,
            resampler=resampler,
            options=metric_opts,
            overcautious_window=overcautious_window,
        )
    recorded = {
        "fields": who.fields,
        "tiebreaker": tiebreaker,
        "panel": panel,
        "usage": usage,
        **resampler.as_options(),
        "alpha": alpha,
        **(metric_opts.as_dict() if traces is not None else {}),
    }
    costs = costs_with_panel(who.judges, who.panel, usage)
    return _result(who, tables, together, costs=costs, sensitivity=sensitivity, options=recorded, msgs=msgs)


def _result(
    who: _Raters,
    tables: RaterTables,
    together: _AllRaters,
    *,
    costs: pd.DataFrame,
    sensitivity: SensitivityResult | None,
    options: dict,
    msgs: list[str],
) -> AgreementResult:
    """The :class:`AgreementResult` of the steps' values."""
    return AgreementResult(
        reference=who.reference_name,
        raters=[*who.compared, *([RULE_RATER] if who.rules is not None else [])],
        fields=who.fields,
        summary=pd.DataFrame(tables.rows, columns=SUMMARY_COLUMNS),
        confusion=tables.confusion,
        prevalence=pd.DataFrame(
            tables.prevalence,
            columns=["rater", "field", "step_kind", "label", "reference_share", "rater_share", "pooled"],
        ),
        exclusions=pd.DataFrame(tables.exclusions, columns=["rater", "field", "step_kind", "reason", "n"]),
        multi_rater=together.multi_rater,
        pairwise=together.pairwise,
        panel=who.panel,
        costs=costs,
        sensitivity=sensitivity,
        options=options,
        warnings=msgs,
        strata=who.strata,
        disagreements=(
            pd.concat(tables.disagreements, ignore_index=True)
            if tables.disagreements
            else pd.DataFrame(columns=DISAGREEMENT_COLUMNS)
        ),
    )


def _raters(
    reference: AnnotationSet,
    raters: tuple[AnnotationSet, ...],
    *,
    fields: list[str] | None,
    tiebreaker: str | None,
    panel: str,
    traces: list[dict] | None,
) -> _Raters:
    """The reference, the judges' own decisions and rule-derived labels, the panel, the strata."""
    sets = rater_sets(reference, raters)
    ref_name, *judge_names = list(sets)
    ref = sets[ref_name]
    if fields is None:
        present = set(ref.records["field"])
        fields = [f for f in FIELDS if f in present]
    bad = [f for f in fields if f not in FIELDS]
    if bad:
        raise UserInputError(f"unknown label field {bad[0]!r}; choose from: {', '.join(FIELDS)}")
    judges = {n: sets[n] for n in judge_names}
    split = {n: split_rule_derived(s) for n, s in judges.items()}
    compared = {n: judged for n, (judged, _) in split.items()}
    kinds = step_kinds(traces, *sets.values())
    if tiebreaker is not None and (panel == "never" or len(judges) < 2):
        raise UserInputError("--tiebreaker needs a panel: give two or more judged raters")
    panel_res = None
    if panel == "auto" and len(judges) >= 2:
        panel_set, panel_res = panel_annotation_set(list(compared.values()), tiebreaker=tiebreaker)
        compared[PANEL_RATER] = panel_set
    all_strata = strata([ref, *compared.values()], list(fields), kinds)
    rules = rule_rater([rule for _, rule in split.values()]) if RULE_RATER not in sets else None
    if rules is not None and not any(f in set(rules.records["field"]) for f, _ in all_strata):
        rules = None  # no rule-derived label in the fields compared
    return _Raters(
        reference_name=ref_name,
        reference=ref,
        judges=judges,
        rule_labels={n: rule for n, (_, rule) in split.items()},
        compared=compared,
        rules=rules,
        panel=panel_res,
        kinds=kinds,
        fields=list(fields),
        strata=all_strata,
        universe=sorted({str(t) for s in sets.values() for t in s.records["trace_id"]}),
    )


def _pairs(who: _Raters) -> list[tuple[RaterPair, list[tuple[str, str]]]]:
    """Each rater compared with the reference and its strata: the judges (their rule-derived items
    excluded), the panel (its open ties scored; every judge's rule-derived items excluded), then
    the rule-derived labels on the strata of their fields."""
    all_rule_keys = set().union(*(_keys(r) for r in who.rule_labels.values()))
    out = []
    for name, s in who.compared.items():
        rule_keys = _keys(who.rule_labels[name]) if name in who.rule_labels else all_rule_keys
        ties = tie_keys(s) if name == PANEL_RATER else None
        out.append((RaterPair(name, who.reference, s, who.kinds, rule_keys, ties), who.strata))
    if who.rules is not None:
        rule_fields = set(who.rules.records["field"])
        rule_strata = [(f, k) for f, k in who.strata if f in rule_fields]
        out.append((RaterPair(RULE_RATER, who.reference, who.rules, who.kinds), rule_strata))
    return out


def _tables(who: _Raters, resampler: Resampler, alpha: float) -> RaterTables:
    """Every rater's tables, one after the other (``resampler``: over the comparison's universe)."""
    parts = [rater_tables(pair, pair_strata, resampler, alpha) for pair, pair_strata in _pairs(who)]
    confusion: dict = {}
    for p in parts:
        confusion.update(p.confusion)
    return RaterTables(
        rows=[r for p in parts for r in p.rows],
        confusion=confusion,
        prevalence=[r for p in parts for r in p.prevalence],
        exclusions=[r for p in parts for r in p.exclusions],
        disagreements=[d for p in parts for d in p.disagreements],
    )


def _all_raters(who: _Raters, resampler: Resampler, alpha: float) -> _AllRaters:
    """With three or more raters (the reference and the judges' own decisions): Krippendorff's
    alpha and Fleiss' kappa per stratum, and the pairwise kappas (the panel too)."""
    sets = {who.reference_name: who.reference, **{n: who.compared[n] for n in who.judges}}
    if len(sets) < 3:
        multi, undefined = multi_rater_table(sets, [], who.kinds, resampler=resampler, alpha=alpha)
        return _AllRaters(multi, {}, undefined)
    multi, undefined = multi_rater_table(sets, who.strata, who.kinds, resampler=resampler, alpha=alpha)
    with_panel = {**sets, **({PANEL_RATER: who.compared[PANEL_RATER]} if who.panel else {})}
    pairwise = {
        (f, k): pairwise_kappa(wide_labels(with_panel, f, k, who.kinds), list(field_labels(f))) for f, k in who.strata
    }
    return _AllRaters(multi, pairwise, undefined)


def _messages(undefined: list[str], all_strata: list[tuple[str, str]], rows: list[dict]) -> list[str]:
    """Why numbers are undefined, once each: the multi-rater coefficients' reasons, strata of an
    unknown step kind, and the rows whose kappa is NaN."""
    msgs = list(dict.fromkeys(undefined))
    unknown = [stratum_label(f, k) for f, k in all_strata if k == UNKNOWN_KIND]
    if unknown:
        msgs.append(
            f"step kind unknown for {', '.join(unknown)}: these steps are in no trace given and carry no "
            "label that tells their kind; pass the traces to separate reasoning and search steps"
        )
    nan_kappa = [r for r in rows if np.isnan(r["kappa"])]
    if nan_kappa:
        msgs.append(
            "Cohen's kappa is undefined (no compared item, or one label on every item: p_e = 1) for "
            + ", ".join(f"{r['rater']}/{stratum_label(r['field'], r['step_kind'])}" for r in nan_kappa)
            + "; see AC1 and n"
        )
    return msgs


def _keys(labels: AnnotationSet) -> set[tuple[str, int, str]]:
    r = labels.records
    return {(str(t), int(s), f) for t, s, f in zip(r["trace_id"], r["step"], r["field"], strict=True)}
