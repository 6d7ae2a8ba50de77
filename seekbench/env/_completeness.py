"""Completeness metrics of seeking episodes (spec section 7), computed from canonical traces with ``env``.

- final completeness ``c = |retrieved_M| / N`` per (agent, belief), mean with a t confidence interval;
- the curve ``c_t`` over steps with a band (CI of the mean, or +- one standard deviation);
- query diversity of query i: ``1 - max_{q earlier} cos(embed(q_i), embed(q))``, undefined (NaN) for the
  first query of an episode, averaged per step;
- the topic x agent table of mean final completeness;
- the self-estimate error ``|c_t - c_hat_t|`` on the steps that carry a self-estimate.

Computing never imports matplotlib; the plots are in
:mod:`seekbench.report._completeness_plots`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning

EPISODE_COLUMNS = [
    "trace_id",
    "agent",
    "belief",
    "document_id",
    "topic",
    "seed",
    "embedder",
    "theta",
    "max_steps",
    "n_goal_passages",
    "final_completeness",
    "n_queries",
    "empty_query_share",
    "mean_query_diversity",
    "final_self_estimate",
    "self_estimate_error",
]


def env_traces(traces: Iterable[dict]) -> list[dict]:
    """The traces that are seeking-environment episodes (they have ``env``)."""
    return [t for t in traces if isinstance(t.get("env"), dict) and t["env"].get("document_id") is not None]


def completeness_score(trace: dict) -> float:
    """Final completeness of one episode, ``|retrieved_M| / N`` in [0, 1] (higher is better); spec section 7.

    ``env.final_completeness`` when present, else the last step's ``completeness``; NaN with an
    :class:`UndefinedMetricWarning` when neither exists.

    >>> completeness_score({"env": {"final_completeness": 0.25}, "steps": []})
    0.25
    """
    env = trace.get("env") or {}
    if env.get("final_completeness") is not None:
        return float(env["final_completeness"])
    values = [s["completeness"] for s in trace.get("steps", []) if s.get("completeness") is not None]
    if values:
        return float(values[-1])
    warnings.warn(f"trace {trace.get('trace_id')}: no completeness recorded; NaN", UndefinedMetricWarning, stacklevel=2)
    return math.nan


def completeness_curve(trace: dict) -> list[float]:
    """``[c_0, c_1, ..., c_M]`` with c_0 = 0.

    From ``metadata.completeness_curve`` (written by :func:`run_episode`); otherwise each
    search_result's completeness is taken as one step (one query per step).
    """
    meta = trace.get("metadata") or {}
    if isinstance(meta.get("completeness_curve"), list):
        return [float(c) for c in meta["completeness_curve"]]
    return [0.0] + [
        float(s["completeness"])
        for s in trace.get("steps", [])
        if s.get("kind") == "search_result" and s.get("completeness") is not None
    ]


def query_diversity(vectors: np.ndarray) -> np.ndarray:
    """Diversity of each query against all earlier ones: ``1 - max_{j<i} cos(v_i, v_j)``; NaN for i = 0.

    Parameters
    ----------
    vectors : array of shape (n, d)
        Unit-norm query embeddings in the order the queries were sent.

    Returns
    -------
    ndarray of shape (n,)
        In [0, 2]; 0 for an exact repeat, higher is more novel; NaN for the first query.

    >>> query_diversity(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])).tolist()
    [nan, 0.0, 1.0]
    """
    v = np.asarray(vectors, dtype=float)
    out = np.full(len(v), np.nan)
    for i in range(1, len(v)):
        out[i] = 1.0 - float(np.max(v[:i] @ v[i]))
    return out


def _diversity_by_query(trace: dict) -> tuple[list[int], list[float]]:
    meta = trace.get("metadata") or {}
    steps, div = meta.get("query_step"), meta.get("query_diversity")
    if isinstance(steps, list) and isinstance(div, list) and len(steps) == len(div):
        return [int(s) for s in steps], [math.nan if d is None else float(d) for d in div]
    return [], []


def _self_estimate_pairs(trace: dict) -> list[tuple[float, float]]:
    return [
        (float(s["completeness"]), float(s["self_estimate"]))
        for s in trace.get("steps", [])
        if s.get("self_estimate") is not None and s.get("completeness") is not None
    ]


def episode_table(traces: Iterable[dict]) -> pd.DataFrame:
    """One row per episode (traces without ``env`` are skipped); see :data:`EPISODE_COLUMNS`.

    An episode the run could not play (``metadata.unscored_reason``: its LLM agent's requests failed)
    has an undefined ``final_completeness`` (NaN), so no mean counts it as completeness 0.
    """
    rows = []
    for t in env_traces(traces):
        env, meta = t["env"], t.get("metadata") or {}
        results = [s for s in t.get("steps", []) if s.get("kind") == "search_result"]
        _, div = _diversity_by_query(t)
        pairs = _self_estimate_pairs(t)
        finite = [d for d in div if not math.isnan(d)]
        rows.append(
            {
                "trace_id": t["trace_id"],
                "agent": t["agent"],
                "belief": env.get("belief"),
                "document_id": env.get("document_id"),
                "topic": meta.get("topic", "unknown"),
                "seed": env.get("seed"),
                "embedder": env.get("embedder"),
                "theta": env.get("theta"),
                "max_steps": env.get("max_steps"),
                "n_goal_passages": env.get("n_goal_passages"),
                # an episode whose agent's requests failed (metadata.unscored_reason) measured nothing
                "final_completeness": math.nan if meta.get("unscored_reason") else completeness_score(t),
                "n_queries": len(results),
                "empty_query_share": (sum(not s.get("passage_ids") for s in results) / len(results))
                if results
                else math.nan,
                "mean_query_diversity": float(np.mean(finite)) if finite else math.nan,
                "final_self_estimate": pairs[-1][1] if pairs else math.nan,
                "self_estimate_error": float(np.mean([abs(c - e) for c, e in pairs])) if pairs else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=EPISODE_COLUMNS)


def _t_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    from scipy import stats

    n = len(values)
    if n < 2:
        return math.nan, math.nan
    mean, sem = float(np.mean(values)), float(np.std(values, ddof=1) / math.sqrt(n))
    if sem == 0:
        return mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sem
    return max(0.0, mean - half), min(1.0, mean + half)


def completeness_summary(
    traces: Iterable[dict], *, by: Sequence[str] = ("agent", "belief"), confidence: float = 0.95
) -> pd.DataFrame:
    """Mean final completeness per group with a t confidence interval over episodes.

    Parameters
    ----------
    traces : iterable of dict
        Canonical traces; those without ``env`` are ignored.
    by : sequence of str
        Columns of :func:`episode_table` to group by (default agent and belief).
    confidence : float, default 0.95

    Returns
    -------
    DataFrame
        ``*by, n_episodes, n_documents, completeness, std, ci_low, ci_high, self_estimate_error,
        mean_query_diversity, empty_query_share``; completeness in [0, 1], higher is better.
        The CI is NaN for a group of one episode.
    """
    ep = episode_table(traces)
    cols = [
        *by,
        "n_episodes",
        "n_documents",
        "completeness",
        "std",
        "ci_low",
        "ci_high",
        "self_estimate_error",
        "mean_query_diversity",
        "empty_query_share",
    ]
    if ep.empty:
        warnings.warn(
            "no seeking-environment episodes (no trace has env); completeness is undefined",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return pd.DataFrame(columns=cols)
    rows = []
    for key, g in ep.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        vals = g["final_completeness"].dropna().to_numpy(dtype=float)
        lo, hi = _t_interval(vals, confidence)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n_episodes": len(g),
                "n_documents": g["document_id"].nunique(),
                "completeness": float(np.mean(vals)) if len(vals) else math.nan,
                "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else math.nan,
                "ci_low": lo,
                "ci_high": hi,
                "self_estimate_error": float(g["self_estimate_error"].mean()),
                "mean_query_diversity": float(g["mean_query_diversity"].mean()),
                "empty_query_share": float(g["empty_query_share"].mean()),
            }
        )
    return pd.DataFrame(rows, columns=cols)


class CompletenessCurves:
    """The completeness curve ``c_t`` per group, with a band (an estimator: ``fit`` returns self).

    Parameters
    ----------
    by : sequence of str, default ("agent", "belief")
    band : {"ci", "std"}, default "ci"
        ``ci``: t confidence interval of the mean at each step; ``std``: mean +- ``std_multiplier``
        standard deviations (the paper's figure 4 uses 0.3). Bands are clipped to [0, 1].
    confidence : float, default 0.95
    std_multiplier : float, default 1.0

    Attributes
    ----------
    curves_ : DataFrame
        ``*by, step, n, mean, std, lower, upper`` (step 0 is the start, c_0 = 0). An episode
        with fewer steps than another in its group leaves the later steps (``n`` shows it).

    Examples
    --------
    >>> tr = [{"trace_id": "a", "agent": "x", "env": {"document_id": "d", "belief": "oracle"},
    ...        "metadata": {"completeness_curve": [0, 0.5, 1.0]}, "steps": []}]
    >>> CompletenessCurves().fit(tr).curves_["mean"].tolist()
    [0.0, 0.5, 1.0]
    """

    def __init__(
        self,
        *,
        by: Sequence[str] = ("agent", "belief"),
        band: Literal["ci", "std"] = "ci",
        confidence: float = 0.95,
        std_multiplier: float = 1.0,
    ) -> None:
        if band not in ("ci", "std"):
            raise ValueError(f"unknown band {band!r}; use 'ci' or 'std'")
        self.by = tuple(by)
        self.band = band
        self.confidence = confidence
        self.std_multiplier = std_multiplier

    def fit(self, traces: Iterable[dict]) -> CompletenessCurves:
        """Compute the curves from canonical traces (those without ``env`` are ignored)."""
        rows = []
        for t in env_traces(traces):
            key = {
                "agent": t["agent"],
                **{k: v for k, v in t["env"].items()},
                "topic": (t.get("metadata") or {}).get("topic", "unknown"),
            }
            for step, c in enumerate(completeness_curve(t)):
                rows.append({**{b: key.get(b) for b in self.by}, "step": step, "c": c})
        long = pd.DataFrame(rows, columns=[*self.by, "step", "c"])
        out = []
        for key, g in long.groupby([*self.by, "step"], sort=True, dropna=False):
            vals = g["c"].to_numpy(dtype=float)
            mean = float(vals.mean())
            std = float(vals.std(ddof=1)) if len(vals) > 1 else math.nan
            if self.band == "ci":
                lo, hi = _t_interval(vals, self.confidence)
            else:
                half = self.std_multiplier * std
                lo, hi = max(0.0, mean - half), min(1.0, mean + half)
            out.append(
                {
                    **dict(zip([*self.by, "step"], key, strict=True)),
                    "n": len(vals),
                    "mean": mean,
                    "std": std,
                    "lower": lo,
                    "upper": hi,
                }
            )
        self.curves_ = pd.DataFrame(out, columns=[*self.by, "step", "n", "mean", "std", "lower", "upper"])
        return self

    @property
    def summary(self) -> pd.DataFrame:
        """The curves table (``curves_``)."""
        return self.curves_


def query_diversity_table(traces: Iterable[dict], *, by: Sequence[str] = ("agent", "belief")) -> pd.DataFrame:
    """Mean query diversity per group and step (the first query of each episode, undefined, is left out).

    Returns
    -------
    DataFrame
        ``*by, step, n_queries, diversity``; diversity is NaN where no query of the step has one.
    """
    rows = []
    for t in env_traces(traces):
        key = {"agent": t["agent"], **t["env"], "topic": (t.get("metadata") or {}).get("topic", "unknown")}
        for step, d in zip(*_diversity_by_query(t), strict=True):
            rows.append({**{b: key.get(b) for b in by}, "step": step, "d": d})
    long = pd.DataFrame(rows, columns=[*by, "step", "d"])
    out = long.groupby([*by, "step"], sort=True, dropna=False)["d"].agg(n_queries="count", diversity="mean")
    return out.reset_index()


def topic_agent_table(traces: Iterable[dict], *, belief: str | None = "deduplicated") -> pd.DataFrame:
    """Mean final completeness per topic (rows) and agent (columns), for one belief (None: all).

    The paper's figure 3 uses the deduplicated belief; when no episode has ``belief``,
    all episodes are used.
    """
    ep = episode_table(traces)
    if belief is not None and (ep["belief"] == belief).any():
        ep = ep[ep["belief"] == belief]
    if ep.empty:
        return pd.DataFrame()
    table = ep.pivot_table(index="topic", columns="agent", values="final_completeness", aggfunc="mean")
    table.columns.name = "agent"
    return table.sort_index()
