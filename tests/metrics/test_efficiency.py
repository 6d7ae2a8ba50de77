"""Pass@1 / Pass@k over repeated runs per agent, and the efficiency table (spec section 6)."""

import math

import pandas as pd
import pytest

from seekbench.data import sample_traces_path
from seekbench.metrics._efficiency import (
    efficiency_table,
    pass_at_k_by_agent,
    run_counts,
)
from seekbench.traces import build_tables, read_traces


def test_pass_at_k_hand_computed():
    # agent a: q1 3 runs (2 correct), q2 3 runs (0 correct); agent b: q1 2 runs (1 correct, 1 unknown run left out)
    t = pd.DataFrame({"agent": ["a"] * 6 + ["b"] * 3, "question_id": ["q1"] * 3 + ["q2"] * 3 + ["q1"] * 3,
                      "correct": [True, True, False, False, False, False, True, False, None]})
    r = pass_at_k_by_agent(t, ks=(1, 2, 3)).set_index("agent")
    # a: Pass@1 = (2/3 + 0)/2; Pass@2 = (1 - C(1,2)/C(3,2) + 0)/2 = 1/2; Pass@3 = (1 + 0)/2
    assert r.loc["a", "pass@1"] == pytest.approx(1 / 3)
    assert r.loc["a", "pass@2"] == pytest.approx(0.5) and r.loc["a", "pass@3"] == pytest.approx(0.5)
    # b: 2 known runs, 1 correct: Pass@1 = 1/2, Pass@2 = 1 - C(1,2)/C(2,2) = 1; Pass@3 undefined
    assert r.loc["b", "pass@1"] == 0.5 and r.loc["b", "pass@2"] == 1.0 and math.isnan(r.loc["b", "pass@3"])
    assert r.loc["b", "n_pass@3"] == 0 and r.loc["a", "runs_max"] == 3
    assert run_counts(t)["runs"].tolist() == [3, 3, 2]


def test_efficiency_table_on_the_sample():
    steps, traces = build_tables(read_traces(sample_traces_path()).traces)
    e = efficiency_table(steps, traces).set_index("agent")
    # one run per question: Pass@1 is the accuracy, and no k > 1 column is made
    assert list(e.columns[-2:]) == ["pass@1", "n_pass@1"]
    assert (e["pass@1"] == e["accuracy"]).all()
    assert e.loc["looper", "duplicate_query_rate"] > 0 and e.loc["careful-planner", "duplicate_query_rate"] == 0
    assert e.loc["looper", "tool_calls"] == pytest.approx(56 / 12)
