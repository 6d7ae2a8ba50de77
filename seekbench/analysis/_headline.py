"""The headline metrics an agent comparison states, and each one's per-trace columns for one agent.

Every headline metric is a statistic of per-trace sums (see :mod:`seekbench.metrics` ``bootstrap_sums``),
so a paired bootstrap of the difference between two agents resamples the sums of both at once.
The per-trace columns are read from the per-trace statistics table
(:func:`seekbench.metrics.trace_statistics`) the summary itself was aggregated from, so the steps
are reduced once: RQI and CE as the metrics' own columns of that table
(``rqi_statistics_columns``, ``ce_statistics_columns``), ERF(8) from the recovery events
(``erf_at_columns``), accuracy, tool calls and the duplicate-query rate from the outcome columns,
the overconfident and overcautious rates (spec section 5) from E at the answer and the first turn
at E = 2. A trace whose E is unknown (observations, none labeled: spec section 2) is in no E-based
column (ERF(8), the two rates; CE's columns have none of its decision points). On the full sample
each statistic equals the number :func:`seekbench.metrics.summarize` reports (tested).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ..metrics import (
    RECOVERED_BY,
    MetricOptions,
    ce_statistics_columns,
    erf_at_columns,
    evidence_unknown,
    rqi_statistics_columns,
)

Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class HeadlineMetric:
    """One metric of the comparison: its key in :func:`seekbench.metrics.summarize`, which way is better,
    and the words a sentence about it uses.

    Attributes
    ----------
    key : str
        The ``summarize`` group key (``rqi``, ``ce``, ``recovered_by_8``, ...).
    name : str
        Display name.
    better : {"higher", "lower"}
        Which values are better.
    direction : str
        The direction in words (CE: lower is better, 0 is best).
    comparative : str
        Completes "<agent> ... than <others>" for the better agent.
    short : str
        A column heading of a few characters.
    """

    key: str
    name: str
    better: Literal["higher", "lower"]
    direction: str
    comparative: str
    short: str


#: The metrics the comparison states, in the order the report lists them.
HEADLINE_METRICS = (
    HeadlineMetric(
        "rqi", "RQI (grounded reasoning)", "higher", "higher is better", "grounds more of its reasoning", "RQI"
    ),
    HeadlineMetric("ce", "CE (calibration error)", "lower", "lower is better, 0 is best", "is better calibrated", "CE"),
    HeadlineMetric(
        f"recovered_by_{RECOVERED_BY}",
        f"ERF({RECOVERED_BY}) (recovery by turn {RECOVERED_BY})",
        "higher",
        "higher is better",
        f"recovers full evidence by turn {RECOVERED_BY} more often",
        f"ERF({RECOVERED_BY})",
    ),
    HeadlineMetric("accuracy", "accuracy", "higher", "higher is better", "answers correctly more often", "accuracy"),
    HeadlineMetric(
        "overconfident",
        "overconfident rate",
        "lower",
        "lower is better",
        "answers without full evidence less often",
        "overconf.",
    ),
    HeadlineMetric(
        "overcautious",
        "overcautious rate",
        "lower",
        "lower is better",
        "holds back its answer after full evidence less often",
        "overcaut.",
    ),
    HeadlineMetric(
        "tool_calls", "tool calls per trace", "lower", "lower is cheaper", "needs fewer tool calls", "tool calls"
    ),
    HeadlineMetric(
        "duplicate_query_rate",
        "duplicate-query rate",
        "lower",
        "lower is better",
        "repeats its own queries less often",
        "dup. queries",
    ),
)


def _ratio(s: np.ndarray) -> np.ndarray:
    """Column 0 / column 1 of each row of sums; NaN where column 1 is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s[:, 1] > 0, s[:, 0] / np.where(s[:, 1] > 0, s[:, 1], 1.0), np.nan)


