"""One group's summary: the numbers of :func:`~seekbench.metrics.summarize_statistics` for the rows of
one group (agent, ...), computed from those rows only, so in any process.

:func:`_group` makes the group's dict (RQI, CE and its rates, outcome, the unlabeled counts, the
decompositions) and its recovery fitter; :func:`erf_entries` reads the fitter's curves at the
times every group shares, once all groups are done.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning
from ._bootstrap import Cluster, cluster_labels
from ._ce import CalibrationResult, calibration_from_columns
from ._decisions import evidence_labeled
from ._erf import EvidenceRecoveryFitter
from ._no_search import acts_without_searching, blank_search_metrics
from ._options import MetricOptions
from ._outcome import outcome_from_columns
from ._resampler import Resampler
from ._rqi import RQIResult, rqi_from_columns
from ._summary_groups import Caught, caught_warnings
from ._trace_stats import calibration_part, events_part, outcome_part, rqi_part

#: Turn at which ``recovered_by_8`` reads the recovery curve.
RECOVERED_BY = 8


def _fit_erf(events: pd.DataFrame, labeled: bool, **kw) -> EvidenceRecoveryFitter | None:
    """The group's recovery curve from its events; None when its observations are all unlabeled."""
    if not labeled:
        warnings.warn(
            "ERF is undefined (no observation has evidence labels); returning NaN", UndefinedMetricWarning, stacklevel=2
        )
        return None
    return EvidenceRecoveryFitter(**kw).fit_events(events)


def erf_entries(fitter: EvidenceRecoveryFitter | None, last: int) -> dict:
    """Curves at every integer time 0 .. max(``last``, 8) (``last``: the last time of any group; a
    cumulative incidence keeps its value after a group's last time), median time and share
    recovered by turn 8."""
    times = range(max(last, RECOVERED_BY) + 1)
    if fitter is None:
        nan = float("nan")
        return {
            "erf": {str(t): nan for t in times},
            "erf_ci": {str(t): [nan, nan] for t in times},
            "erf_raw": {str(t): nan for t in times},
            "median_recovery_turn": None,
            f"recovered_by_{RECOVERED_BY}": nan,
        }
    curve = fitter.curve_.reindex(times).ffill()
    raw = fitter.raw_curve_.reindex(times).ffill()
    median = fitter.median_recovery_turn_
    return {
        "erf": {str(t): float(curve.at[t, "erf"]) for t in times},
        "erf_ci": {str(t): [float(curve.at[t, "lower"]), float(curve.at[t, "upper"])] for t in times},
        "erf_raw": {str(t): float(raw.at[t]) for t in times},
        "median_recovery_turn": None if not np.isfinite(median) else float(median),
        f"recovered_by_{RECOVERED_BY}": float(fitter.recovered_by(RECOVERED_BY)),
    }


def _erf_ci(fitter: EvidenceRecoveryFitter | None) -> list[float]:
    """The CI of ERF(8): the fitted curve's pointwise interval at turn 8, the same interval the ERF
    table, ``erf.csv`` and the figure show (spec section 3, one number one interval). For the
    Aalen-Johansen curve that is the delta-method (Greenwood-type) variance with the log(-log)
    transform; for ``erf_method="km"`` lifelines' exponential Greenwood bounds. Analytic, so no seed
    decides it."""
    if fitter is None:
        return [float("nan"), float("nan")]
    grid = fitter.curve_.index.to_numpy(dtype=float)
    at = np.searchsorted(grid, RECOVERED_BY, side="right") - 1
    if at < 0 or not len(fitter.events_):
        return [float("nan"), float("nan")]
    row = fitter.curve_.iloc[at]
    return [float(row["lower"]), float(row["upper"])]


def _unlabeled(stats: pd.DataFrame, rqi: RQIResult, cal: CalibrationResult, n_known: int) -> dict[str, int]:
    n = len(stats)
    return {
        "reasoning_steps_without_grounding": rqi.n_unlabeled,
        "reasoning_steps_without_type": int(stats["reasoning_without_type"].sum()),
        "searches_without_type": int(stats["searches_without_type"].sum()),
        "observations_without_evidence": int(stats["n_obs_unlabeled"].sum()),
        "traces_without_labeled_reasoning": n - rqi.n_traces,
        "traces_with_all_observations_unlabeled": cal.n_traces_all_unlabeled,
        "traces_without_correctness": n - n_known,
        "other_steps": int(stats["other_steps"].sum()),
    }


def _by_table(frame: pd.DataFrame, key: str, cols: Sequence[str]) -> dict:
    return {str(row[key]): {c: row[c] for c in cols} for row in frame.to_dict("records")}


