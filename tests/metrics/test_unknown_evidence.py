"""Spec section 2: a trace with observations and none labeled has an unknown E, not E = 0.

It is left out of every E-based number (E at the answer, CE, ERF, the overconfident and overcautious
rates, RQI by evidence state), counted per agent, and still counts in the outcome and efficiency
metrics. Expected values are derived by hand in the comments.
"""

from __future__ import annotations

import warnings

import pytest
from _helpers import make_trace, tables

from seekbench.analysis import compare_agents
from seekbench.metrics import (
    EvidenceRecoveryFitter,
    answer_calibration,
    decision_point_table,
    reasoning_quality,
    summarize,
    wilson_interval,
)

# Agent x, three traces:
#   k1: search, obs (Clear, Sufficient), answer (correct)      E 0 -> 2, answers at turn 1 with E = 2: recovered at 1
#   k2: search, obs (Unclear, Insufficient), answer (wrong)    E 0 -> 0, answers at 1 with E = 0: stopped at 1
#   u:  reasoning G, search, obs (unlabeled), search, obs (unlabeled), answer (wrong)
#       observations but none labeled: E unknown. Read as E = 0 it would be overconfident and a stop.
KNOWN_1 = [("s",), ("o", "C", "S"), ("a",)]
KNOWN_2 = [("s",), ("o", "U", "I"), ("a",)]
UNKNOWN = [("r", "G"), ("s",), ("o", None, None), ("s",), ("o", None, None), ("a",)]


@pytest.fixture
def corpus():
    return tables(
        [
            make_trace(KNOWN_1, trace_id="k1", correct=True),
            make_trace(KNOWN_2, trace_id="k2", correct=False),
            make_trace(UNKNOWN, trace_id="u", correct=False),
        ]
    )


def _summary(steps, traces, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return summarize(steps, traces, n_boot=200, **kw).groups[0]


def test_summary_leaves_the_unknown_trace_out_of_e_based_numbers(corpus):
    g = _summary(*corpus)
    # Overconfident: of the answered traces with known E (k1, k2) one answered with E < 2 -> 1/2, not 2/3.
    assert g["overconfident"] == 0.5 and g["overconfident_ci"] == pytest.approx(list(wilson_interval(1, 2)))
    # Overcautious: of the 2 known traces none held back -> 0/2, Wilson [0, z^2 / (2 + z^2)] = [0, 0.6576].
    assert g["overcautious"] == 0.0 and g["overcautious_ci"] == pytest.approx([0.0, 0.657620], abs=1e-6)
    # CE per trace: k1 (t0 E0 continue: right; t1 E2 answer: right) 0; k2 (t0 right, t1 E0 answer: wrong) 1/2.
    assert g["ce"] == pytest.approx(0.25)
    # ERF(8): k1 recovered at 1, k2 stopped at 1 -> 1/2 (with u read as E = 0, 1/3).
    assert g["recovered_by_8"] == 0.5 and g["recovered_by_8_ci"] == g["erf_ci"]["8"]
    # Answers by E at the answer: one at E = 0 (k2), one at E = 2 (k1); u at none.
    assert {k: v["n"] for k, v in g["accuracy_by_evidence"].items()} == {"0": 1, "1": 0, "2": 1}
    # RQI counts u's grounded reasoning step (RQI is not E-based); by evidence state it is in no state.
    assert g["rqi"] == 1.0 and sum(v["n"] for v in g["rqi_by_evidence"].values()) == 0
    # Accuracy and efficiency count all three: 1 of 3 correct, (1 + 1 + 2) / 3 tool calls.
    assert g["accuracy"] == pytest.approx(1 / 3) and g["tool_calls"] == pytest.approx(4 / 3)
    assert g["n_traces"] == 3 and g["unlabeled"]["traces_with_all_observations_unlabeled"] == 1


def test_the_metric_functions_agree(corpus):
    steps, traces = corpus
    cal = answer_calibration(steps, traces, n_boot=0)
    assert cal.overconfident_rate == 0.5 and cal.n_answered == 2 and cal.n_traces_all_unlabeled == 1
    assert cal.ce == pytest.approx(0.25)
    assert set(decision_point_table(steps, traces)["trace_id"]) == {"k1", "k2"}  # u has no decision point
    fit = EvidenceRecoveryFitter().fit(steps, traces)
    assert fit.recovered_by(8) == 0.5 and fit.n_evidence_unknown_ == 1 and list(fit.events_["trace_id"]) == ["k1", "k2"]
    assert fit.summary.iloc[0]["n_evidence_unknown"] == 1
    assert reasoning_quality(steps, n_boot=0).by_evidence["n"].sum() == 0


def test_a_trace_without_observations_has_e_zero_and_counts(corpus):
    # Spec section 2: no observation at all is E = 0 throughout (the agent never looked), not unknown.
    steps, traces = tables(
        [
            make_trace(KNOWN_1, trace_id="k1", correct=True),
            make_trace([("r", "G"), ("a",)], trace_id="n", correct=False),
        ]
    )
    g = _summary(steps, traces)
    assert g["overconfident"] == 0.5 and g["recovered_by_8"] == 0.5
    assert g["unlabeled"]["traces_with_all_observations_unlabeled"] == 0


def test_the_comparison_uses_the_same_traces(corpus):
    # The comparison's per-agent columns leave u out as the summary does: a copy of the corpus as agent y
    # differs by exactly 0 on every E-based metric (paired: the same questions).
    steps, traces = tables(
        [
            make_trace(s, trace_id=f"{a}{t}", agent=a, question_id=t, correct=c)
            for a in ("x", "y")
            for t, s, c in (("k1", KNOWN_1, True), ("k2", KNOWN_2, False), ("u", UNKNOWN, False))
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = summarize(steps, traces, n_boot=0)
        c = compare_agents(steps, traces, s, n_boot=100)
    v = c.values.set_index(["metric", "agent"])
    assert v.loc[("overconfident", "x"), "value"] == 0.5 and v.loc[("recovered_by_8", "y"), "value"] == 0.5
    d = c.differences.set_index(["metric", "agent"])
    assert d.loc[("overconfident", "y"), "difference"] == 0.0
    # Both at 0 overcautious (of 2 known traces each): the bootstrap is degenerate, Newcombe's interval is
    # [-u, u] with u = z^2 / (2 + z^2) = 0.657620.
    r = d.loc[("overcautious", "y")]
    assert r["interval"] == "Newcombe hybrid score" and r["verdict"] == "not clear"
    assert [r["lower"], r["upper"]] == pytest.approx([-0.657620, 0.657620], abs=1e-6)