def _mean_columns(values: np.ndarray, defined: np.ndarray | None = None) -> tuple[np.ndarray, Statistic]:
    """A mean over the traces where ``values`` is defined, as ``[v, 1]`` columns (0 where undefined)."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v) if defined is None else np.asarray(defined, dtype=bool) & np.isfinite(v)
    return np.column_stack([np.where(ok, v, 0.0), ok.astype(float)]), _ratio


def _undefined(n: int) -> tuple[np.ndarray, Statistic]:
    return np.zeros((n, 1)), lambda s: np.full(len(s), np.nan)


def _companion_columns(stats: pd.DataFrame, overcautious_window: int) -> dict[str, tuple[np.ndarray, Statistic]]:
    """Overconfident rate (answered traces whose answer turn held E < 2) and overcautious rate
    (traces that reached E = 2 and did not answer within ``overcautious_window`` turns of it; one that never
    answers counts when it ever held E = 2), spec section 5, from the turn decision points' ``e_answer``
    and ``first_e2`` of the statistics table."""
    answered = stats["answered"].to_numpy(dtype=bool)
    first2 = stats["first_e2"].to_numpy(dtype=float)
    reached = ~np.isnan(first2)
    late = stats["answer_turn"].to_numpy(dtype=float) - first2 > overcautious_window
    over = answered & (stats["e_answer"].to_numpy(dtype=float) < 2)
    cautious = reached & (~answered | late)
    known = ~_evidence_unknown(stats)
    return {
        "overconfident": _mean_columns(over.astype(float), answered & known),
        "overcautious": _mean_columns(cautious.astype(float), known),
    }


def _evidence_unknown(stats: pd.DataFrame) -> np.ndarray:
    """Per trace: it has observations and none is labeled, so its E is unknown (spec section 2)."""
    return evidence_unknown(stats["n_obs"].to_numpy(), stats["n_obs_unlabeled"].to_numpy())


#: The recovery outcome of each ``erf_event`` code of the statistics table.
_EVENTS = np.array(["cut_off", "recovered", "stopped"], dtype=object)


def _erf_columns(stats: pd.DataFrame, options: MetricOptions) -> tuple[np.ndarray, Statistic]:
    """ERF(8) (spec section 4) from the recovery events of the statistics table."""
    events = pd.DataFrame(
        {
            "duration": stats["erf_duration"].to_numpy(dtype=np.int64),
            "event": _EVENTS[stats["erf_event"].to_numpy(dtype=np.int64)],
            "evidence_unknown": _evidence_unknown(stats),
        }
    )
    return erf_at_columns(events, RECOVERED_BY, method=options.erf_method)


def headline_columns(
    stats: pd.DataFrame,
    *,
    options: MetricOptions,
    overcautious_window: int = 15,
    global_prevalence: np.ndarray | None = None,
    defined: dict[str, bool] | None = None,
) -> dict[str, tuple[np.ndarray, Statistic]]:
    """Per headline metric, one agent's per-trace columns (one row per trace of ``stats``) and the
    statistic that maps ``(B, m)`` column sums to B values of the metric.

    Parameters
    ----------
    stats : DataFrame
        The agent's rows of the per-trace statistics table (:func:`seekbench.metrics.trace_statistics`,
        made with ``options``): the reduction the summary was aggregated from, not made again.
    options : MetricOptions
        The metric options of the report.
    overcautious_window : int
        H of the overcautious rate.
    global_prevalence : array of 3 floats, optional
        P(E = k) over all agents, for pooled CE with the global prevalence.
    defined : dict of str to bool, optional
        Whether ``summarize`` found each metric defined for this agent; an undefined one (CE and ERF
        without evidence labels, RQI without grounding labels, ...) gets a statistic that is NaN
        everywhere (never 0).
    """
    n = len(stats)
    out = {
        "rqi": rqi_statistics_columns(stats, options=options),
        "ce": ce_statistics_columns(stats, options=options, global_prevalence=global_prevalence),
        f"recovered_by_{RECOVERED_BY}": _erf_columns(stats, options) if n else _undefined(n),
        "accuracy": _mean_columns(stats["correct"].to_numpy(dtype=float)),
        **_companion_columns(stats, overcautious_window),
        "tool_calls": _mean_columns(stats["tool_calls"].to_numpy(dtype=float)),
        "duplicate_query_rate": _mean_columns(stats["duplicate_query"].to_numpy(dtype=float)),
    }
    for key, ok in (defined or {}).items():
        if not ok:
            out[key] = _undefined(n)
    return out
