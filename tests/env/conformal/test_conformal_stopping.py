"""The stopping rule c_hat - q_hat >= delta on episodes: completeness at stop, steps saved."""

from __future__ import annotations

import pytest
from _conformal_helpers import env_trace

from seekbench import SeekbenchWarning, UserInputError
from seekbench.env.conformal import evaluate_stopping, summarize_stopping
from seekbench.traces import validate_trace


@pytest.mark.parametrize("metadata", [False, True])
def test_stop_before_the_first_step_whose_estimate_meets_the_rule(metadata):
    # c_1..c_5 = 0.1, 0.3, 0.5, 0.6, 0.8; c_hat_t estimates c_{t-1}. q_hat = 0.2, delta = 0.5: the rule needs
    # c_hat >= 0.7, first met at t = 3 (0.75) -> stop before step 3: completeness c_2 = 0.3, steps 3..5 saved.
    tr = env_trace("t", "a", "deduplicated", "d", [0.1, 0.3, 0.5, 0.6, 0.8], [0.2, 0.69, 0.75, 0.9, 0.95],
                   metadata=metadata)
    validate_trace(tr)
    ep = evaluate_stopping([tr], 0.2, delta=0.5).iloc[0]
    assert ep["stopped"] and ep["stop_step"] == 3 and ep["n_steps"] == 5
    assert ep["completeness_at_stop"] == 0.3 and ep["final_completeness"] == 0.8
    assert ep["steps_saved"] == 3 and ep["completeness_lost"] == pytest.approx(0.5)
    assert ep["n_decisions"] == 5


@pytest.mark.parametrize("metadata", [False, True])
def test_never_stopping_runs_to_the_end_and_missing_estimates_are_not_decisions(metadata):
    tr = env_trace("t", "a", "oracle", "d", [0.2, 0.4, 0.6], [0.5, None, 0.69], metadata=metadata)
    ep = evaluate_stopping([tr], 0.2, delta=0.5).iloc[0]
    assert not ep["stopped"] and ep["stop_step"] == 4 and ep["steps_saved"] == 0 and ep["n_steps"] == 3
    assert ep["completeness_at_stop"] == 0.6 and ep["completeness_lost"] == 0 and ep["n_decisions"] == 2


def test_metadata_places_a_decision_after_a_missing_estimate_exactly():
    # t = 2 has no estimate; t = 3 meets the rule -> stop before step 3 at c_2 = 0.4, one step saved.
    tr = env_trace("t", "a", "oracle", "d", [0.2, 0.4, 0.6], [0.5, None, 0.9], metadata=True)
    ep = evaluate_stopping([tr], 0.2, delta=0.5).iloc[0]
    assert ep["stop_step"] == 3 and ep["completeness_at_stop"] == 0.4 and ep["steps_saved"] == 1


def test_per_agent_q_hat_and_summary():
    path, est = [0.2, 0.5, 0.7], [0.5, 0.9, 0.9]
    trs = [env_trace("t1", "a", "deduplicated", "d1", path, est),               # a (q 0.3): stop at t=2, c_1 0.2
           env_trace("t2", "a", "deduplicated", "d2", [0.6, 0.7, 0.9], est),    # stop at t=2, c_1 0.6 >= delta
           env_trace("t3", "b", "deduplicated", "d1", path, est),               # b (q 0.5): never
           env_trace("t4", "c", "deduplicated", "d1", path, est)]               # c: no q_hat
    with pytest.warns(SeekbenchWarning, match="no q_hat for agent"):
        ep = evaluate_stopping(trs, {"a": 0.3, "b": 0.5}, delta=0.5)
    assert list(ep["trace_id"]) == ["t1", "t2", "t3"]
    s = summarize_stopping(ep).set_index("agent")
    assert s.loc["a", "stopped_share"] == 1.0 and s.loc["a", "steps_saved"] == 2.0
    assert s.loc["a", "completeness_at_stop"] == pytest.approx(0.4)
    assert s.loc["a", "stop_valid"] == 0.5  # t1 stopped at 0.2 < delta, t2 at 0.6 >= delta
    assert s.loc["b", "stopped_share"] == 0.0 and s.loc["b", "steps_saved"] == 0.0
    assert s.loc["b", "final_completeness"] == pytest.approx(0.7)


def test_traces_without_completeness_are_skipped_and_bad_delta_refused():
    qa = {"schema_version": "1.0", "trace_id": "qa", "agent": "a", "question": "q", "steps": []}
    with pytest.warns(SeekbenchWarning, match="no per-step completeness"):
        ep = evaluate_stopping([qa], 0.1)
    assert ep.empty and summarize_stopping(ep).empty
    with pytest.raises(UserInputError, match="delta"):
        evaluate_stopping([qa], 0.1, delta=1.5)
