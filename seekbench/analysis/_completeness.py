"""Completeness of seeking-environment episodes beside the process metrics of the same agents (spec section 7)."""

from __future__ import annotations

import warnings
from typing import Literal

import pandas as pd

from .._errors import UndefinedMetricWarning
from ..env import (
    CompletenessCurves,
    completeness_summary,
    env_traces,
    episode_table,
    query_diversity_table,
    topic_agent_table,
)
from ._result import CompletenessAnalysis
from ._statistics import analysis_statistics, summary_of


def _by_agent(per_agent: pd.DataFrame, process, conformal: pd.DataFrame | None) -> tuple[pd.DataFrame, tuple]:
    """Per agent: completeness with its CI, self-estimate error, conformal columns, RQI, ERF(8) and CE with CIs."""
    groups = {g.get("agent"): g for g in (process.groups if process is not None else [])}
    extra = (
        tuple(c for c in conformal.columns if c != "agent")
        if conformal is not None and "agent" in conformal.columns
        else ()
    )
    rows = []
    for _, r in per_agent.iterrows():
        g = groups.get(r["agent"], {})
        row = {
            "agent": r["agent"],
            "episodes": int(r["n_episodes"]),
            "completeness": r["completeness"],
            "ci_low": r.get("ci_low"),
            "ci_high": r.get("ci_high"),
            "self_estimate_error": r["self_estimate_error"],
        }
        if extra and conformal is not None:
            c = conformal[conformal["agent"] == r["agent"]]
            for col in extra:
                row[col] = c[col].iloc[0] if len(c) else None
        for key in ("rqi", "recovered_by_8", "ce"):
            row[key] = g.get(key)
            lo, hi = (list(g.get(f"{key}_ci") or []) + [None, None])[:2]
            row[f"{key}_ci_lo"], row[f"{key}_ci_hi"] = lo, hi
        rows.append(row)
    return pd.DataFrame(rows), extra


def analyze_completeness(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    trace_dicts: list[dict],
    *,
    process=None,
    conformal: pd.DataFrame | None = None,
    band: Literal["ci", "std"] = "ci",
    topic_belief: str = "deduplicated",
    metric_options: dict | None = None,
    statistics: pd.DataFrame | None = None,
) -> CompletenessAnalysis | None:
    """Completeness of the episodes among ``trace_dicts``; None when no trace has ``env``.

    Parameters
    ----------
    steps, traces : DataFrame
        The step and trace tables (labels attached), for RQI, ERF and CE.
    trace_dicts : list of dict
        The canonical traces (the ``env`` fields live there).
    process : MetricsSummary, optional
        Per-agent process metrics already computed (``by=("agent",)``); computed here otherwise,
        on the episodes' traces, without bootstrap.
    conformal : DataFrame, optional
        One row per agent (column ``agent``) with conformal columns (e.g. ``coverage``, ``q_hat``).
    band : {"ci", "std"}
        Band of the completeness curves.
    topic_belief : str
        Belief of the topic x agent table (the paper uses deduplicated).
    metric_options : dict, optional
        Options of :func:`seekbench.metrics.summarize` when ``process`` is not given.
    statistics : DataFrame, optional
        The per-trace statistics table of ``traces`` (rows in its order) the episodes' process
        metrics are aggregated from when ``process`` is not given; default reduced here.
    """
    episodes = env_traces(trace_dicts)
    if not episodes:
        return None
    ep = episode_table(episodes)
    summary = completeness_summary(episodes, by=("agent", "belief"))
    per_agent = completeness_summary(episodes, by=("agent",))
    curves = CompletenessCurves(band=band).fit(episodes).curves_
    diversity = query_diversity_table(episodes)
    topics = topic_agent_table(episodes, belief=topic_belief)
    if process is None:
        opts = {"n_boot": 0, **(metric_options or {})}
        opts.pop("by", None)
        episode = traces["trace_id"].isin(set(ep["trace_id"])).to_numpy()
        t = traces[episode]
        stats = analysis_statistics(steps, t, None if statistics is None else statistics[episode], opts)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            process = summary_of(stats, t, by=("agent",), **opts)
    by_agent, extra = _by_agent(per_agent, process, conformal)
    settings = tuple(dict.fromkeys(zip(ep["embedder"], ep["theta"], strict=True)))
    return CompletenessAnalysis(
        episodes=ep,
        summary=summary,
        per_agent=per_agent,
        by_agent=by_agent,
        conformal_columns=extra,
        curves=curves,
        diversity=diversity,
        topics=topics,
        band=band,
        topic_belief=topic_belief,
        settings=settings,
        n_documents=int(ep["document_id"].nunique()),
        n_topics=int(ep["topic"].nunique()),
        max_steps=ep["max_steps"].max(),
    )