def group_frame(stats: pd.DataFrame, rows: np.ndarray, positions: np.ndarray) -> pd.DataFrame:
    """The columns ``positions`` of the rows ``rows`` (one group: the only copy made), indexed by
    row position. Without trace ids the row positions are the ids (each row its own resampling
    unit: trace ids are unique), and without agents None (the recovery curve's label only)."""
    if stats.columns.is_unique:  # column by column: a table concatenated from chunks has a block per column,
        cols = {}  # which ``take`` would copy (all of them) and ``iloc`` copy again
        for c in stats.columns[positions]:
            col = stats[c]
            cols[c] = col.to_numpy()[rows] if isinstance(col.dtype, np.dtype) else col.array.take(rows)
        g = pd.DataFrame(cols, index=pd.Index(rows), copy=False)
    else:
        g = stats.take(rows).iloc[:, positions]  # rows first: ``iloc[rows, positions]`` copies whole columns
        g.index = pd.Index(rows)
    g.attrs = {}  # checked already; pandas would copy them on every operation
    if "trace_id" not in g.columns:
        g["trace_id"] = rows
    if "agent" not in g.columns:
        g["agent"] = None
    return g


def summarize_group(
    stats: pd.DataFrame, keys: dict, *, cluster: Cluster, resampler: Resampler, **kw: Any
) -> tuple[dict, EvidenceRecoveryFitter | None, list[Caught]]:
    """One group's dict and recovery fitter (as :func:`_group`), and the warnings raised on the way:
    what a worker process sends back. ``resampler`` (B, seed, method) resamples the group's rows
    by ``cluster``: one resampling shared by the group's metrics."""
    with caught_warnings() as caught:
        group, fitter = _group(stats, keys, resampler=resampler.with_clusters(_clusters(stats, cluster)), **kw)
    return group, fitter, caught


def _clusters(stats: pd.DataFrame, cluster: Cluster) -> np.ndarray:
    """The resampling unit of each row: its number when traces are resampled (trace ids are
    unique, so the numbers are the clusters of :func:`cluster_labels` in the same order,
    without a string per trace), else its question's label."""
    if cluster == "trace":
        return np.arange(len(stats))
    return cluster_labels(stats["trace_id"], stats.get("question_id"), cluster=cluster)


def _group(
    stats: pd.DataFrame,
    keys: dict,
    *,
    opts: MetricOptions,
    resampler: Resampler,
    alpha: float,
    prevalence: np.ndarray | None,
    overcautious_window: int,
) -> tuple[dict, EvidenceRecoveryFitter | None]:
    """The summary dict of one group from its statistics rows (ERF entries still empty) and its recovery
    fitter; ``resampler`` resamples the rows (RQI's: those with steps) for the CIs of RQI and CE."""
    has_steps = stats["n_step_rows"].to_numpy() > 0
    no_search = acts_without_searching(stats)  # agents that act and never search: no search metric
    rqi_cols, cal_cols, events = rqi_part(stats), calibration_part(stats), events_part(stats)
    rqi = rqi_from_columns(rqi_cols, aggregate=opts.rqi_aggregate, resampler=resampler.subset(has_steps), alpha=alpha)
    cal = calibration_from_columns(
        cal_cols,
        aggregate=opts.ce_aggregate,
        prevalence=opts.ce_prevalence,
        weights=prevalence if opts.ce_aggregate == "pooled" and opts.ce_prevalence == "global" else None,
        overcautious_window=overcautious_window,
        resampler=resampler,
        alpha=alpha,
    )
    out = outcome_from_columns(outcome_part(stats), alpha=alpha)
    fitter = (
        None
        if no_search
        else _fit_erf(
            events,
            evidence_labeled(cal_cols),
            method=opts.erf_method,
            recovery=opts.recovery,
            time=opts.time,
            alpha=alpha,
            **opts.evidence,
        )
    )
    erf_ci = _erf_ci(fitter)
    group = {
        **keys,
        "n_traces": len(stats),
        "n_steps": int(stats["n_step_rows"].sum()),
        "n_answered": out.n_answered,
        "rqi": rqi.value,
        "rqi_ci": list(rqi.ci),
        "ce": cal.ce,
        "ce_ci": list(cal.ci),
        "overconfident": cal.overconfident_rate,
        "overconfident_ci": list(cal.overconfident_ci),
        "overcautious": cal.overcautious_rate,
        "overcautious_ci": list(cal.overcautious_ci),
        "overcautious_given_e2": cal.overcautious_given_e2,
        "n_reached_e2": cal.n_reached_e2,
        **dict.fromkeys(("erf", "erf_ci", "erf_raw", "median_recovery_turn", f"recovered_by_{RECOVERED_BY}")),
        f"recovered_by_{RECOVERED_BY}_ci": erf_ci,
        "accuracy": out.accuracy,
        "accuracy_ci": list(out.accuracy_ci),
        "em": out.em,
        "f1": out.f1,
        "tool_calls": out.tool_calls,
        "searches_before_answer": out.searches_before_answer,
        "duplicate_query_rate": out.duplicate_query_rate,
        "duplicate_visit_rate": out.duplicate_visit_rate,
        "unlabeled": _unlabeled(stats, rqi, cal, out.n_known),
        "rqi_by_type": _by_table(rqi.by_type, "type", ("rqi", "n")),
        "rqi_by_evidence": _by_table(rqi.by_evidence, "E", ("rqi", "n", "share")),
        "answer_rate_by_evidence": _by_table(cal.answer_table, "E", ("answer_rate", "n", "answers")),
        "accuracy_by_evidence": _by_table(cal.accuracy_by_evidence, "E", ("accuracy", "n", "n_known")),
    }
    if no_search:
        blank_search_metrics(group)
    return group, fitter
