"""RQI: the reasoning quality index, i.e. groundedness of reasoning (spec section 3)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning
from ..traces import LABEL_VALUES
from ._bootstrap import Cluster, EstimateResult, check_bootstrap_options, cluster_labels, ratio
from ._evidence import REASONING, step_evidence, step_kinds, trace_evidence_unknown, trace_segments
from ._options import (
    MAPPING_OPTIONS,
    RQI_AGGREGATE_OPTIONS,
    SCOPE_OPTIONS,
    EvidenceMapping,
    EvidenceScope,
    RQIAggregate,
    check_option,
)
from ._resampler import Resampler, Seed
from ._shared import memo

_G = {"Grounded": 1.0, "NotGrounded": 0.0}


#: The reasoning types of ``by_type``, in row order.
REASONING_TYPES: tuple[str, ...] = tuple(LABEL_VALUES["reasoning_type"])


def _grounding(steps: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """G of each step (1.0, 0.0, NaN if unlabeled) and whether it is a reasoning step."""
    g = memo("grounding", (steps,), (), lambda: steps["grounding"].map(_G).to_numpy(dtype=float))
    return g, step_kinds(steps) == REASONING


def _per_trace(steps: pd.DataFrame) -> pd.DataFrame:
    """Per trace (first-appearance order): labeled reasoning steps ``n``, grounded ``g``, unlabeled."""
    ids = pd.Index(pd.unique(steps["trace_id"]))
    seg = trace_segments(steps)
    g, r = _grounding(steps)
    labeled = r & ~np.isnan(g)
    out = pd.DataFrame(
        {
            "g": seg.sum(np.where(labeled, g, 0.0), mask=r),
            "n": seg.count(labeled).astype(float),
            "unlabeled": seg.count(r & np.isnan(g)).astype(float),
        },
        index=pd.Index(seg.uniques),
    )
    return out.reindex(ids, fill_value=0.0).astype(float)


def rqi_trace_columns(
    steps: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum", evidence_scope: EvidenceScope = "cumulative"
) -> pd.DataFrame:
    """Per trace (first-appearance order): ``g, n, unlabeled`` and the decomposition sums.

    ``g_<type>, n_<type>`` for each reasoning type and ``g_e<k>, n_e<k>`` for k = 0, 1, 2
    (grounded and labeled reasoning steps of that type, or taken while E = k; a trace whose E is
    unknown, spec section 2, has no step in any state). Every RQI
    number of a group is a function of the sums of these columns over its traces (and of
    g / n per trace for the trace aggregate): :func:`rqi_from_columns`.
    """
    per = _per_trace(steps)
    seg = trace_segments(steps)
    g, r = _grounding(steps)
    labeled = r & ~np.isnan(g)
    g0 = np.where(labeled, g, 0.0)
    cols: dict[str, np.ndarray] = {}
    rtype = pd.Categorical(steps["reasoning_type"], categories=REASONING_TYPES).codes  # one pass, not one per type
    for k, t in enumerate(REASONING_TYPES):
        m = labeled & (rtype == k)
        cols[f"g_{t}"], cols[f"n_{t}"] = seg.sum(g0, mask=m), seg.count(m).astype(float)
    e = step_evidence(steps, mapping=evidence_mapping, scope=evidence_scope).to_numpy() if labeled.any() else None
    if e is not None and seg.n:  # a trace whose E is unknown (spec section 2) is in no evidence state
        unknown = trace_evidence_unknown(steps, evidence_mapping)
        labeled_known = labeled & ~((seg.codes >= 0) & unknown[np.maximum(seg.codes, 0)])
    else:
        labeled_known = labeled
    for k in range(3):
        m = labeled_known & (e == k) if e is not None else labeled
        cols[f"g_e{k}"], cols[f"n_e{k}"] = seg.sum(g0, mask=m), seg.count(m).astype(float)
    extra = pd.DataFrame(cols, index=pd.Index(seg.uniques)).reindex(per.index, fill_value=0.0)
    return pd.concat([per, extra], axis=1)


def _sum(values: np.ndarray) -> np.float64:
    """``Series.sum()`` of float values as pandas computes it: NaN skipped (as 0), one pairwise sum."""
    return np.add.reduce(np.where(np.isnan(values), 0.0, values))


def _value(per: pd.DataFrame, aggregate: str) -> float:
    g, n = per["g"].to_numpy(dtype=float), per["n"].to_numpy(dtype=float)
    labeled = n > 0
    if not labeled.any():
        return float("nan")
    g, n = g[labeled], n[labeled]
    if aggregate == "trace":  # the mean of the defined ratios, as Series.mean
        ratios = g / n
        return float(_sum(ratios) / np.count_nonzero(~np.isnan(ratios)))
    return float(_sum(g) / _sum(n))


def _warn_undefined() -> None:
    warnings.warn(
        "RQI is undefined (no reasoning step has a grounding label); returning NaN",
        UndefinedMetricWarning,
        stacklevel=3,
    )


def rqi_score(steps: pd.DataFrame, *, aggregate: RQIAggregate = "trace") -> float:
    """Reasoning quality index: the share of grounded reasoning (spec section 3).

    G = 1 for a Grounded reasoning step, 0 for NotGrounded; RQI_i = mean G over trace i's
    labeled reasoning steps.

    - ``aggregate="trace"`` (default, the paper): RQI = mean_i RQI_i over the traces with at
      least one labeled reasoning step.
    - ``aggregate="step"``: RQI = sum of G / number of labeled reasoning steps (pooled).

    Parameters
    ----------
    steps : DataFrame
        Step table of ``build_tables`` for one group (e.g. one agent).
    aggregate : {"trace", "step"}

    Returns
    -------
    float
        In [0, 1], higher is better. NaN with an ``UndefinedMetricWarning`` when no reasoning
        step has a grounding label.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["a", "a", "a", "b"], "kind": ["reasoning"] * 4,
    ...                       "grounding": ["Grounded", "NotGrounded", "NotGrounded", "Grounded"]})
    >>> round(rqi_score(steps), 4)  # (1/3 + 1) / 2
    0.6667
    >>> rqi_score(steps, aggregate="step")  # 2 / 4
    0.5
    """
    check_option("aggregate", aggregate, RQI_AGGREGATE_OPTIONS)
    value = _value(_per_trace(steps), aggregate)
    if np.isnan(value):
        _warn_undefined()
    return value


@dataclass
class RQIResult(EstimateResult):
    """What :func:`reasoning_quality` computes for one group of traces.

    Attributes
    ----------
    value : float
        RQI in [0, 1] (NaN when undefined).
    n_traces : int
        Traces with at least one labeled reasoning step (those RQI averages over).
    n_steps : int
        Labeled reasoning steps.
    n_unlabeled : int
        Reasoning steps without a grounding label (not used).
    n_traces_unlabeled : int
        Traces with no labeled reasoning step (not used).
    per_trace : Series
        RQI_i by trace id; NaN for traces without labeled reasoning.
    by_type : DataFrame
        Columns ``type, rqi, n``: mean G over the labeled reasoning steps of each type.
    by_evidence : DataFrame
        Columns ``E, rqi, n, share``: mean G over the labeled reasoning steps taken while
        E = k and their share; sum(share * rqi) over k equals the step-pooled RQI of the traces
        whose E is known (a trace with observations and none labeled is in no state, spec
        section 2).
    """

    aggregate: str
    n_traces: int
    n_steps: int
    n_unlabeled: int
    n_traces_unlabeled: int
    per_trace: pd.Series
    by_type: pd.DataFrame
    by_evidence: pd.DataFrame

    _summary_name = "rqi"
    _summary_columns = ("n_traces", "n_steps", ("n_unlabeled_steps", "n_unlabeled"), "n_traces_unlabeled", "aggregate")


def reasoning_quality(
    steps: pd.DataFrame,
    *,
    aggregate: RQIAggregate = "trace",
    evidence_mapping: EvidenceMapping = "sum",
    evidence_scope: EvidenceScope = "cumulative",
    n_boot: int = 2000,
    seed: Seed = 0,
    alpha: float = 0.05,
    cluster: Cluster = "trace",
    resampler: Resampler | None = None,
) -> RQIResult:
    """RQI with its decompositions, counts and bootstrap CI (spec section 3).

    RQI as in :func:`rqi_score`. Decompositions (step-pooled, each with n):

    - by reasoning type: mean G within InformationSynthesis, PlanFormation, StateAssessment;
    - by evidence state: rqi_k = mean G over reasoning steps taken while E = k (E held at
      the step, spec section 2), share_k = their share of the labeled reasoning steps, so
      that sum_k share_k * rqi_k = the step-pooled RQI (per trace: RQI_i =
      sum_k P_i(E = k) E_i[G | E = k]).

    Parameters
    ----------
    steps : DataFrame
        Step table of ``build_tables`` for one group.
    aggregate : {"trace", "step"}
    evidence_mapping : {"sum", "sufficiency_first"}
        Only affects ``by_evidence``.
    evidence_scope : {"cumulative", "latest"}
        Only affects ``by_evidence``.
    n_boot, seed, alpha, cluster :
        Percentile bootstrap over whole traces (``cluster="question"``: whole questions,
        by the steps' ``question_id``); ``n_boot=0`` skips it.
    resampler : Resampler, optional
        The resampling in place of ``n_boot`` and ``seed`` (B, seed, method; without clusters:
        ``cluster`` names the units).

    Returns
    -------
    RQIResult
        ``value`` in [0, 1], higher is better.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["a", "a", "b"], "question_id": ["q", "q", "q"],
    ...                       "kind": ["reasoning"] * 3, "turn": [0, 0, 0],
    ...                       "reasoning_type": ["PlanFormation"] * 3,
    ...                       "grounding": ["Grounded", None, "NotGrounded"],
    ...                       "clarity": [None] * 3, "sufficiency": [None] * 3})
    >>> res = reasoning_quality(steps, n_boot=0)
    >>> res.value, res.n_traces, res.n_unlabeled
    (0.5, 2, 1)
    """
    check_option("aggregate", aggregate, RQI_AGGREGATE_OPTIONS)
    check_option("evidence_mapping", evidence_mapping, MAPPING_OPTIONS)
    check_option("evidence_scope", evidence_scope, SCOPE_OPTIONS)
    check_bootstrap_options(n_boot, alpha, cluster)
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="reasoning_quality")
    per = rqi_trace_columns(steps, evidence_mapping=evidence_mapping, evidence_scope=evidence_scope)
    qids = None
    if "question_id" in steps.columns:
        seg = trace_segments(steps)
        qids = pd.Series(seg.first_valid(steps["question_id"]), index=pd.Index(seg.uniques)).reindex(per.index)
    clusters = cluster_labels(per.index, qids, cluster=cluster)
    res = rqi_from_columns(per, aggregate=aggregate, resampler=resampler.with_clusters(clusters), alpha=alpha)
    res.options = {"aggregate": aggregate, "evidence_mapping": evidence_mapping, "evidence_scope": evidence_scope}
    return res


def _levels(sums: dict[str, np.float64], levels: Sequence, suffixes: Sequence[str], name: str) -> pd.DataFrame:
    """Mean G and n per level from the sums of the ``g_<suffix>, n_<suffix>`` columns (NaN where n = 0).

    G is 0 or 1, so the sums are exact integers and sum / n is the step-pooled mean exactly.
    """
    g = np.array([sums[f"g_{x}"] for x in suffixes], dtype=float)
    n = np.array([sums[f"n_{x}"] for x in suffixes], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, g / np.where(n > 0, n, 1.0), np.nan)
    return pd.DataFrame({name: list(levels), "rqi": mean, "n": n.astype(int)})


def rqi_sums(per: pd.DataFrame, aggregate: RQIAggregate) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """RQI of the traces ``per`` describes (columns ``g, n``) as per-trace columns and the
    statistic of their sums: [RQI_i, 1] over the traces with a labeled reasoning step
    (0, 0 for the others), or [G_i, n_i] pooled; the statistic is the ratio of the two sums.
    The columns every RQI bootstrap resamples (:func:`~seekbench.metrics.rqi_columns` too).
    """
    g, n = per["g"].to_numpy(dtype=float), per["n"].to_numpy(dtype=float)
    if aggregate == "step":
        return np.column_stack([g, n]), ratio
    has = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.column_stack([np.where(has, g / np.where(has, n, 1.0), 0.0), has.astype(float)]), ratio


def rqi_from_columns(
    per: pd.DataFrame, *, aggregate: RQIAggregate, resampler: Resampler, alpha: float = 0.05
) -> RQIResult:
    """The :class:`RQIResult` of a group from its :func:`rqi_trace_columns` (one row per trace).

    ``resampler`` resamples the rows (its clusters one per row); the CI has level 1 - ``alpha``.
    The one aggregation behind :func:`reasoning_quality` and
    :func:`~seekbench.metrics.summarize_statistics`.
    """
    value = _value(per, aggregate)
    if np.isnan(value):
        _warn_undefined()
    g, n = per["g"].to_numpy(dtype=float), per["n"].to_numpy(dtype=float)
    labeled_traces = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        per_trace = pd.Series(np.where(labeled_traces, g / n, np.nan), index=per.index, name="rqi")
    ci = resampler.interval(*rqi_sums(per, aggregate), alpha=alpha)
    # Every column's sum from one array (a Series per column costs more than the sums).
    values = per.to_numpy(dtype=float)
    sums = {c: _sum(values[:, j]) for j, c in enumerate(per.columns)}
    by_evidence = _levels(sums, [0, 1, 2], ["e0", "e1", "e2"], "E")
    total = by_evidence["n"].sum()
    by_evidence["share"] = by_evidence["n"] / total if total else np.nan
    return RQIResult(
        value=value,
        ci=ci,
        aggregate=aggregate,
        n_traces=int(labeled_traces.sum()),
        n_steps=int(sums["n"]),
        n_unlabeled=int(sums["unlabeled"]),
        n_traces_unlabeled=int((~labeled_traces).sum()),
        per_trace=per_trace,
        by_type=_levels(sums, REASONING_TYPES, REASONING_TYPES, "type"),
        by_evidence=by_evidence,
    )
