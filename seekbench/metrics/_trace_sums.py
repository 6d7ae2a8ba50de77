"""RQI, CE and ERF(t) as per-trace columns and a statistic of their sums (for paired bootstraps).

Each metric of one group depends on its traces only through sums over traces: RQI (trace
aggregate) through [RQI_i, 1] over traces with a labeled reasoning step, pooled RQI through
[sum G_i, n_i], CE (trace aggregate) through [CE_i, 1], pooled CE through the six decision
counts [n_k, a_k], ERF(t) through the traces recovering, stopping and ending at each time
(:func:`~seekbench.metrics.erf_at_columns`). Resampling whole traces only reweights the rows,
so B resamples of several metrics and label sources are one matrix product
(:func:`~seekbench.metrics.bootstrap_sums`) and each statistic is evaluated on all B sums at
once. The columns and statistics are the metrics' own, the ones their bootstraps resample
(``rqi_sums``, ``ce_sums``, ``erf_at_columns``, built from the same per-trace columns as
:func:`~seekbench.metrics.trace_statistics`): on the full sample each statistic equals the metric.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ._ce import calibration_trace_columns, ce_sums
from ._decisions import evidence_labeled, observation_label_counts
from ._erf_bootstrap import erf_at_columns
from ._options import MetricOptions
from ._recovery_events import recovery_events
from ._rqi import _per_trace, rqi_sums

Statistic = Callable[[np.ndarray], np.ndarray]


def _undefined(n: int) -> tuple[np.ndarray, Statistic]:
    return np.zeros((n, 1)), lambda s: np.full(len(s), np.nan)


def rqi_columns(
    steps: pd.DataFrame, trace_ids: pd.Index, *, options: MetricOptions | None = None
) -> tuple[np.ndarray, Statistic]:
    """RQI (spec section 3) of the traces ``trace_ids`` as per-trace columns and a statistic of their sums.

    Parameters
    ----------
    steps : DataFrame
        Step table of the group (``build_tables``).
    trace_ids : Index
        The group's traces, one row each (a trace without reasoning steps contributes zeros).
    options : MetricOptions, optional
        Only ``rqi_aggregate`` is used.

    Returns
    -------
    (columns, statistic)
        ``columns`` has one row per trace; ``statistic`` maps ``(B, m)`` column sums to B values
        of RQI in [0, 1] (NaN where no labeled reasoning step was drawn).

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["a", "a", "a", "b"], "kind": ["reasoning"] * 4,
    ...                       "grounding": ["Grounded", "NotGrounded", "NotGrounded", "Grounded"]})
    >>> cols, stat = rqi_columns(steps, pd.Index(["a", "b"]))
    >>> round(float(stat(cols.sum(axis=0, keepdims=True))[0]), 4)  # (1/3 + 1) / 2, as rqi_score
    0.6667
    >>> float(stat(np.array([[0.0, 0.0]]))[0])  # a resample without labeled reasoning
    nan
    """
    opts = MetricOptions.resolve(options)
    return rqi_sums(_per_trace(steps).reindex(trace_ids, fill_value=0.0), opts.rqi_aggregate)


def ce_columns(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    options: MetricOptions | None = None,
    global_prevalence: np.ndarray | None = None,
) -> tuple[np.ndarray, Statistic]:
    """CE (spec section 5) of ``traces`` as per-trace columns and a statistic of their sums.

    Parameters
    ----------
    steps, traces : DataFrame
        Step and trace tables of the group.
    options : MetricOptions, optional
        ``ce_aggregate``, ``ce_prevalence``, ``decision_points`` and the evidence options.
    global_prevalence : array of 3 floats, optional
        P(E = k) over all groups, the weights of pooled CE with ``ce_prevalence="global"``
        (:func:`~seekbench.metrics.evidence_prevalence`); else the resample's own.

    Returns
    -------
    (columns, statistic)
        As :func:`rqi_columns`; CE in [0, 1], lower is better. When no observation of the group
        has evidence labels the statistic is NaN everywhere (CE is undefined).
    """
    opts = MetricOptions.resolve(options)
    per = calibration_trace_columns(steps, traces, opts.decision_points, opts.evidence)
    if not evidence_labeled(per):
        return _undefined(len(traces))
    weights = global_prevalence if opts.ce_aggregate == "pooled" and opts.ce_prevalence == "global" else None
    return ce_sums(per[["n0", "n1", "n2", "a0", "a1", "a2"]].to_numpy(dtype=float), opts.ce_aggregate, weights)


def rqi_statistics_columns(
    stats: pd.DataFrame, *, options: MetricOptions | None = None
) -> tuple[np.ndarray, Statistic]:
    """RQI as :func:`rqi_columns` gives it, from a per-trace statistics table instead of the steps.

    Parameters
    ----------
    stats : DataFrame
        Rows of :func:`~seekbench.metrics.trace_statistics` (its ``rqi_g``, ``rqi_n``); one row of
        columns per row, so two groups' columns stay paired row by row (a trace without reasoning
        steps contributes zeros).
    options : MetricOptions, optional
        Only ``rqi_aggregate`` is used.

    Returns
    -------
    (columns, statistic)
        As :func:`rqi_columns`: the same columns and statistic for the same traces.

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> from seekbench.metrics import trace_statistics
    >>> tr = [{"trace_id": t, "agent": "x", "steps": [{"index": 0, "kind": "reasoning",
    ...        "labels": {"grounding": g}}, {"index": 1, "kind": "answer"}]} for t, g in [("a", "Grounded"),
    ...        ("b", "NotGrounded")]]
    >>> cols, stat = rqi_statistics_columns(trace_statistics(*build_tables(tr)))
    >>> float(stat(cols.sum(axis=0, keepdims=True))[0])
    0.5
    """
    opts = MetricOptions.resolve(options)
    per = pd.DataFrame({"g": stats["rqi_g"].to_numpy(dtype=float), "n": stats["rqi_n"].to_numpy(dtype=float)})
    return rqi_sums(per, opts.rqi_aggregate)


def ce_statistics_columns(
    stats: pd.DataFrame,
    *,
    options: MetricOptions | None = None,
    global_prevalence: np.ndarray | None = None,
) -> tuple[np.ndarray, Statistic]:
    """CE as :func:`ce_columns` gives it, from a per-trace statistics table instead of the steps.

    Parameters
    ----------
    stats : DataFrame
        Rows of :func:`~seekbench.metrics.trace_statistics` made with ``options`` (its decision
        counts ``ce_n0 .. ce_a2`` and observation counts); one row of columns per row.
    options : MetricOptions, optional
        ``ce_aggregate`` and ``ce_prevalence`` (the table was made with the rest).
    global_prevalence : array of 3 floats, optional
        As for :func:`ce_columns`.

    Returns
    -------
    (columns, statistic)
        As :func:`ce_columns`: NaN everywhere when no observation of the rows has evidence labels.

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> from seekbench.metrics import trace_statistics
    >>> tr = [{"trace_id": "a", "agent": "x", "steps": [{"index": 0, "kind": "search_result",
    ...        "labels": {"clarity": "Clear", "sufficiency": "Sufficient"}},
    ...        {"index": 1, "kind": "answer"}]}]
    >>> cols, stat = ce_statistics_columns(trace_statistics(*build_tables(tr)))
    >>> float(stat(cols.sum(axis=0, keepdims=True))[0])  # answered at E = 2: what the ideal policy does
    0.0
    """
    opts = MetricOptions.resolve(options)
    if not evidence_labeled(stats[["n_obs", "n_obs_unlabeled"]]):
        return _undefined(len(stats))
    counts = stats[[f"ce_{c}" for c in ("n0", "n1", "n2", "a0", "a1", "a2")]].to_numpy(dtype=float)
    weights = global_prevalence if opts.ce_aggregate == "pooled" and opts.ce_prevalence == "global" else None
    return ce_sums(counts, opts.ce_aggregate, weights)


def erf_columns(
    steps: pd.DataFrame, traces: pd.DataFrame, t: float, *, options: MetricOptions | None = None
) -> tuple[np.ndarray, Statistic]:
    """ERF at time ``t`` (spec section 4) of ``traces`` as per-trace columns and a statistic of their sums.

    The recovery events of :func:`~seekbench.metrics.recovery_events` (with ``recovery``,
    ``time`` and the evidence options) laid out by :func:`~seekbench.metrics.erf_at_columns`
    (``erf_method``). When no observation has evidence labels the statistic is NaN everywhere.

    Returns
    -------
    (columns, statistic)
        As :func:`rqi_columns`; ERF(t) in [0, 1], higher is better.
    """
    opts = MetricOptions.resolve(options)
    n = len(traces)
    if not n or not evidence_labeled(observation_label_counts(steps, traces, evidence_mapping=opts.evidence_mapping)):
        return _undefined(n)
    events = recovery_events(steps, traces, recovery=opts.recovery, time=opts.time, **opts.evidence)
    return erf_at_columns(events, t, method=opts.erf_method)
