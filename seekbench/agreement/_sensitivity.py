"""How far judge labels move the metrics: RQI, CE and ERF at turn 8 per agent, human vs judge.

Each metric is computed per agent twice on the same traces, once with the reference
(human) labels and once with a judge's, by :func:`seekbench.metrics.summarize`. The
difference judge - reference gets a paired percentile bootstrap CI: whole traces of the
agent are resampled and both label sources are evaluated on the same resample. Every
statistic is a function of per-trace sums, so one resample-count matrix serves all; the
columns and statistics are the metrics' own (:func:`seekbench.metrics.rqi_columns`,
:func:`~seekbench.metrics.ce_columns`, :func:`~seekbench.metrics.erf_columns`), never a
second implementation here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning
from .._renamed import renamed_keyword
from ..labels import AnnotationSet
from ..metrics import (
    RECOVERED_BY,
    MetricOptions,
    Resampler,
    ce_columns,
    check_bootstrap_options,
    erf_columns,
    evidence_prevalence,
    percentile_interval,
    rqi_columns,
    summarize,
)
from ..traces import attach_labels, build_tables
from ._align import rater_sets

#: The metrics compared, their summarize key, and whether higher is better.
METRICS = {"rqi": ("rqi", True), "ce": ("ce", False), f"erf@{RECOVERED_BY}": (f"recovered_by_{RECOVERED_BY}", True)}
#: summarize also reports outcome metrics; only warnings about the three compared here are passed on.
_OWN_WARNINGS = ("RQI", "CE", "ERF")


@dataclass
class SensitivityResult:
    """What :func:`metric_sensitivity` computes.

    Attributes
    ----------
    table : DataFrame
        One row per (rater, agent, metric): ``reference`` and ``judged`` values, ``difference``
        = judged - reference with its paired bootstrap CI ``lower, upper``, ``n_traces``.
    rankings : DataFrame
        One row per (rater, metric): Kendall's tau between the agents' reference and judged
        values, its p-value, ``n_agents``, ``same_ranking`` (identical order, ties included; None when
        fewer than two agents have values) and ``note`` (why a value is missing, else empty).
    summaries : dict
        The :class:`~seekbench.metrics._summary.MetricsSummary` of each label source.
    """

    reference: str
    raters: list[str]
    table: pd.DataFrame
    rankings: pd.DataFrame
    summaries: dict
    options: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def summary(self) -> pd.DataFrame:
        """The per-agent table (``table``)."""
        return self.table


def _resampled(cols: list[np.ndarray], stats: list, resampler: Resampler):
    """Each metric's full-sample value and its B resampled values (``resampler``: the agent's, whose
    seed depends on the agent only, so every label source gets the same draws)."""
    widths = [c.shape[1] for c in cols]
    full = np.concatenate(cols, axis=1)
    sums = resampler.resampled_sums(full) if resampler.n_boot and len(full) else None
    point, boot, start = [], [], 0
    for w, fn in zip(widths, stats, strict=True):
        point.append(float(fn(full[:, start : start + w].sum(axis=0, keepdims=True))[0]))
        boot.append(None if sums is None else fn(sums[:, start : start + w]))
        start += w
    return point, boot


def metric_sensitivity(
    traces: list[dict],
    reference: AnnotationSet,
    *raters: AnnotationSet,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    resampler: Resampler | None = None,
    options: MetricOptions | None = None,
    overcautious_window: int = 15,
    horizon: int | None = None,
    **metric_options: str,
) -> SensitivityResult:
    """RQI, CE and ERF at turn 8 per agent from the reference labels and from each judge's.

    For each rater J and agent a: M_a(J) - M_a(reference) for M in RQI (spec section 3), CE
    (section 5) and ERF(8) (section 4), with a 95% paired percentile bootstrap CI over the
    agent's whole traces (both label sources on the same resample), and per rater and
    metric Kendall's tau between the agents' reference and judged values (scipy's tau-b):
    1 means the judge ranks the agents exactly as the reference does.

    Parameters
    ----------
    traces : list of dict
        Canonical traces (``read_traces(path).traces``); their inline labels are ignored.
    reference : AnnotationSet
        The reference (human) labels, one rater.
    *raters : AnnotationSet
        Judged labels; a set with several raters counts as one rater each.
    n_boot, seed, alpha : bootstrap resamples (0 skips CIs), seed, 1 - level.
    resampler : Resampler, optional
        The resampling in place of ``n_boot`` and ``seed`` (without clusters: each agent's traces
        are resampled, with the seed ``[seed, k]`` for the k-th agent in sorted order).
    options : MetricOptions, optional
        The metric options (default: ``MetricOptions()``).
    overcautious_window : int
        H of the overcautious rate in the stored :func:`~seekbench.metrics.summarize`
        results (no compared metric depends on it).
    horizon : int, optional
        Deprecated spelling of ``overcautious_window`` (a ``FutureWarning``; removed in the next release).
    **metric_options
        Single options of :class:`~seekbench.metrics.MetricOptions` (``evidence_mapping``,
        ``evidence_scope``, ``ce_aggregate``, ``ce_prevalence``, ``decision_points``,
        ``recovery``, ``erf_method``, ``time``, ``rqi_aggregate``); each overrides ``options``.

    Returns
    -------
    SensitivityResult
        ``difference`` > 0 means the judge's labels give the larger value (for CE, lower is
        better). Values are NaN, with an ``UndefinedMetricWarning``, where a label source
        lacks the labels a metric needs.

    Examples
    --------
    >>> def trace(tid, g):
    ...     return {"trace_id": tid, "agent": "x", "steps": [
    ...         {"index": 0, "kind": "search", "query": "q"},
    ...         {"index": 1, "kind": "search_result", "labels": {"clarity": "Clear", "sufficiency": "Sufficient"}},
    ...         {"index": 2, "kind": "reasoning", "labels": {"grounding": g}}, {"index": 3, "kind": "answer"}]}
    >>> traces = [trace("a", "Grounded"), trace("b", "NotGrounded")]
    >>> human = AnnotationSet.from_traces(traces)
    >>> judge = human.records.assign(rater="judge", value=human.records["value"].replace("NotGrounded", "Grounded"))
    >>> import warnings
    >>> with warnings.catch_warnings():  # one agent: Kendall's tau is undefined
    ...     warnings.simplefilter("ignore", UndefinedMetricWarning)
    ...     res = metric_sensitivity(traces, human, AnnotationSet(judge), n_boot=0)
    >>> res.table[["metric", "reference", "judged", "difference"]].to_dict("records")[0]
    {'metric': 'rqi', 'reference': 0.5, 'judged': 1.0, 'difference': 0.5}
    """
    overcautious_window = renamed_keyword("metric_sensitivity", "horizon", horizon, overcautious_window, default=15)
    opts = MetricOptions.resolve(options, **metric_options)
    check_bootstrap_options(n_boot, alpha)
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="metric_sensitivity")
    sources = rater_sets(reference, raters)
    empty = pd.DataFrame(columns=["trace_id", "step", "field", "value"])
    steps0, tdf = build_tables(traces, empty)
    agents = sorted(tdf["agent"].astype(str).unique())
    values: dict[str, dict] = {}
    boots: dict[str, dict] = {}
    summaries = {}
    messages: list[str] = []
    for name, aset in sources.items():
        steps = attach_labels(steps0, aset.records)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            summaries[name] = summarize(
                steps, tdf, by=("agent",), options=opts, overcautious_window=overcautious_window, n_boot=0
            )
            weights = None
            if opts.ce_aggregate == "pooled" and opts.ce_prevalence == "global":
                weights = evidence_prevalence(
                    steps, tdf, decision_points=opts.decision_points, **opts.evidence
                ).to_numpy()
            values[name], boots[name] = _per_agent(steps, tdf, agents, opts=opts, weights=weights, resampler=resampler)
        messages += [
            f"{name}: {w.message}"
            for w in caught
            if issubclass(w.category, UndefinedMetricWarning) and str(w.message).startswith(_OWN_WARNINGS)
        ]
    ref_name = next(iter(sources))
    for name, summary in summaries.items():  # the published numbers are summarize's
        for g in summary.groups:
            values[name][str(g["agent"])] = {m: float(g[key]) for m, (key, _) in METRICS.items()}
    rows = []
    for name in list(sources)[1:]:
        for agent in agents:
            for metric in METRICS:
                ref_v, jud_v = values[ref_name][agent][metric], values[name][agent][metric]
                rb, jb = boots[ref_name][agent][metric], boots[name][agent][metric]
                lo, hi = (np.nan, np.nan) if rb is None else percentile_interval(jb - rb, alpha=alpha)
                rows.append(
                    {
                        "rater": name,
                        "agent": agent,
                        "metric": metric,
                        "reference": ref_v,
                        "judged": jud_v,
                        "difference": jud_v - ref_v,
                        "lower": lo,
                        "upper": hi,
                        "n_traces": int((tdf["agent"].astype(str) == agent).sum()),
                    }
                )
    table = pd.DataFrame(
        rows, columns=["rater", "agent", "metric", "reference", "judged", "difference", "lower", "upper", "n_traces"]
    )
    rankings, undefined = _rankings(table)
    if undefined:
        messages.append(
            "Kendall's tau is undefined (fewer than two agents with values) for "
            + ", ".join(f"{r}/{m}" for r, m in undefined)
            + "; returning NaN"
        )
    for msg in dict.fromkeys(messages):
        warnings.warn(msg, UndefinedMetricWarning, stacklevel=2)
    return SensitivityResult(
        reference=ref_name,
        raters=list(sources)[1:],
        table=table,
        rankings=rankings,
        summaries=summaries,
        options={**opts.as_dict(), **resampler.as_options(), "alpha": alpha, "erf_horizon": RECOVERED_BY},
        warnings=list(dict.fromkeys(messages)),
    )


def _per_agent(steps, tdf, agents, *, opts: MetricOptions, weights, resampler: Resampler):
    """Per agent: each metric's value and its resampled values, the agent's traces resampled."""
    values, boots = {}, {}
    agent_of = dict(zip(tdf["trace_id"], tdf["agent"].astype(str), strict=True))
    step_parts = dict(tuple(steps.groupby(steps["trace_id"].map(agent_of), sort=False)))
    for k, agent in enumerate(agents):
        tr = tdf[tdf["agent"].astype(str) == agent]
        st = step_parts.get(agent, steps.iloc[:0])
        ids = pd.Index(tr["trace_id"])
        parts = [
            rqi_columns(st, ids, options=opts),
            ce_columns(st, tr, options=opts, global_prevalence=weights),
            erf_columns(st, tr, RECOVERED_BY, options=opts),
        ]
        per_agent = Resampler(
            n_boot=resampler.n_boot,
            seed=None if resampler.seed is None else [int(resampler.seed), k],
            method=resampler.method,
            clusters=list(ids),
        )
        point, boot = _resampled([p[0] for p in parts], [p[1] for p in parts], per_agent)
        values[agent] = dict(zip(METRICS, point, strict=True))
        boots[agent] = dict(zip(METRICS, boot, strict=True))
    return values, boots


def _rankings(table: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    from scipy.stats import kendalltau

    rows, undefined = [], []
    for (rater, metric), g in table.groupby(["rater", "metric"], sort=False):
        ok = g[np.isfinite(g["reference"]) & np.isfinite(g["judged"])]
        tau = p = np.nan
        same = None
        if len(ok) >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = kendalltau(ok["reference"], ok["judged"])
            tau, p = float(res.statistic), float(res.pvalue)
            same = bool(
                (ok["reference"].rank(method="min").to_numpy() == ok["judged"].rank(method="min").to_numpy()).all()
            )
        else:
            undefined.append((rater, metric))
        note = (
            ""
            if same is not None
            else (f"n/a: {len(ok)} agent(s) with a value under both label sets; a ranking needs two")
        )
        rows.append(
            {
                "rater": rater,
                "metric": metric,
                "kendall_tau": tau,
                "p_value": p,
                "n_agents": len(ok),
                "same_ranking": same,
                "note": note,
            }
        )
    frame = pd.DataFrame(
        rows, columns=["rater", "metric", "kendall_tau", "p_value", "n_agents", "same_ranking", "note"]
    )
    return frame, undefined
