"""The one per-trace reduction of an analysis: the statistics table made (or given) once, and every
per-group summary an analysis shows aggregated from it.

:func:`~seekbench.metrics.summarize` reduces the steps to one row per trace
(:func:`~seekbench.metrics.trace_statistics`) each time it is called; an analysis needs the
summary several times (the process metrics grouped as asked, the comparison's per-agent values,
the seeking episodes' process metrics), so it reduces once and aggregates the same table with
:func:`~seekbench.metrics.summarize_statistics`, which gives the same numbers. The table may
also come from elsewhere (``seekbench.scale.reduce_traces`` on many cores or a Ray cluster).
"""

from __future__ import annotations

from concurrent.futures import Executor

import numpy as np
import pandas as pd

from ..metrics import MetricOptions, MetricsSummary, summarize_statistics, trace_statistics

#: Keywords of :func:`~seekbench.metrics.summarize` that are not metric options (the aggregation's).
_AGGREGATION = ("overcautious_window", "cluster", "bootstrap", "n_boot", "seed", "alpha")


def metric_options_of(options: dict) -> MetricOptions:
    """The :class:`~seekbench.metrics.MetricOptions` of ``summarize`` keywords (``options=`` and single ones)."""
    single = {k: v for k, v in options.items() if k not in (*_AGGREGATION, "options")}
    return MetricOptions.resolve(options.get("options"), **single)


def analysis_statistics(
    steps: pd.DataFrame, traces: pd.DataFrame, statistics: pd.DataFrame | None, options: dict
) -> pd.DataFrame:
    """The per-trace statistics table of ``traces``: ``statistics`` when given (checked to hold the
    same traces in the same order), else reduced here from the tables with the metric options."""
    if statistics is None:
        return trace_statistics(steps, traces, options=metric_options_of(options))
    given, wanted = statistics["trace_id"].to_numpy(), traces["trace_id"].to_numpy()
    if len(given) != len(wanted) or not np.array_equal(given, wanted):
        raise ValueError("the statistics table must hold the traces of the trace table, one row each, in its order")
    return statistics


def summary_of(
    stats: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    by: tuple[str, ...],
    executor: Executor | None = None,
    **options,
) -> MetricsSummary:
    """``summarize(steps, traces, by=by, **options)`` from the statistics table of those traces, the
    groups computed on ``executor`` when given (the same summary).

    As ``summarize`` does, a ``by`` column the table leaves out (free text) is taken from ``traces``
    (whose rows the table's follow).
    """
    missing = [c for c in by if c not in stats.columns and c in traces.columns]
    if missing:
        stats = stats.assign(**{c: traces[c].to_numpy() for c in missing})
    return summarize_statistics(
        stats,
        by=by,
        options=metric_options_of(options),
        executor=executor,
        **{k: options[k] for k in _AGGREGATION if k in options},
    )
