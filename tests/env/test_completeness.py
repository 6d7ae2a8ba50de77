"""Completeness metrics (spec section 7) on hand-made episodes, the plots, and the report section."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from seekbench._errors import UndefinedMetricWarning
from seekbench.env import (CompletenessCurves, completeness_score, completeness_summary, episode_table, query_diversity,
                           query_diversity_table, topic_agent_table)


def episode(tid, agent, belief, curve, *, topic="t1", doc="d1", div=(None, 0.5), est=None):
    """A minimal env trace: one search/search_result pair per step, the curve in metadata."""
    steps, idx = [], 0
    for t, c in enumerate(curve[1:], start=1):
        first = {"index": idx, "kind": "search", "query": f"q{t}", "completeness": curve[t - 1]}
        if est is not None:
            first["self_estimate"] = est[t - 1]
        steps += [first, {"index": idx + 1, "kind": "search_result", "passage_ids": ["p0"] if c > curve[t - 1] else [],
                          "completeness": c, "depends_on": [idx]}]
        idx += 2
    return {"schema_version": "1.0", "trace_id": tid, "agent": agent, "question": "q", "steps": steps,
            "env": {"document_id": doc, "n_goal_passages": 4, "belief": belief, "max_steps": len(curve) - 1,
                    "theta": 0.15, "embedder": "tfidf", "final_completeness": curve[-1], "seed": 0},
            "metadata": {"topic": topic, "completeness_curve": list(curve), "query_step": list(range(1, len(div) + 1)),
                         "query_diversity": list(div)}}


@pytest.fixture
def traces():
    return [episode("a1", "A", "oracle", [0, 0.25, 0.5], est=[0.0, 0.5]),
            episode("a2", "A", "oracle", [0, 0.5, 1.0], doc="d2", topic="t2", est=[0.0, 0.25]),
            episode("b1", "B", "oracle", [0, 0.0, 0.25], div=(None, 0.0)),
            {"trace_id": "plain", "agent": "A", "question": "x", "steps": []}]


def test_episode_table_and_score(traces):
    ep = episode_table(traces)
    assert list(ep["trace_id"]) == ["a1", "a2", "b1"]  # the trace without env is not an episode
    row = ep.set_index("trace_id").loc["a1"]
    assert row["final_completeness"] == 0.5 and row["n_queries"] == 2 and row["empty_query_share"] == 0.0
    assert row["self_estimate_error"] == pytest.approx((0 + 0.25) / 2)  # |0-0| and |0.25-0.5|
    assert row["final_self_estimate"] == 0.5 and row["mean_query_diversity"] == 0.5
    assert completeness_score({"steps": [{"completeness": 0.2}, {"completeness": 0.4}]}) == 0.4
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(completeness_score({"trace_id": "x", "steps": []}))


def test_summary_mean_and_t_interval(traces):
    s = completeness_summary(traces).set_index("agent")
    a = s.loc["A"]
    assert a["n_episodes"] == 2 and a["n_documents"] == 2 and a["completeness"] == 0.75
    half = stats.t.ppf(0.975, 1) * np.std([0.5, 1.0], ddof=1) / math.sqrt(2)
    assert a["ci_low"] == pytest.approx(max(0, 0.75 - half)) and a["ci_high"] == pytest.approx(min(1, 0.75 + half))
    b = s.loc["B"]
    assert b["completeness"] == 0.25 and math.isnan(b["ci_low"])  # one episode: no interval
    with pytest.warns(UndefinedMetricWarning, match="no seeking-environment episodes"):
        assert completeness_summary([traces[-1]]).empty


def test_curves_with_bands(traces):
    c = CompletenessCurves().fit(traces).curves_
    a = c[c["agent"] == "A"].set_index("step")
    assert list(a["mean"]) == [0.0, 0.375, 0.75] and list(a["n"]) == [2, 2, 2]
    std = CompletenessCurves(band="std", std_multiplier=0.3).fit(traces).curves_
    s2 = std[(std["agent"] == "A") & (std["step"] == 2)].iloc[0]
    assert s2["lower"] == pytest.approx(0.75 - 0.3 * np.std([0.5, 1.0], ddof=1))
    with pytest.raises(ValueError):
        CompletenessCurves(band="iqr")


def test_query_diversity_definition():
    v = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.6, 0.8]])
    d = query_diversity(v)
    assert math.isnan(d[0])  # undefined for the first query
    np.testing.assert_allclose(d[1:], [1 - 0.6, 1 - 0.8, 0.0])  # max over all earlier queries


def test_diversity_table_skips_the_undefined_first_query(traces):
    t = query_diversity_table(traces)
    a1 = t[(t["agent"] == "A") & (t["step"] == 1)].iloc[0]
    assert a1["n_queries"] == 0 and math.isnan(a1["diversity"])
    assert t[(t["agent"] == "B") & (t["step"] == 2)]["diversity"].iloc[0] == 0.0


def test_topic_agent_table(traces):
    table = topic_agent_table(traces)  # no deduplicated episodes: all beliefs are used
    assert table.loc["t1", "A"] == 0.5 and table.loc["t2", "A"] == 1.0 and table.loc["t1", "B"] == 0.25
    assert math.isnan(table.loc["t2", "B"])


def test_plots_return_axes(traces):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from seekbench.report._completeness_plots import (plot_completeness_curves, plot_query_diversity,
                                                      plot_topic_agent_heatmap)

    fig, axes = plt.subplots(1, 3)
    assert plot_completeness_curves(CompletenessCurves().fit(traces).curves_, ax=axes[0]) is axes[0]
    assert plot_topic_agent_heatmap(topic_agent_table(traces), ax=axes[1]) is axes[1]
    assert plot_query_diversity(query_diversity_table(traces), ax=axes[2]) is axes[2]
    assert len(axes[0].lines) == 2 and axes[0].get_ylim() == (0.0, 1.0)
    plt.close(fig)
    ax = plot_topic_agent_heatmap(pd.DataFrame())  # an empty table still draws
    plt.close(ax.figure)


def test_report_section(default_docs):
    from seekbench.analysis import analyze_completeness
    from seekbench.env import make_agent, make_embedder, run_episodes
    from seekbench.report._completeness_section import FIGURES, completeness_section
    from seekbench.traces import build_tables

    eps = run_episodes(default_docs[:3], [make_agent("keyphrase"), make_agent("sentence")],
                       ["deduplicated", "oracle"], embedder=make_embedder("tfidf"), max_steps=3)
    steps, traces = build_tables(eps)
    assert analyze_completeness(steps, traces, [{"trace_id": "x", "agent": "a", "steps": []}]) is None
    conformal = pd.DataFrame({"agent": ["keyphrase"], "coverage": [0.91], "q_hat": [0.2]})
    html, md, figures, tables = completeness_section(analyze_completeness(steps, traces, eps, conformal=conformal))
    assert html.startswith("<h2 id='completeness'>") and "<script" not in html and "data:image/png;base64," in html
    assert "## Completeness (seeking environment)" in md and "figures/completeness_curves.png" in md
    assert set(figures) == set(FIGURES) and all(v.startswith(b"\x89PNG") for v in figures.values())
    joint = tables["completeness_by_agent"].set_index("agent")
    assert list(joint.columns) == ["episodes", "completeness [95% CI]", "self-estimate error", "coverage [95% CI]",
                                   "q_hat", "RQI", "ERF(8)", "CE"]
    assert joint.loc["keyphrase", "coverage [95% CI]"] == "0.910" and joint.loc["sentence", "q_hat"] == "n/a"
    assert joint.loc["keyphrase", "RQI"] == "n/a"  # unlabeled: undefined, never 0
    assert len(tables["completeness_episodes"]) == 12
    assert {"completeness", "completeness_curves", "completeness_topics", "query_diversity"} <= set(tables)
