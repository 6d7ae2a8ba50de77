"""CE (spec section 5): hand-derived values, one test per option, companions, undefined cases."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import make_trace, subset, tables

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.metrics._ce import (
    answer_calibration,
    calibration_error,
    evidence_prevalence,
)
from seekbench.metrics._decisions import decision_point_table, held_evidence
from seekbench.metrics._evidence import step_evidence

# Agent x:
# T1  r s o(C,I) r s o(C,S) r a   turns: t0 E0 A0, t1 E1 A0, t2 E2 A1      -> CE_1 = 0 (ideal)
# T2  r r s o(U,S) r r a          turns: t0 E0 A0, t1 E1 A1                -> CE_2 = 1/2
# T3  s o(C,S) s o(C,S)           no answer: t0 E0, t1 E2, t2 E2 (all A0)  -> CE_3 = 2/3
# Agent y:
# T4  a                           t0 E0 A1                                  -> CE_4 = 1
T1 = [("r", "G"), ("s",), ("o", "C", "I"), ("r", "N"), ("s",), ("o", "C", "S"), ("r", "G"), ("a",)]
T2 = [("r", "N"), ("r", "N"), ("s",), ("o", "U", "S"), ("r", "G"), ("r", "N"), ("a",)]
T3 = [("s",), ("o", "C", "S"), ("s",), ("o", "C", "S")]
T4 = [("a",)]


@pytest.fixture
def corpus():
    return tables([make_trace(T1, trace_id="t1", correct=True), make_trace(T2, trace_id="t2", correct=False),
                   make_trace(T3, trace_id="t3"), make_trace(T4, trace_id="t4", agent="y", correct=False)])


@pytest.fixture
def agent_x(corpus):
    return subset(*corpus, agent="x")


def test_turn_decision_points(agent_x):
    dp = decision_point_table(*agent_x)
    got = {tid: g[["t", "E", "A"]].values.tolist() for tid, g in dp.groupby("trace_id")}
    assert got == {"t1": [[0, 0, 0], [1, 1, 0], [2, 2, 1]], "t2": [[0, 0, 0], [1, 1, 1]],
                   "t3": [[0, 0, 0], [1, 2, 0], [2, 2, 0]]}


def test_trace_aggregate_hand_value(agent_x):
    # (0 + 1/2 + 2/3) / 3 = 7/18
    res = answer_calibration(*agent_x, n_boot=0)
    assert res.ce == pytest.approx(7 / 18)
    assert res.per_trace.to_dict() == pytest.approx({"t1": 0.0, "t2": 0.5, "t3": 2 / 3})
    assert calibration_error(*agent_x) == pytest.approx(7 / 18)


def test_ce_aggregate_option(agent_x):
    # pooled, group prevalence: N = (3, 2, 3), answers = (0, 1, 1):
    # 3/8 |0 - 0| + 2/8 |1/2 - 0| + 3/8 |1/3 - 1| = 1/8 + 2/8 = 3/8 (trace: 7/18).
    assert calibration_error(*agent_x, aggregate="pooled", prevalence="group") == pytest.approx(3 / 8)
    assert calibration_error(*agent_x, aggregate="trace") == pytest.approx(7 / 18)


def test_ce_prevalence_option_global_uses_all_agents(corpus, agent_x):
    # Corpus decision points by E: (4, 2, 3) (T4 adds one at E = 0) -> P(E) = (4/9, 2/9, 3/9).
    prev = evidence_prevalence(*corpus)
    assert prev.tolist() == pytest.approx([4 / 9, 2 / 9, 3 / 9])
    # x with global weights: 4/9 * 0 + 2/9 * 1/2 + 3/9 * 2/3 = 1/9 + 2/9 = 1/3; with its own: 3/8.
    glob = calibration_error(*agent_x, aggregate="pooled", prevalence="global", global_prevalence=prev)
    group = calibration_error(*agent_x, aggregate="pooled", prevalence="group")
    assert glob == pytest.approx(1 / 3) and group == pytest.approx(3 / 8)
    # Without a corpus vector the traces given are the corpus: global = group.
    assert calibration_error(*agent_x, aggregate="pooled") == pytest.approx(3 / 8)
    assert answer_calibration(*agent_x, aggregate="pooled", global_prevalence=prev, n_boot=0).ce == \
        pytest.approx(1 / 3)


def test_decision_points_option(agent_x):
    # T1 as steps (E held includes observations at or before the step):
    # r E0 A0 | s E0 | o E1 | r E1 | s E1 | o E2 | r E2 | a E2 A1: o and r at E2 without answering
    # -> CE_1 = 2/8 = 1/4 (turn decision points: 0).
    steps, traces = agent_x
    s1, t1 = subset(steps, traces, trace_id="t1")
    dp = decision_point_table(s1, t1, decision_points="step")
    assert dp["E"].tolist() == [0, 0, 1, 1, 1, 2, 2, 2] and dp["A"].tolist() == [0] * 7 + [1]
    assert calibration_error(s1, t1, decision_points="step") == pytest.approx(1 / 4)
    assert calibration_error(s1, t1, decision_points="turn") == 0.0


def test_step_points_stop_at_first_answer_and_unanswered_keep_all():
    steps, traces = tables([make_trace([("s",), ("o", "C", "S"), ("a",), ("r", "G"), ("a",)], trace_id="a"),
                            make_trace([("r",), ("s",), ("o", "U", "I")], trace_id="b")])
    dp = decision_point_table(steps, traces, decision_points="step")
    assert dp.groupby("trace_id").size().to_dict() == {"a": 3, "b": 3}
    assert dp["A"].sum() == 1


def test_held_evidence_equals_step_evidence_for_reasoning_and_answers(shared_tables):
    steps, _ = shared_tables
    for scope in ("cumulative", "latest"):
        held = held_evidence(steps, evidence_scope=scope)
        ref = step_evidence(steps, scope=scope)
        ra = steps["kind"].isin(["reasoning", "answer"])
        assert (held[ra] == ref[ra]).all()


def test_evidence_scope_option():
    # s o(C,S) s o(U,I) a. cumulative: t0 E0, t1 E2 A0, t2 E2 A1 -> 1 mismatch of 3 = 1/3.
    # latest: t0 E0, t1 E2 A0, t2 E0 A1 -> 2 mismatches of 3 = 2/3.
    steps, traces = tables([make_trace([("s",), ("o", "C", "S"), ("s",), ("o", "U", "I"), ("a",)])])
    assert calibration_error(steps, traces) == pytest.approx(1 / 3)
    assert calibration_error(steps, traces, evidence_scope="latest") == pytest.approx(2 / 3)


def test_evidence_mapping_option_changes_pooled_global_ce():
    # x: s o(C,I) a; y: s o(C,S) a.
    # sum: x points E0 A0, E1 A1; y E0 A0, E2 A1 -> P = (2/4, 1/4, 1/4). x uses E0, E1, weights
    #   renormalised (2/3, 1/3): 2/3 * 0 + 1/3 * |1 - 0| = 1/3.
    # sufficiency_first: o(C,I) -> E0. x: E0 twice, one answer; P = (3/4, 0, 1/4):
    #   x uses E0 only: |1/2 - 0| = 1/2.
    # (Trace CE cannot change: both mappings agree on which observations give E = 2.)
    corpus = tables([make_trace([("s",), ("o", "C", "I"), ("a",)], trace_id="a", agent="x"),
                     make_trace([("s",), ("o", "C", "S"), ("a",)], trace_id="b", agent="y")])
    x = subset(*corpus, agent="x")
    for mapping, want in (("sum", 1 / 3), ("sufficiency_first", 1 / 2)):
        prev = evidence_prevalence(*corpus, evidence_mapping=mapping)
        got = calibration_error(*x, aggregate="pooled", evidence_mapping=mapping, global_prevalence=prev)
        assert got == pytest.approx(want), mapping
    assert calibration_error(*x) == calibration_error(*x, evidence_mapping="sufficiency_first")


def test_companions(agent_x, corpus):
    res = answer_calibration(*agent_x, n_boot=0)
    # answered: T1 at E2, T2 at E1 -> overconfident 1/2.
    assert res.overconfident_rate == pytest.approx(0.5) and res.n_answered == 2
    # reached E2: T1 (answered at once), T3 (never answers) -> overcautious 1 of 3 traces; 1 of 2 reached.
    assert res.overcautious_rate == pytest.approx(1 / 3)
    assert res.overcautious_given_e2 == pytest.approx(1 / 2) and res.n_reached_e2 == 2
    acc = res.accuracy_by_evidence.set_index("E")
    assert acc["n"].tolist() == [0, 1, 1] and acc.loc[1, "accuracy"] == 0.0 and acc.loc[2, "accuracy"] == 1.0
    y = answer_calibration(*subset(*corpus, agent="y"), n_boot=0)
    assert y.overconfident_rate == 1.0 and y.overcautious_rate == 0.0 and y.ce == 1.0


def test_overcautious_window():
    # E = 2 first at turn 1, answer at turn 3: late by 2 turns.
    steps, traces = tables([make_trace([("s",), ("o", "C", "S"), ("s",), ("o", "U", "I"), ("s",),
                                        ("o", "U", "I"), ("a",)])])
    assert answer_calibration(steps, traces, overcautious_window=1, n_boot=0).overcautious_rate == 1.0
    assert answer_calibration(steps, traces, overcautious_window=2, n_boot=0).overcautious_rate == 0.0
    assert answer_calibration(steps, traces, n_boot=0).overcautious_rate == 0.0  # H = 15
    with pytest.warns(FutureWarning, match="renamed overcautious_window"):  # the old name, for one release
        assert answer_calibration(steps, traces, horizon=1, n_boot=0).overcautious_rate == 1.0


def test_answer_table(agent_x):
    tab = answer_calibration(*agent_x, aggregate="pooled", prevalence="group", n_boot=0).answer_table
    assert tab["n"].tolist() == [3, 2, 3] and tab["answers"].tolist() == [0, 1, 1]
    assert tab["term"].sum() == pytest.approx(3 / 8)


def test_no_labels_is_nan_with_warning():
    steps, traces = tables([make_trace([("s",), ("o",), ("a",)], correct=True)])
    with pytest.warns(UndefinedMetricWarning, match="evidence labels"):
        res = answer_calibration(steps, traces, n_boot=20)
    assert np.isnan(res.ce) and np.isnan(res.overconfident_rate) and np.isnan(res.overcautious_rate)
    assert all(np.isnan(res.ci)) and res.n_traces_all_unlabeled == 1
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(calibration_error(steps, traces, aggregate="pooled"))


def test_unlabeled_observation_keeps_previous_state():
    # s o(C,S) s o(unlabeled) a: E stays 2 -> ideal except not answering at t1: 1/3.
    steps, traces = tables([make_trace([("s",), ("o", "C", "S"), ("s",), ("o",), ("a",)])])
    assert calibration_error(steps, traces) == pytest.approx(1 / 3)


def test_traces_without_observations_need_no_labels():
    steps, traces = tables([make_trace([("r",), ("a",)])])
    assert calibration_error(steps, traces) == 1.0  # answered at turn 0 holding E = 0


def test_unknown_options_raise_user_error(agent_x):
    for kw in ({"aggregate": "mean"}, {"prevalence": "corpus"}, {"decision_points": "token"},
               {"evidence_mapping": "max"}, {"evidence_scope": "all"}):
        with pytest.raises(UserInputError, match="unknown"):
            calibration_error(*agent_x, **kw)
    with pytest.raises(UserInputError, match="overcautious_window"):
        answer_calibration(*agent_x, overcautious_window=-1)
    with pytest.raises(UserInputError, match="global_prevalence"):
        calibration_error(*agent_x, aggregate="pooled", global_prevalence=[0.5, 0.5])


def test_ci_contains_estimate_and_is_reproducible(shared_tables):
    steps, traces = shared_tables
    for aggregate in ("trace", "pooled"):
        a = answer_calibration(steps, traces, aggregate=aggregate, n_boot=500, seed=3)
        b = answer_calibration(steps, traces, aggregate=aggregate, n_boot=500, seed=3)
        assert a.ci == b.ci
        assert a.ci[0] <= a.ce <= a.ci[1]


def test_shared_data_options_in_range(shared_tables):
    steps, traces = shared_tables
    prev = evidence_prevalence(steps, traces, decision_points="step", evidence_mapping="sufficiency_first")
    assert prev.sum() == pytest.approx(1.0)
    for agent in traces["agent"].unique():
        s, t = subset(steps, traces, agent=agent)
        for kw in ({}, {"aggregate": "pooled"}, {"decision_points": "step"},
                   {"aggregate": "pooled", "decision_points": "step", "evidence_mapping": "sufficiency_first",
                    "global_prevalence": prev}):
            assert 0.0 <= calibration_error(s, t, **kw) <= 1.0
