"""Turn assignment (spec section 1) and the trace table's outcome columns."""

from seekbench.traces import build_tables


def _trace(kinds, **over):
    steps = []
    for i, k in enumerate(kinds):
        st = {"index": i, "kind": k}
        if k == "search":
            st["query"] = f"q{i}"
        steps.append(st)
    tr = {"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": steps}
    tr.update(over)
    return tr


def test_turns():
    # r(0) s(1) o(1) r(1) s(2) o(2) r(2) a(2): a call and its observation share a turn,
    # reasoning before the first observation is turn 0, later reasoning follows its observation.
    steps, traces = build_tables([_trace(["reasoning", "search", "search_result", "reasoning", "search",
                                          "search_result", "reasoning", "answer"], final_answer="x")])
    assert steps["turn"].tolist() == [0, 1, 1, 1, 2, 2, 2, 2]
    assert traces.loc[0, "answer_turn"] == 2 and traces.loc[0, "last_turn"] == 2
    assert bool(traces.loc[0, "answered"])


def test_reasoning_between_call_and_observation_has_the_calls_turn():
    # s(1) r o a: spec section 1 (clarified): every step other than a call has the turn of
    # the last call before it, so the reasoning after the call is turn 1 too.
    steps, _ = build_tables([_trace(["search", "reasoning", "search_result", "answer"])])
    assert steps["turn"].tolist() == [1, 1, 1, 1]


def test_correct_from_em_when_not_judged():
    # No judged correctness: exact match decides, and the source says so.
    _, t = build_tables([_trace(["answer"], final_answer="The Thames", gold_answers=["thames"])])
    assert t.loc[0, "correct"] is True and t.loc[0, "correct_source"] == "em"
    _, t = build_tables([_trace(["answer"], final_answer="Thames", gold_answers=["Severn"],
                                correct={"value": True, "source": "judge"})])
    assert t.loc[0, "correct"] is True and t.loc[0, "correct_source"] == "judge"
    assert t.loc[0, "em"] == 0.0


def test_unanswered_trace_has_unknown_correctness():
    _, t = build_tables([_trace(["search", "search_result"], gold_answers=["x"])])
    assert t.loc[0, "correct"] is None and not t.loc[0, "answered"]
