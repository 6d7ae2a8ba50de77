"""One call for every process and outcome metric per group (agent): what the report prints."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from .._renamed import renamed_keyword
from ._bootstrap import Cluster, check_bootstrap_options
from ._ce import prevalence_from_columns
from ._group_summary import erf_entries, group_frame, summarize_group
from ._options import (
    CEAggregate,
    DecisionPoints,
    EvidenceMapping,
    EvidenceScope,
    Method,
    MetricOptions,
    Prevalence,
    Recovery,
    RQIAggregate,
    TimeScale,
    check_option,
)
from ._poisson import BOOTSTRAP_METHODS, BootstrapMethod, resolve_method
from ._resampler import ExactOrPoisson, Resampler
from ._summary_groups import caught_warnings, group_codes, group_rows, in_order, route_warnings
from ._trace_stats import (
    TRACE_STATISTICS_COLUMNS,
    check_table_options,
    trace_statistics,
)


def _json_safe(value: Any) -> Any:
    """NaN (and pandas' NA, a missing key of a string column) -> None, numpy scalars -> Python,
    tuples -> lists, recursively."""
    if value is pd.NA:
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@dataclass
class MetricsSummary:
    """Every metric per group, with the options that produced them.

    Attributes
    ----------
    options : dict
        The options of :func:`summarize`: ``by``, the nine of :class:`MetricOptions`,
        ``overcautious_window`` and the bootstrap's.
    groups : list of dict
        One dict per group (see :func:`summarize` for the keys); undefined numbers are NaN.
    warnings : list of str
        Why numbers are undefined, once per reason, with the groups concerned.
    """

    options: dict
    groups: list[dict]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready: NaN becomes None (JSON null)."""
        return _json_safe({"options": self.options, "groups": self.groups, "warnings": self.warnings})

    def to_frame(self) -> pd.DataFrame:
        """One row per group of the scalar entries; CIs as ``<name>_lo``/``<name>_hi``,
        ``unlabeled`` counts as ``unlabeled.<count>``; curves and sub-tables stay in ``to_dict``."""
        rows = []
        for g in self.groups:
            row: dict[str, Any] = {}
            for k, v in g.items():
                if isinstance(v, (list, tuple)) and len(v) == 2:
                    row[f"{k}_lo"], row[f"{k}_hi"] = v
                elif k == "unlabeled":
                    row.update({f"unlabeled.{c}": n for c, n in v.items()})
                elif not isinstance(v, dict):
                    row[k] = np.nan if v is None else v
            rows.append(row)
        return pd.DataFrame(rows)


def summarize(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    by: str | Sequence[str] = ("agent",),
    options: MetricOptions | None = None,
    evidence_mapping: EvidenceMapping | None = None,
    evidence_scope: EvidenceScope | None = None,
    ce_aggregate: CEAggregate | None = None,
    ce_prevalence: Prevalence | None = None,
    decision_points: DecisionPoints | None = None,
    recovery: Recovery | None = None,
    erf_method: Method | None = None,
    time: TimeScale | None = None,
    rqi_aggregate: RQIAggregate | None = None,
    overcautious_window: int = 15,
    horizon: int | None = None,
    cluster: Cluster = "trace",
    bootstrap: BootstrapMethod = "auto",
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> MetricsSummary:
    """RQI, CE, ERF and outcome metrics for each group of traces, with CIs and unlabeled counts.

    Groups are the distinct values of the ``by`` columns of the trace table (default one
    group per agent). With ``ce_aggregate="pooled"`` and ``ce_prevalence="global"`` the
    evidence prevalence P(E = k) is taken over all traces given (spec section 5).

    Parameters
    ----------
    steps, traces : DataFrame
        Step and trace tables of ``build_tables`` (the whole corpus).
    by : str or sequence of str
        Trace-table columns to group by.
    options : MetricOptions, optional
        The nine metric options at once (default: ``MetricOptions()``, the paper's definitions).
    evidence_mapping, evidence_scope : str, optional
        E (spec section 2); each of these nine keywords, when given, overrides ``options``.
    ce_aggregate, ce_prevalence, decision_points : str, optional
        CE (spec section 5), see :func:`~seekbench.metrics._ce.answer_calibration`.
    recovery, erf_method, time : str, optional
        ERF (spec section 4), see ``EvidenceRecoveryFitter``.
    rqi_aggregate : str, optional
        RQI (spec section 3), see :func:`~seekbench.metrics._rqi.rqi_score`.
    overcautious_window : int
        H of the overcautious rate (CE companions), in turns.
    horizon : int, optional
        Deprecated spelling of ``overcautious_window`` (a ``FutureWarning``; removed in the next release).
    cluster, n_boot, seed, alpha : percentile bootstrap over whole traces (or questions).
    bootstrap : {"auto", "exact", "poisson"}
        How the resamples are drawn: multinomial counts (``"exact"``, the classical bootstrap)
        or independent Poisson(1) weights per resampling unit (``"poisson"``, the Poisson
        bootstrap of Hanley & MacGibbon 2006 and Chamandy et al. 2012, whose cost does not
        grow with the number of traces; :mod:`seekbench.metrics._poisson`). ``"auto"``
        (default): exact up to ``AUTO_POISSON_ABOVE`` = 100,000 traces, Poisson above. When
        the Poisson bootstrap is used the options record ``"bootstrap": "poisson"``.

    Returns
    -------
    MetricsSummary
        Each group dict has the ``by`` keys and ``n_traces, n_steps, n_answered, rqi, rqi_ci,
        ce, ce_ci, overconfident, overcautious, overcautious_given_e2, n_reached_e2, erf,
        erf_ci, erf_raw, median_recovery_turn, recovered_by_8, accuracy, accuracy_ci, em, f1,
        tool_calls, searches_before_answer, duplicate_query_rate, duplicate_visit_rate,
        unlabeled, rqi_by_type, rqi_by_evidence, answer_rate_by_evidence,
        accuracy_by_evidence``, and ``overconfident_ci``, ``overcautious_ci`` and
        ``recovered_by_8_ci``. Curves are dicts keyed by every integer time ``"0"`` ..
        max(8, the last time of any trace) (a group's curve keeps its value after its own last
        time), so ``erf["8"]`` always exists and equals ``recovered_by_8``. Label-dependent
        numbers are NaN (null in ``to_dict``) when the labels they need are absent, never 0;
        ``median_recovery_turn`` is None when not reached.

        Intervals (spec section 3): RQI and CE get the percentile bootstrap; the rates
        (``accuracy``, ``overconfident``, ``overcautious``) the Wilson score interval over their
        denominators; ERF(8) the fitted curve's own pointwise interval, ``erf_ci["8"]``
        (delta method, log(-log) transform), which the ERF table and figure show as well.

        A trace with observations of which none is labeled has an unknown E (spec section 2):
        it is left out of CE, ERF, the two companion rates, E at the answer and RQI by evidence
        state, and counted in ``unlabeled["traces_with_all_observations_unlabeled"]``; it
        still counts in RQI, accuracy and the efficiency metrics.

    Examples
    --------
    >>> from seekbench.traces._tables import build_tables
    >>> obs = {"kind": "search_result", "labels": {"clarity": "Clear", "sufficiency": "Sufficient"}}
    >>> tr = [{"trace_id": "a", "agent": "x", "correct": {"value": True, "source": "human"}, "steps": [
    ...     {"index": 0, "kind": "reasoning", "labels": {"grounding": "NotGrounded"}},
    ...     {"index": 1, "kind": "search", "query": "q"}, dict(obs, index=2),
    ...     {"index": 3, "kind": "reasoning", "labels": {"grounding": "Grounded"}},
    ...     {"index": 4, "kind": "answer"}]}]
    >>> g = summarize(*build_tables(tr), n_boot=0).groups[0]
    >>> g["agent"], g["rqi"], g["ce"], g["erf"]["0"], g["erf"]["1"], g["erf"]["8"], g["accuracy"]
    ('x', 0.5, 0.0, 0.0, 1.0, 1.0, 1.0)
    """
    overcautious_window = renamed_keyword("summarize", "horizon", horizon, overcautious_window, default=15)
    by = (by,) if isinstance(by, str) else tuple(by)
    opts = MetricOptions.resolve(
        options,
        evidence_mapping=evidence_mapping,
        evidence_scope=evidence_scope,
        ce_aggregate=ce_aggregate,
        ce_prevalence=ce_prevalence,
        decision_points=decision_points,
        recovery=recovery,
        erf_method=erf_method,
        time=time,
        rqi_aggregate=rqi_aggregate,
    )
    check_bootstrap_options(n_boot, alpha, cluster)
    _check_by(by, traces.columns)
    stats = trace_statistics(steps, traces, options=opts)
    for c in by:  # a free-text column is not in the table; grouping by it still works
        if c not in stats.columns:
            stats[c] = traces[c].to_numpy()
    return summarize_statistics(
        stats,
        by=by,
        options=opts,
        overcautious_window=overcautious_window,
        cluster=cluster,
        n_boot=n_boot,
        seed=seed,
        alpha=alpha,
        bootstrap=bootstrap,
        _stack=3,
    )


def _check_by(by: tuple[str, ...], columns: pd.Index) -> None:
    missing = [c for c in by if c not in columns]
    if not by or missing:
        raise UserInputError(
            f"cannot group by {', '.join(missing) or '()'}: choose trace-table columns, "
            f"e.g. one of: {', '.join(columns)}"
        )


def summarize_statistics(
    stats: pd.DataFrame,
    *,
    by: str | Sequence[str] = ("agent",),
    options: MetricOptions | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    cluster: Cluster = "trace",
    bootstrap: BootstrapMethod = "auto",
    overcautious_window: int = 15,
    horizon: int | None = None,
    executor: Executor | None = None,
    _stack: int = 2,
) -> MetricsSummary:
    """:func:`summarize` from the per-trace statistics table of :func:`~seekbench.metrics.trace_statistics`.

    ``summarize(steps, traces, **kw)`` is ``summarize_statistics(trace_statistics(steps, traces,
    options=opts), options=opts, **kw)``: the same numbers, warnings and JSON. The table may be
    the concatenation of tables reduced chunk by chunk (in any processes); its row order is
    the trace order the bootstrap resamples in. Groups are taken one at a time (the table is
    not copied), and each is computed from its own rows and the seed only, so they may be
    computed side by side on ``executor`` with the same numbers.

    Parameters
    ----------
    stats : DataFrame
        One row per trace, as :func:`~seekbench.metrics.trace_statistics` makes it, made with
        the same E options, ``decision_points``, ``recovery`` and ``time`` as ``options``. The
        ``by`` columns may be categorical (groups and keys as with the same values as objects).
        Without a ``trace_id`` column each row is its own resampling unit (with
        ``cluster="question"``, each row without a ``question_id``): the same numbers.
    by, options, n_boot, seed, alpha, cluster, bootstrap, overcautious_window :
        As in :func:`summarize` (``options`` whole; no single option keywords). With
        ``bootstrap="auto"`` the size that decides is the number of rows of ``stats``.
    executor : concurrent.futures.Executor, optional
        Worker processes computing the groups side by side (a ``ProcessPoolExecutor``; not
        threads, whose warnings Python's global warning filters would mix); default this
        process, one group after the other. The summary is the same, warnings included.

    Returns
    -------
    MetricsSummary
        As :func:`summarize` returns it (with ``"bootstrap": "poisson"`` in the options when used).

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> from seekbench.metrics import trace_statistics
    >>> tr = [{"trace_id": t, "agent": "x", "steps": [{"index": 0, "kind": "reasoning",
    ...        "labels": {"grounding": g}}, {"index": 1, "kind": "answer"}]} for t, g in [("a", "Grounded"),
    ...        ("b", "NotGrounded")]]
    >>> steps, traces = build_tables(tr)
    >>> parts = [trace_statistics(steps, traces.iloc[[i]]) for i in range(2)]  # two chunks
    >>> summarize_statistics(pd.concat(parts), n_boot=0).groups[0]["rqi"]
    0.5
    """
    overcautious_window = renamed_keyword("summarize_statistics", "horizon", horizon, overcautious_window, default=15)
    by = (by,) if isinstance(by, str) else tuple(by)
    opts = MetricOptions.resolve(options)
    check_bootstrap_options(n_boot, alpha, cluster)
    check_option("bootstrap", bootstrap, BOOTSTRAP_METHODS)
    _check_by(by, stats.columns)
    check_table_options(stats, opts)
    method = resolve_method(bootstrap, len(stats))
    if (
        not isinstance(overcautious_window, (int, np.integer))
        or isinstance(overcautious_window, bool)
        or overcautious_window < 0
    ):
        raise UserInputError(
            f"overcautious_window must be a non-negative integer number of turns, got {overcautious_window!r}"
        )
    recorded = {
        "by": list(by),
        **opts.as_dict(),
        "overcautious_window": overcautious_window,
        "cluster": cluster,
        "n_boot": n_boot,
        "seed": seed,
        "alpha": alpha,
    }
    if method != "exact":  # absent: the exact bootstrap (as before the option existed)
        recorded["bootstrap"] = method
    resampler = Resampler(n_boot=n_boot, seed=seed, method=cast(ExactOrPoisson, method))
    reasons: dict[str, list[str]] = {}
    prevalence = None
    if opts.ce_aggregate == "pooled" and opts.ce_prevalence == "global":
        with caught_warnings() as caught:
            prevalence = _global_prevalence(stats)
        route_warnings(caught, reasons, "all")

    codes, keys = group_codes(stats, by)
    key_dicts = [{c: _json_safe(v) for c, v in zip(by, row, strict=True)} for row in keys.itertuples(False, None)]
    # Trace ids (strings, the costliest to copy and to send to a worker) only name the resampling
    # units, which the row positions name as well; questions only matter with cluster="question".
    keep = ("agent", "trace_id", "question_id") if cluster == "question" else ("agent",)
    columns = [c for c in [*keep, *TRACE_STATISTICS_COLUMNS] if c in stats.columns]
    positions = stats.columns.get_indexer(columns)
    calls = (
        functools.partial(
            summarize_group, group_frame(stats, rows, positions), key_dicts[i],
            cluster=cluster, opts=opts, resampler=resampler, alpha=alpha, prevalence=prevalence,
            overcautious_window=overcautious_window,
        )
        for i, rows in enumerate(group_rows(codes, len(keys)))
    )  # fmt: skip
    groups, fitters = [], []
    for key, (group, fitter, caught) in zip(key_dicts, in_order(calls, executor), strict=True):
        route_warnings(caught, reasons, "/".join(str(v) for v in key.values()))
        groups.append(group)
        fitters.append(fitter)
    if not len(stats):
        end = 0
    else:
        end = int(stats["last_turn"].max()) if opts.time == "turn" else int(stats["n_steps"].max()) - 1
    last = max([end] + [int(f.curve_.index.max()) for f in fitters if f is not None])
    for group, fitter in zip(groups, fitters, strict=True):
        group.update(erf_entries(fitter, last))
    messages = [f"{msg} [groups: {', '.join(dict.fromkeys(labels))}]" for msg, labels in reasons.items()]
    for m in messages:  # at the caller's line (``_stack``: summarize calls through here)
        warnings.warn(m, UndefinedMetricWarning, stacklevel=_stack)
    return MetricsSummary(options=recorded, groups=groups, warnings=messages)


def _global_prevalence(stats: pd.DataFrame) -> np.ndarray:
    """P(E = k) over every row, from the column totals (the counts are whole numbers, so their
    float sums are exact in any order: the same as summing the rows' calibration columns)."""
    sources = {"n0": "ce_n0", "n1": "ce_n1", "n2": "ce_n2", "n_obs": "n_obs", "n_obs_unlabeled": "n_obs_unlabeled"}
    totals = pd.DataFrame({c: [stats[src].sum()] for c, src in sources.items()})
    return prevalence_from_columns(totals).to_numpy()
