"""Outcome and efficiency metrics (spec section 6): hand-derived values, Pass@k, undefined cases."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.metrics._outcome import (
    accuracy_score,
    duplicate_query_rate,
    duplicate_visit_rate,
    outcome_metrics,
    pass_at_k,
    pass_at_k_score,
)

# A: 3 searches ("Who is X?", "who is x" = same normalised text, "y"), answer; correct; EM 1, F1 1.
#    duplicate-query share 1/3; 3 tool calls, 3 before the answer.
# B: 2 visits of u1 (queries "page a", "page b"), answer, then 1 more search; wrong; EM 0,
#    F1 = 0.8 ("river thames london" vs "River Thames": P = 2/3, R = 1).
#    duplicate-query share 0, duplicate-visit share 1/2; 3 tool calls, 2 before the answer.
# C: reasoning only, no answer, correctness unknown: 0 tool calls, no query, no EM/F1.
A = [("s", "Who is X?"), ("o", "C", "S"), ("s", "who is x"), ("o", "C", "S"), ("s", "y"), ("o", "C", "S"),
     ("a",)]
B = [("s", "page a", "u1"), ("o", "C", "I"), ("s", "page b", "u1"), ("o", "C", "I"), ("a",), ("s",),
     ("o", "U", "I")]
C = [("r", "G")]


@pytest.fixture
def corpus():
    return tables([make_trace(A, trace_id="a", correct=True, final_answer="Paris", gold=["paris"]),
                   make_trace(B, trace_id="b", correct=False, final_answer="the river thames london",
                              gold=["River Thames"]),
                   make_trace(C, trace_id="c")])


def test_outcome_hand_values(corpus):
    steps, traces = corpus
    res = outcome_metrics(steps, traces, n_boot=0)
    assert res.accuracy == 0.5 and res.n_known == 2  # (1 + 0) / 2, C unknown
    assert res.em == 0.5 and res.f1 == pytest.approx((1 + 0.8) / 2)
    assert res.tool_calls == 2.0  # (3 + 3 + 0) / 3
    assert res.searches_before_answer == 2.5  # (3 + 2) / 2 answered traces
    assert res.duplicate_query_rate == pytest.approx((1 / 3 + 0) / 2)  # C has no query
    assert res.duplicate_visit_rate == 0.5  # only B visits
    assert res.n_traces == 3 and res.n_answered == 2
    assert res.summary.loc["accuracy", "n"] == 2


def test_scalar_functions_match_rich_result(corpus):
    steps, traces = corpus
    assert accuracy_score(traces) == 0.5
    assert duplicate_query_rate(steps) == pytest.approx(1 / 6)
    assert duplicate_visit_rate(steps) == 0.5


def test_undefined_values_are_nan_with_warning():
    steps, traces = tables([make_trace([("r", "G"), ("a",)])])
    with pytest.warns(UndefinedMetricWarning, match="correctness"):
        assert np.isnan(accuracy_score(traces))
    with pytest.warns(UndefinedMetricWarning, match="query"):
        assert np.isnan(duplicate_query_rate(steps))
    with pytest.warns(UndefinedMetricWarning, match="visit"):
        assert np.isnan(duplicate_visit_rate(steps))


def test_accuracy_ci(corpus):
    steps, traces = corpus
    res = outcome_metrics(steps, traces, n_boot=400, seed=0)
    assert 0.0 <= res.accuracy_ci[0] <= 0.5 <= res.accuracy_ci[1] <= 1.0


def _brute_pass_at_k(n: int, c: int, k: int) -> float:
    # Share of k-subsets of the n runs that contain a correct run (independent reference).
    runs = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(runs[i] for i in s) for s in subsets) / len(subsets)


def test_pass_at_k_hand_values():
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)  # Pass@1 = c / n
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(3, 1, 3) == 1.0 and pass_at_k(3, 0, 3) == 0.0  # n = k: any correct
    assert pass_at_k(np.array([4, 4]), np.array([0, 4]), 2).tolist() == [0.0, 1.0]


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_equals_subset_enumeration(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(_brute_pass_at_k(n, c, k))


def test_pass_at_k_is_stable_for_thousands_of_runs():
    # Spec section 6: one correct run among n, k = n/2: 1 - C(n-1, k)/C(n, k) = 1 - (n-k)/n = 1/2.
    # The ratio of binomials overflowed: C(1040, 520) is inf in floats (NaN = inf/inf), and
    # C(1030, 515) inf against a finite C(1029, 515) gave 1.0.
    assert pass_at_k(1040, 1, 520) == 0.5
    assert pass_at_k(1030, 1, 515) == 0.5
    # Against exact integer binomials (Python's math.comb, an independent reference).
    for n, c, k in ((3000, 40, 100), (5000, 1, 2500), (2000, 1999, 3), (1200, 0, 600)):
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-12, abs=1e-15)


def test_pass_at_k_undefined_and_bad_input():
    with pytest.warns(UndefinedMetricWarning, match="fewer than 3 runs"):
        assert math.isnan(pass_at_k(2, 1, 3))
    with pytest.raises(UserInputError, match="k must be"):
        pass_at_k(3, 1, 0)
    with pytest.raises(UserInputError, match="n_correct"):
        pass_at_k(3, 4, 1)


def test_pass_at_k_score_groups_runs_by_agent_and_question():
    t = pd.DataFrame({"agent": ["x"] * 5 + ["y"] * 2,
                      "question_id": ["q1", "q1", "q1", "q2", "q2", "q1", "q1"],
                      "correct": [True, False, False, False, False, True, None]})
    # k = 1: x/q1 1/3, x/q2 0, y/q1 1/1 (unknown run left out) -> mean 4/9.
    assert pass_at_k_score(t, k=1) == pytest.approx(4 / 9)
    # k = 2: x/q1 1 - C(2,2)/C(3,2) = 2/3, x/q2 0; y/q1 has 1 known run < 2: left out -> 1/3.
    with pytest.warns(UndefinedMetricWarning, match="fewer than 2 runs"):
        assert pass_at_k_score(t, k=2) == pytest.approx(1 / 3)


def test_shared_data_outcomes(shared_tables):
    steps, traces = shared_tables
    with pytest.warns(UndefinedMetricWarning, match="visit"):  # the release has no visit tool
        res = outcome_metrics(steps, traces, n_boot=0)
    assert np.isnan(res.duplicate_visit_rate)
    # 85 of 190 traces judged correct in the release; 529 tool calls over 190 traces.
    assert res.accuracy == pytest.approx(85 / 190) and res.n_known == 190
    assert res.tool_calls == pytest.approx(529 / 190)
    assert 0.0 <= res.duplicate_query_rate < 1.0
    assert res.n_answered == 188
