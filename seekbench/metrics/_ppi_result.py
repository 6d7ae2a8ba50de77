"""Judge-corrected metrics: per agent and metric, judge only, human only and the PPI++ correction.

:func:`corrected_metrics` takes the per-trace values (:func:`~seekbench.metrics.ppi_trace_values`)
of every trace from a judge's labels and of the human-labeled traces from human labels, and
gives a :class:`CorrectedMetrics` whose ``summary`` has, per agent and metric, the three
estimates side by side; ``differences`` has each agent's corrected difference from a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, cast

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._group_summary import RECOVERED_BY
from ._intervals import wilson_interval
from ._normal_quantile import normal_quantile
from ._options import check_option
from ._ppi import Interval as PPIInterval
from ._ppi import PPIEstimate, ppi_bootstrap_interval, ppi_difference, ppi_mean
from ._ppi_trace_stats import PPI_METRICS, RATE_METRICS
from ._resampler import Resampler, check_alpha

NAN = float("nan")
_RECOVERED = f"recovered_by_{RECOVERED_BY}"

#: The corrected interval of :func:`corrected_metrics`: ``"auto"`` (fixed by the metric, not the data: the
#: Wilson score interval at the degrees-of-freedom-adjusted effective sample size for rates, Student t for
#: RQI and CE), ``"t"`` or
#: ``"clt"`` for every metric (:func:`~seekbench.metrics.ppi_mean`).
Interval = Literal["auto", "t", "clt"]

SUMMARY_COLUMNS = [
    "agent",
    "metric",
    "judge_only",
    "judge_only_ci_low",
    "judge_only_ci_high",
    "judge_only_n",
    "human_only",
    "human_only_ci_low",
    "human_only_ci_high",
    "human_only_n",
    "corrected",
    "corrected_ci_low",
    "corrected_ci_high",
    "corrected_boot_ci_low",
    "corrected_boot_ci_high",
    "lam",
    "n_total",
    "n_labeled",
    "reason",
]


@dataclass(frozen=True)
class CorrectedMetrics:
    """Judge-corrected (PPI++) metrics per agent; see :func:`corrected_metrics`.

    Attributes
    ----------
    summary : DataFrame
        One row per agent and metric, columns :data:`SUMMARY_COLUMNS`: ``judge_only`` (mean of the
        judge's values over the n_total traces where defined, ``judge_only_n`` of them),
        ``human_only`` (mean of the human values over the ``human_only_n`` labeled traces),
        ``corrected`` (PPI++, interval of :func:`corrected_metrics`, ``lam``) with a bootstrap
        interval as a check; NaN with a ``reason`` where undefined. Intervals: Wilson for 0/1
        metrics, percentile bootstrap over traces for RQI and CE (judge and human only); for the
        corrected, Wilson at the (df-adjusted) effective sample size for rates and Student t for RQI and CE
        (``interval="auto"``), clipped to [0, 1] (every metric here is a share).
    differences : DataFrame
        ``metric, agent, baseline, difference, ci_low, ci_high, paired, shared_questions, note``:
        each agent's corrected value minus the baseline's, with the CLT interval of two
        independent PPI estimates (unpaired; ``note`` says so).
    alpha : float
        Intervals have level 1 - alpha.
    options : dict
        ``n_boot``, ``seed`` of the bootstrap check.
    """

    summary: pd.DataFrame
    differences: pd.DataFrame
    alpha: float = 0.05
    options: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready: ``{"summary": [...], "differences": [...], "alpha", "options"}`` (NaN as None)."""

        def rows(frame: pd.DataFrame) -> list[dict]:
            return [
                {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                for r in frame.to_dict("records")
            ]

        return {
            "summary": rows(self.summary),
            "differences": rows(self.differences),
            "alpha": self.alpha,
            "options": self.options,
        }


def _binary(v: np.ndarray) -> bool:
    return bool(np.isin(v, (0.0, 1.0)).all())


def _mean_ci(v: np.ndarray, resampler: Resampler, alpha: float) -> tuple[float, float, float]:
    """Mean and interval of one sample: Wilson for 0/1 values, else the percentile bootstrap."""
    if not len(v):
        return NAN, NAN, NAN
    if _binary(v):
        lo, hi = wilson_interval(float(v.sum()), len(v), alpha=alpha)
    else:
        lo, hi = resampler.interval(np.column_stack([v, np.ones(len(v))]), lambda s: s[:, 0] / s[:, 1], alpha=alpha)
    return float(v.mean()), lo, hi


def _is_rate(metric: str, judge: pd.DataFrame, human: pd.DataFrame) -> bool:
    """Whether ``metric`` is a rate: one of :data:`RATE_METRICS`, or another column whose values are all 0/1.

    Decided once per metric over whole tables, so that the interval is fixed in advance, not by an agent's draw.
    """
    if metric in PPI_METRICS:
        return metric in RATE_METRICS
    values = np.concatenate([judge[metric].to_numpy(dtype=float), human[metric].to_numpy(dtype=float)])
    return _binary(values[~np.isnan(values)])


def _one(
    judge: pd.DataFrame, human: pd.DataFrame, metric: str, resampler: Resampler, alpha: float, interval: PPIInterval
) -> tuple[dict, PPIEstimate | None]:
    """The summary row of one agent and metric (``judge``: all its traces; ``human``: its labeled ones)."""
    cut = int(judge["cut_off"].sum()) if metric == _RECOVERED else 0
    j = judge[metric].to_numpy(dtype=float)
    h_all = human[metric].to_numpy(dtype=float)
    if cut:  # not a mean over traces at all: none of the three is shown
        j, h_all = np.full(len(j), np.nan), np.full(len(h_all), np.nan)
    jd = ~np.isnan(j)
    row: dict = {"metric": metric, "n_total": len(judge), "n_labeled": len(human)}
    jv, jlo, jhi = _mean_ci(j[jd], resampler, alpha)
    row.update(judge_only=jv, judge_only_ci_low=jlo, judge_only_ci_high=jhi, judge_only_n=int(jd.sum()))
    hd = ~np.isnan(h_all)
    hv, hlo, hhi = _mean_ci(h_all[hd], resampler, alpha)
    row.update(human_only=hv, human_only_ci_low=hlo, human_only_ci_high=hhi, human_only_n=int(hd.sum()))
    reasons = []
    if cut:
        reasons.append(
            f"{cut} trace(s) cut off: recovery by turn {RECOVERED_BY} is the Aalen-Johansen curve, not a mean "
            "over traces"
        )
    at = pd.Index(judge["trace_id"]).get_indexer(human["trace_id"])
    labeled = np.zeros(len(judge), dtype=bool)
    labeled[at] = True
    yhat_l = j[at]
    both = hd & ~np.isnan(yhat_l)
    one_only = int((hd != ~np.isnan(yhat_l)).sum())
    if one_only and not cut:
        reasons.append(f"{one_only} labeled trace(s) defined under one label set only, left out")
    y, f, fu = h_all[both], yhat_l[both], j[~labeled & jd]
    est = None if cut else ppi_mean(y, f, fu, alpha=alpha, interval=interval)
    if est is not None and not np.isnan(est.value) and _binary(y) and (est.lam == 0 or np.ptp(y - est.lam * f) == 0):
        # A normal interval of a 0/1 sample without spread collapses to a point (0 of 8 is not
        # certainty): the Wilson interval of the human values instead, with the estimate it centres.
        # The same for the Wilson intervals: an error variance of 0 seen on a few labeled traces
        # would give a huge n_eff, and at lambda = 0 the human values' own interval is the one to show.
        wilson = _with_human_wilson(est, y, alpha)
        lo, hi = wilson.ci
        est = wilson if est.lam != 0 and lo <= est.value <= hi else replace(wilson, value=float(y.mean()), lam=0.0)
        if not len(fu):
            reasons.append("every trace is human-labeled: the human-only value")
        elif est.lam == 0:
            reasons.append("lambda 0 (the judge does not help here): the human-only value, Wilson interval")
        else:
            reasons.append("no spread in the labeled errors: the human values' Wilson interval")
    if est is not None and not np.isnan(est.value) and est.lam > 0:
        base = _human_only_estimate(y, f, fu, alpha, interval)
        if _width(base.ci) < _width(est.ci):
            # PPI++ chooses lambda to minimise the estimated variance; the interval also pays for
            # estimating it (the t quantile, Korn and Graubard's factor), so a judge that narrows the
            # variance a little can still widen the interval. lambda = 0 is then the better choice
            # by the same criterion, taken on the interval the user sees (docs/metrics/ppi.md).
            est = base
            reasons.append("lambda 0 (the judge does not narrow the interval here): the human-only value")
    if est is not None and est.reason:
        reasons.append(est.reason)
    if est is None or np.isnan(est.value):
        est = None
        row.update(corrected=NAN, corrected_ci_low=NAN, corrected_ci_high=NAN, lam=NAN)
        row.update(corrected_boot_ci_low=NAN, corrected_boot_ci_high=NAN)
    else:
        blo, bhi = ppi_bootstrap_interval(y, f, fu, resampler=resampler, alpha=alpha)
        # every metric here is a share in [0, 1]: an interval bound beyond it says nothing more
        lo, hi = max(est.ci[0], 0.0), min(est.ci[1], 1.0)
        row.update(corrected=est.value, corrected_ci_low=lo, corrected_ci_high=hi, lam=est.lam)
        row.update(corrected_boot_ci_low=blo, corrected_boot_ci_high=bhi)
    row["reason"] = "; ".join(reasons)
    return row, est


def _width(ci: tuple[float, float]) -> float:
    """The width of an interval before it is clipped to [0, 1] for display (the clip hides how sure it is)."""
    return ci[1] - ci[0]


def _human_only_estimate(
    y: np.ndarray, f: np.ndarray, fu: np.ndarray, alpha: float, interval: PPIInterval
) -> PPIEstimate:
    """The lambda = 0 estimate of the same construction: the human values' Wilson interval for a
    rate, else :func:`ppi_mean` with ``lam=0`` (the classical interval of the human values)."""
    est = ppi_mean(y, f, fu, alpha=alpha, lam=0.0, interval=interval)
    return _with_human_wilson(est, y, alpha) if interval.startswith("wilson") else est


def _with_human_wilson(est: PPIEstimate, y: np.ndarray, alpha: float) -> PPIEstimate:
    """``est`` with the human values' Wilson interval, and the standard error that interval implies."""
    lo, hi = wilson_interval(float(y.sum()), len(y), alpha=alpha)
    return replace(est, ci=(lo, hi), se=(hi - lo) / 2.0 / normal_quantile(1.0 - alpha / 2.0), reason="")


def corrected_metrics(
    judge: pd.DataFrame,
    human: pd.DataFrame,
    *,
    metrics: list[str] | None = None,
    by: str = "agent",
    baseline: str | None = None,
    alpha: float = 0.05,
    interval: Interval = "auto",
    n_boot: int = 2000,
    seed: int = 0,
) -> CorrectedMetrics:
    """PPI++ judge-corrected means of per-trace metrics, per agent, with judge-only and human-only beside.

    For an agent with N_a traces, n of them human-labeled: with Y_i the human value and f_i the
    judge's value of a metric on labeled trace i, and f~_j the judge's value on the others,
    the corrected value is :func:`~seekbench.metrics.ppi_mean` (theta = lambda mean f~ +
    mean (Y - lambda f), lambda by power tuning in [0, 1]; the interval: ``interval``). A trace enters where
    the metric is defined (for a labeled trace: under both label sets; those defined under one
    only are left out and counted in ``reason``).

    Parameters
    ----------
    judge : DataFrame
        :func:`~seekbench.metrics.ppi_trace_values` of every trace, from the judge's labels.
    human : DataFrame
        The same of the human-labeled traces (a subset of ``judge``'s trace ids), from human labels.
    metrics : list of str, optional
        Columns to correct (default: every :data:`PPI_METRICS` column present in both).
    by : str, default "agent"
        The grouping column.
    baseline : str, optional
        The group the ``differences`` compare every other with (default: the first).
    alpha : float, default 0.05
    interval : {"auto", "t", "clt"}, default "auto"
        The corrected interval (:func:`~seekbench.metrics.ppi_mean`). ``"auto"``, fixed by the
        metric: for a rate (:data:`RATE_METRICS`, or a column of 0/1 values) the Wilson score
        interval at the estimate's effective sample size n_eff = theta (1 - theta) / se0^2, shrunk
        by Korn and Graubard's factor (z / t_(n-1))^2 (``ppi_mean(..., interval="wilson-df")``;
        narrower than the human-only Wilson interval when PPI++'s variance is well below the
        classical one); for RQI and CE Student's t (``"t"``), for the small per-agent samples.
        ``"t"`` and ``"clt"`` (ppi-python's normal interval, which undercovers at 8 labeled traces
        per agent: docs/metrics/ppi.md) apply to every metric. Any way, for a 0/1 metric whose
        labeled errors have no spread (or lambda = 0) the interval is the human values' Wilson
        interval, and wherever the interval at PPI++'s lambda is wider than the lambda = 0 one of
        the same construction (the human values' Wilson interval for the rates' Wilson interval,
        their classical t or normal interval for ``"t"`` and ``"clt"``; compared before clipping to
        [0, 1]) lambda is 0 and the row shows the human-only value with that interval: the judge is
        used only where it narrows it.
    n_boot, seed : int
        The bootstrap of the check interval and of the RQI and CE intervals.

    Returns
    -------
    CorrectedMetrics

    Examples
    --------
    >>> j = pd.DataFrame({"trace_id": list("abcdef"), "agent": "x", "question_id": list("abcdef"),
    ...                   "rqi": [1.0, 0.5, 1.0, 1.0, 0.5, 1.0], "cut_off": 0.0})
    >>> h = pd.DataFrame({"trace_id": list("abc"), "agent": "x", "question_id": list("abc"),
    ...                   "rqi": [0.5, 0.5, 1.0], "cut_off": 0.0})
    >>> row = corrected_metrics(j, h, n_boot=0).summary.iloc[0]
    >>> round(float(row["judge_only"]), 4), round(float(row["human_only"]), 4), int(row["n_labeled"])
    (0.8333, 0.6667, 3)
    """
    check_alpha(alpha)
    check_option("interval", interval, ("auto", "t", "clt"))
    for name, frame in (("judge", judge), ("human", human)):
        for c in ("trace_id", by):
            if c not in frame.columns:
                raise UserInputError(f"corrected_metrics: the {name} values lack the column {c!r}")
    if not pd.Index(judge["trace_id"]).is_unique or not pd.Index(human["trace_id"]).is_unique:
        raise UserInputError("corrected_metrics: trace ids must be unique in each table")
    missing = ~human["trace_id"].isin(judge["trace_id"])
    if missing.any():
        raise UserInputError(
            f"corrected_metrics: {int(missing.sum())} human-labeled trace(s) are not among the judged traces, "
            f"e.g. {human.loc[missing, 'trace_id'].iloc[0]!r}"
        )
    if metrics is None:
        metrics = [m for m in PPI_METRICS if m in judge.columns and m in human.columns]
    resampler = Resampler(n_boot=n_boot, seed=seed)
    kinds: dict[str, PPIInterval]
    if interval == "auto":
        kinds = {m: "wilson-df" if _is_rate(m, judge, human) else "t" for m in metrics}
    else:
        kinds = {m: cast(PPIInterval, interval) for m in metrics}
    rows, estimates = [], {}
    groups = list(pd.unique(judge[by]))
    for g in groups:
        jg = judge[judge[by] == g]
        hg = human[human["trace_id"].isin(jg["trace_id"])]
        for m in metrics:
            row, est = _one(jg, hg, m, resampler, alpha, kinds[m])
            rows.append({"agent": g, **row})
            estimates[(g, m)] = est
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    base = groups[0] if baseline is None and groups else baseline
    if base is not None and base not in groups:
        raise UserInputError(f"baseline {base!r} is not a {by}; the {by}s are {', '.join(map(str, groups))}")
    diffs = _differences(judge, by, groups, base, metrics, estimates, alpha)
    return CorrectedMetrics(summary, diffs, alpha, {"n_boot": n_boot, "seed": seed, "interval": interval})


def _differences(judge, by, groups, base, metrics, estimates, alpha) -> pd.DataFrame:
    rows = []
    questions = judge.dropna(subset=["question_id"]).groupby(by, sort=False)["question_id"].agg(set)
    for m in metrics:
        for g in groups:
            if g == base:
                continue
            a, b = estimates.get((g, m)), estimates.get((base, m))
            shared = len(questions.get(g, set()) & questions.get(base, set()))
            note = "unpaired: the two agents' traces are treated as independent samples"
            if shared:
                note += f" although {shared} question(s) are shared (errs wide)"
            if a is None or b is None:
                d, ci = NAN, (NAN, NAN)
                note = "undefined: the corrected value of one agent is undefined"
            else:
                d, ci, _ = ppi_difference(a, b, alpha=alpha)
            rows.append(
                {
                    "metric": m,
                    "agent": g,
                    "baseline": base,
                    "difference": d,
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "paired": False,
                    "shared_questions": shared,
                    "note": note,
                }
            )
    cols = ["metric", "agent", "baseline", "difference", "ci_low", "ci_high", "paired", "shared_questions", "note"]
    return pd.DataFrame(rows, columns=cols)
