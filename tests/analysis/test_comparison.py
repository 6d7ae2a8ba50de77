"""compare_agents: hand-derived differences and CIs on a tiny paired example, invariants, and agreement with
the published per-agent numbers on the 190 shared traces."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.analysis import HEADLINE_METRICS, compare_agents
from seekbench.analysis._headline import headline_columns
from seekbench.metrics import (
    MetricOptions,
    bootstrap_sums,
    cluster_labels,
    evidence_prevalence,
    percentile_interval,
    summarize,
    trace_statistics,
)
from seekbench.traces import build_tables


def _trace(tid, agent, qid, grounding, n_search, correct):
    """A trace: its reasoning steps labeled ``grounding``, then ``n_search`` searches with their (unlabeled)
    results, then an answer."""
    steps = [{"index": i, "kind": "reasoning", "text": f"r{i}", "labels": {"grounding": g}} for i, g in enumerate(grounding)]
    for _ in range(n_search):  # each search's result is left without evidence labels
        steps.append({"index": len(steps), "kind": "search", "query": f"query {len(steps)}"})
        steps.append({"index": len(steps), "kind": "search_result", "documents": [{"title": "d", "text": "t"}]})
    steps.append({"index": len(steps), "kind": "answer", "text": "x"})
    return {
        "trace_id": tid,
        "agent": agent,
        "question_id": qid,
        "question": f"question {qid}",
        "gold_answers": ["x"],
        "final_answer": "x" if correct else "y",
        "correct": {"value": correct, "source": "human"},
        "steps": steps,
    }


G, N = "Grounded", "NotGrounded"
# Agents a and b answer the same three questions q1, q2, q3 (one trace each):
#   a: RQI_i = 1, 1/2, 0      tool calls 1, 2, 3    correct T, T, F
#   b: RQI_i = 1, 1,   1/2    tool calls 2, 3, 4    correct T, F, F
TINY = [
    _trace("a1", "a", "q1", [G], 1, True),
    _trace("a2", "a", "q2", [G, N], 2, True),
    _trace("a3", "a", "q3", [N], 3, False),
    _trace("b1", "b", "q1", [G], 2, True),
    _trace("b2", "b", "q2", [G], 3, False),
    _trace("b3", "b", "q3", [G, N], 4, False),
]


def _compare(traces, **kw):
    steps, table = build_tables(traces)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # no evidence labels: CE and ERF undefined
        summary = summarize(steps, table, n_boot=0)
        return compare_agents(steps, table, summary, **kw)


@pytest.fixture(scope="module")
def tiny():
    return _compare(TINY, n_boot=2000, seed=0)


def _row(c, metric, agent, other):
    d = c.differences
    return d[(d["metric"] == metric) & (d["agent"] == agent) & (d["other"] == other)].iloc[0]


def test_hand_derived_differences(tiny):
    # Each bootstrap resample draws three questions with replacement; a question brings both of its traces
    # (paired), so every difference is the mean, over the drawn questions, of the per-question differences.
    # Tool calls a - b per question: 1-2, 2-3, 3-4 = -1, -1, -1: every resample gives -1, so the CI is
    # [-1, -1]; point: mean(1, 2, 3) - mean(2, 3, 4) = 2 - 3 = -1. Clear, and a is better (fewer calls).
    r = _row(tiny, "tool_calls", "b", "a")  # b against the baseline a (the first agent)
    assert [r["difference"], r["lower"], r["upper"]] == pytest.approx([1.0, 1.0, 1.0], abs=1e-12)
    assert r["clear"] and not r["better"] and r["paired"] and r["n_shared_questions"] == 3
    # RQI b - a per question: 1 - 1, 1 - 1/2, 1/2 - 0 = 0, 1/2, 1/2; point (1 + 1 + 1/2)/3 - (1 + 1/2 + 0)/3 = 1/3.
    # A resample's difference is 0 only when it draws q1 three times: P = (1/3)^3 = 1/27 = 3.7% > 2.5%, so
    # the 2.5th percentile is 0; it is 1/2 when it draws only q2 and q3: P = (2/3)^3 = 8/27 > 2.5%, so the
    # 97.5th percentile is 1/2. CI [0, 1/2]: it does not exclude 0, the difference is not clear.
    r = _row(tiny, "rqi", "b", "a")
    assert r["difference"] == pytest.approx(1 / 3)
    assert [r["lower"], r["upper"]] == pytest.approx([0.0, 0.5], abs=1e-12)
    assert not r["clear"] and r["better"]
    # Accuracy a - b per question: 0, 1, 0; point 2/3 - 1/3 = 1/3. 0 when q2 is never drawn:
    # P = (2/3)^3 = 29.6%, so the 2.5th percentile is 0; 1 when only q2 is drawn: P = 1/27 > 2.5%, so the
    # 97.5th percentile is 1. CI [0, 1]: not clear.
    r = _row(tiny, "accuracy", "a", "b")
    assert r["difference"] == pytest.approx(1 / 3)
    assert [r["lower"], r["upper"]] == pytest.approx([0.0, 1.0], abs=1e-12)
    assert not r["clear"] and r["better"]


def test_hand_derived_sentences_and_order(tiny):
    m = tiny.metrics.set_index("metric")
    assert m.loc["rqi", "order"] == "b > a" and m.loc["rqi", "best"] == "b"
    assert m.loc["rqi", "sentence"].startswith("b grounds more of its reasoning than a; the difference is not clear")
    assert m.loc["tool_calls", "sentence"].startswith("a needs fewer tool calls than b; the difference is clear")
    assert m.loc["tool_calls", "direction"] == "lower is cheaper"
    assert m.loc["ce", "direction"] == "lower is better, 0 is best"
    # Observations without evidence labels: CE and ERF are undefined for both agents, never 0.
    assert m.loc["ce", "n_agents"] == 0 and "nothing to compare" in m.loc["ce", "sentence"]
    assert m.loc["recovered_by_8", "n_agents"] == 0
    assert list(tiny.metrics["metric"]) == [h.key for h in HEADLINE_METRICS]


def test_pairing_is_what_makes_identical_agents_equal():
    # b is a copy of a on the same questions: paired, each resample holds both copies of a question, so every
    # difference is exactly 0 with CI [0, 0].
    copy = [dict(t, trace_id="c" + t["trace_id"], agent="copy") for t in TINY if t["agent"] == "a"]
    c = _compare([t for t in TINY if t["agent"] == "a"] + copy, n_boot=500, seed=1)
    d = c.differences[c.differences["agent"] != c.differences["other"]]
    assert len(d) and (d[["difference", "lower", "upper"]].dropna().to_numpy() == 0).all()
    assert not d["clear"].any()
    # Resampling each agent's traces on its own (unpaired) would not: the tool-call difference varies.
    cols = np.zeros((6, 4))
    cols[:3, 0], cols[:3, 1], cols[3:, 2], cols[3:, 3] = [1, 2, 3], 1, [1, 2, 3], 1
    ids = [f"t{i}" for i in range(6)]
    sums = bootstrap_sums(cols, n_boot=500, seed=1, clusters=cluster_labels(ids, None))
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample without one agent's traces: NaN, dropped
        lo, hi = percentile_interval(sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3])
    assert lo < 0 < hi


def test_unknown_baseline_names_the_agents():
    with pytest.raises(UserInputError, match=r"'nobody' is not an agent .*choose one of: best, a, b$"):
        _compare(TINY, baseline="nobody", n_boot=10)


def test_one_agent_has_no_comparison():
    assert _compare([t for t in TINY if t["agent"] == "a"], n_boot=10) is None


_labels = st.sampled_from([G, N])


@st.composite
def _corpora(draw):
    """Two or three agents answering some of four questions, with random labels, searches and correctness."""
    n_agents = draw(st.integers(2, 3))
    traces = []
    for k in range(n_agents):
        qs = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), min_size=1, max_size=4, unique=True))
        for q in qs:
            traces.append(
                _trace(
                    f"{k}-{q}",
                    f"agent{k}",
                    q,
                    draw(st.lists(_labels, min_size=0, max_size=3)),
                    draw(st.integers(0, 3)),
                    draw(st.booleans()),
                )
            )
    return traces


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_corpora(), st.integers(0, 3))
def test_swapping_the_baseline_negates_and_self_is_zero(traces, seed):
    first = _compare(traces, n_boot=60, seed=seed)
    other = first.agents[1]
    second = _compare(traces, n_boot=60, seed=seed, baseline=other)
    a = first.against_baseline().set_index(["metric", "agent"])
    b = second.against_baseline().set_index(["metric", "agent"])
    base = first.baseline
    for m in [h.key for h in HEADLINE_METRICS]:
        x, y = a.loc[(m, other)], b.loc[(m, base)]  # other - base, and base - other
        np.testing.assert_array_equal(
            np.array([y["difference"], y["lower"], y["upper"]]),
            np.array([-x["difference"], -x["upper"], -x["lower"]]) + 0.0,
        )
        for r in (a.loc[(m, base)], b.loc[(m, other)]):  # each baseline against itself
            if np.isfinite(r["value"]):
                assert (r["difference"], r["lower"], r["upper"]) == (0.0, 0.0, 0.0)
        lo, hi = x["lower"], x["upper"]
        assert x["verdict"] == y["verdict"] and x["interval"] == y["interval"]
        assert x["clear"] == (x["verdict"] == "clear")
        if np.isfinite(lo):  # borderline: a bound within Monte Carlo error of 0, on either side
            assert lo <= hi and (x["verdict"] != "clear" or lo > 0 or hi < 0)
            assert x["verdict"] != "not clear" or not (lo > 1e-12 or hi < -1e-12)


OPTIONS = [
    MetricOptions(),
    MetricOptions(ce_aggregate="pooled", ce_prevalence="global", rqi_aggregate="step", erf_method="km"),
    MetricOptions(ce_aggregate="pooled", ce_prevalence="group", decision_points="step", time="step"),
]


@pytest.mark.parametrize("opts", OPTIONS, ids=["default", "pooled-global", "pooled-group-step"])
def test_columns_reproduce_the_published_numbers(shared_tables, opts):
    # The columns the paired bootstrap resamples, read from the statistics table the summary was aggregated
    # from, give on the full sample the numbers summarize publishes (RQI, CE, ERF(8), accuracy, overconfident
    # and overcautious rates, tool calls, duplicate-query rate), bit for bit: the same arithmetic on the same counts.
    steps, table = shared_tables
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        summary = summarize(steps, table, options=opts, n_boot=0)
    stats = trace_statistics(steps, table, options=opts)
    prevalence = evidence_prevalence(steps, table, decision_points=opts.decision_points, **opts.evidence).to_numpy()
    checked = 0
    for g in summary.groups:
        rows = (table["agent"] == g["agent"]).to_numpy()
        parts = headline_columns(stats[rows], options=opts, global_prevalence=prevalence)
        for key, (cols, stat) in parts.items():
            value = float(stat(cols.sum(axis=0, keepdims=True))[0])
            assert value == pytest.approx(g[key], rel=1e-12, abs=1e-12, nan_ok=True), (g["agent"], key)
            checked += 1
    assert checked == 5 * len(HEADLINE_METRICS)


def test_shared_traces_statements(shared_tables):
    steps, table = shared_tables
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        c = compare_agents(steps, table, summarize(steps, table, n_boot=0), n_boot=2000, seed=0)
    m = c.metrics.set_index("metric")
    # fewshot's RQI (0.419) is the highest; its smallest gap, to Qwen2.5 (0.258), has a CI above 0.
    assert m.loc["rqi", "best"] == "fewshot-Qwen2.5-7B-Instruct"
    assert "each difference is clear" in m.loc["rqi", "sentence"]
    assert m.loc["ce", "best"] == "fewshot-Qwen2.5-7B-Instruct"
    assert m.loc["recovered_by_8", "best"].startswith("SearchR1")
    d = c.differences
    assert d["paired"].all() and (d["n_shared_questions"] > 0).all()  # some questions are shared by every pair
