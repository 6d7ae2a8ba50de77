"""Turns of tool calls without an observation (spec section 1, clarified) and what follows from them.

The turn of a step is the number of tool calls at or before it: a call opens a turn whether
or not an observation follows, and a trace without an answer is censored at its number of
tool calls, whatever steps follow the last call. ERF time, CE decision points and tool-call
counts all read these turns.
"""

from __future__ import annotations

import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench.metrics import (
    EvidenceRecoveryFitter,
    answer_calibration,
    decision_point_table,
    outcome_metrics,
    recovery_events,
    summarize,
)

pytestmark = pytest.mark.filterwarnings("ignore::seekbench._errors.UndefinedMetricWarning")

# The spec's worked example: search, result (Clear, Sufficient), search, answer.
SPEC_EXAMPLE = [("s",), ("o", "C", "S"), ("s",), ("a",)]
# The same ending in an incorrect answer without evidence: it stops at its answer's turn.
STOPS = [("s",), ("o", "U", "I"), ("s",), ("a",)]
# Cut off after a second call without an observation, followed by reasoning and another step.
CUT_OFF = [("s",), ("o", "U", "I"), ("s",), ("r", "N"), ("x",)]
# Recovers at turn 2 (its second observation is Clear and Sufficient).
LATE = [("s",), ("o", "U", "I"), ("s",), ("o", "C", "S"), ("a",)]


def test_spec_example_turns_and_ce():
    # Turns 1, 1, 2, 2 (the answer follows the second call, which has no observation).
    # Decision points: t=0 (E 0, continue), t=1 (E 2, continue), t=2 (E 2, answer):
    # CE = (1/3)|0 - 0| + (2/3)|1/2 - 1| = 1/3. The old rule put the answer at turn 1
    # (the turn of the last observation), giving points t=0, t=1 (answer) and CE = 0.
    steps, traces = tables([make_trace(SPEC_EXAMPLE, correct=False)])
    assert steps["turn"].tolist() == [1, 1, 2, 2]
    assert traces.loc[0, "answer_turn"] == 2 and traces.loc[0, "last_turn"] == 2
    points = decision_point_table(steps, traces)
    assert points[["t", "E", "A"]].values.tolist() == [[0, 0, 0], [1, 2, 0], [2, 2, 1]]
    assert answer_calibration(steps, traces, n_boot=0).ce == pytest.approx(1 / 3)
    assert summarize(steps, traces, n_boot=0).groups[0]["ce"] == pytest.approx(1 / 3)


def test_call_without_observation_carries_evidence_over():
    # E at turn 2 (no observation) is the cumulative state of turn 1 under both scopes.
    steps, traces = tables([make_trace(SPEC_EXAMPLE, correct=False)])
    for scope in ("cumulative", "latest"):
        points = decision_point_table(steps, traces, evidence_scope=scope)
        assert points["E"].tolist() == [0, 2, 2]


def test_stop_is_at_the_answers_turn():
    # s o(U,I) s a(incorrect): E stays 0; the answer is at turn 2, so the trace stops at 2
    # (the old rule: 1). Decision points t=0,1 continue, t=2 answers, all at E = 0:
    # CE = 1 * |1/3 - 0| = 1/3.
    steps, traces = tables([make_trace(STOPS, correct=False)])
    ev = recovery_events(steps, traces)
    assert ev[["duration", "event"]].values.tolist() == [[2, "stopped"]]
    assert answer_calibration(steps, traces, n_boot=0).ce == pytest.approx(1 / 3)


def test_unanswered_trace_is_censored_at_its_number_of_tool_calls():
    # s o s r x: two tool calls, so the trace is cut off at turn 2 whatever follows the last
    # call (the old rule: reasoning and other steps kept the observation's turn 1).
    steps, traces = tables([make_trace(CUT_OFF)])
    assert steps["turn"].tolist() == [1, 1, 2, 2, 2]
    assert traces.loc[0, "last_turn"] == 2
    ev = recovery_events(steps, traces)
    assert ev[["duration", "event"]].values.tolist() == [[2, "cut_off"]]
    # A trace with no answer contributes all its turns as "continue": t = 0, 1, 2.
    assert decision_point_table(steps, traces)["t"].tolist() == [0, 1, 2]
    assert outcome_metrics(steps, traces, n_boot=0).tool_calls == 2.0


def test_censoring_time_moves_the_erf():
    # A recovers at 1 (E = 2 at turn 1), LATE recovers at 2, CUT_OFF is censored at 2.
    # Aalen-Johansen: t=1: n=3, d=1 -> F = 1/3, S = 2/3; t=2: n=2 (the censored trace is
    # still at risk at its own time), d=1 -> F = 1/3 + (2/3)(1/2) = 2/3.
    # With the old censoring at turn 1, n(2) = 1 and F(2) = 1/3 + 2/3 = 1.
    steps, traces = tables([make_trace(SPEC_EXAMPLE, trace_id="a", correct=False),
                            make_trace(LATE, trace_id="b", correct=False),
                            make_trace(CUT_OFF, trace_id="c")])
    fit = EvidenceRecoveryFitter().fit(steps, traces)
    assert fit.curve_["erf"].tolist() == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert fit.event_table_.loc[2, "at_risk"] == 2


def test_tool_call_counts_equal_the_last_turn():
    # Every tool call opens a turn, so tool calls per trace = its last turn, and the
    # searches before an answer given at the end = its answer turn.
    steps, traces = tables([make_trace(SPEC_EXAMPLE, trace_id="a", correct=False),
                            make_trace(CUT_OFF, trace_id="c")])
    per = outcome_metrics(steps, traces, n_boot=0).per_trace
    assert per["tool_calls"].tolist() == traces["last_turn"].astype(float).tolist() == [2.0, 2.0]
    assert per.loc["a", "searches_before_answer"] == traces.loc[0, "answer_turn"] == 2


_KIND_CODES = st.lists(st.sampled_from(["r", "s", "o", "x"]), max_size=12)


@settings(max_examples=80, deadline=None, database=None, derandomize=True)
@given(_KIND_CODES, st.booleans())
def test_turn_is_the_number_of_tool_calls_so_far(codes, answers):
    # Invariants of spec section 1 on any step sequence: turns count calls; an unanswered trace
    # ends (is censored) at its number of calls; decision points are turns 0 .. that end.
    spec = [(c,) if c != "o" else ("o", "C", "I") for c in codes] + ([("a",)] if answers else [])
    steps, traces = tables([make_trace(spec, correct=False)])
    calls = [sum(c == "s" for c in codes[:i + 1]) for i in range(len(codes))]
    assert steps["turn"].tolist() == calls + ([calls[-1] if calls else 0] if answers else [])
    n_calls = codes.count("s")
    assert traces.loc[0, "last_turn"] == n_calls
    assert decision_point_table(steps, traces)["t"].tolist() == list(range(n_calls + 1))
    ev = recovery_events(steps, traces)
    assert ev.loc[0, "duration"] == n_calls and ev.loc[0, "event"] == ("stopped" if answers else "cut_off")
