"""Answer judging offline: the EM judge on the embedded sample and on the shared SeekBench data."""

from __future__ import annotations

from answers_support import make_trace

from seekbench.answers import judge_answers, majority_vote
from seekbench.data import sample_traces_path
from seekbench.traces import build_tables, exact_match_score, read_traces


def test_majority_rule():
    # panel of 3 (A, B + tiebreaker): 2 votes needed
    assert majority_vote([True, False, True], panel_size=3) is True
    assert majority_vote([True, None, False], panel_size=3) is None
    assert majority_vote([False, False], panel_size=3) is False
    # two judges, no tiebreaker: both must agree
    assert majority_vote([True, False], panel_size=2) is None
    assert majority_vote([True, True], panel_size=2) is True
    assert majority_vote([None], panel_size=1) is None


def test_em_judge_on_the_sample_keeps_human_decisions_by_default():
    traces = read_traces(sample_traces_path()).traces
    res = judge_answers(traces)  # --judge em, overwrite="machine"
    assert res.counts["kept"] == 48 and res.counts["written"] == 0
    assert [t["correct"] for t in res.traces] == [t["correct"] for t in traces]
    assert res.traces is not traces and traces[0]["correct"]["source"] == "human"


def test_em_judge_on_the_sample_with_overwrite_all():
    traces = read_traces(sample_traces_path()).traces
    res = judge_answers(traces, ["em"], overwrite="all")
    for before, after in zip(traces, res.traces):
        c = after["correct"]
        assert c["source"] == "em"
        if before["final_answer"] is None:
            assert c["value"] is None and c["detail"]["unscored_reason"]
        else:
            assert c["value"] is bool(exact_match_score(before["final_answer"], before["gold_answers"]))
        assert c["detail"]["previous"] == {"value": before["correct"]["value"], "source": "human"}
    # after EM replaced every decision, the tables' correctness is exactly EM on the answered traces
    _, t = build_tables(traces)
    _, t2 = build_tables(res.traces)
    answered = t["final_answer"].notna()
    assert list(t2.loc[answered, "correct"]) == [bool(v) for v in t.loc[answered, "em"]]


def test_overwrite_missing_only_fills_undecided():
    ts = [make_trace("a", "gold"), make_trace("b", "gold", correct={"value": False, "source": "judge"}),
          make_trace("c", "gold", correct={"value": None, "source": "judge"})]
    res = judge_answers(ts, overwrite="missing")
    got = {t["trace_id"]: t["correct"] for t in res.traces}
    assert got["a"]["value"] is True and got["a"]["source"] == "em"
    assert got["b"] == {"value": False, "source": "judge"}
    assert got["c"]["value"] is True
    res = judge_answers(ts)  # machine: the judge decision is replaced, and kept as previous
    b = next(t for t in res.traces if t["trace_id"] == "b")["correct"]
    assert b["value"] is True and b["detail"]["previous"] == {"value": False, "source": "judge"}


def test_evidence_set_answers_are_judged_too():
    md = {"evidence_set": {"evidence": ["e1", "e2"], "answers": {"1": "nope", "2": "gold"},
                           "no_retrieval_answer": "Gold", "sources": ["s"]}}
    res = judge_answers([make_trace("a", "gold", metadata=md)])
    es = res.traces[0]["metadata"]["evidence_set"]
    assert es["judgments"] == {"1": False, "2": True}
    assert es["no_retrieval_correct"] is True
    assert es["judgment_detail"]["k2"]["source"] == "em"
    res = judge_answers([make_trace("a", "gold", metadata=md)], evidence_set=False)
    assert "judgments" not in res.traces[0]["metadata"]["evidence_set"]


def test_shared_data_36_answers_fail_em_but_were_judged_correct(shared_traces):
    """The issue's number: in the 190 shared SeekBench traces, 36 answers fail EM but are is_correct."""
    _, t = build_tables(shared_traces)
    assert set(t["correct_source"]) == {"source_data"}
    fail_em_judged_right = t[(t["em"] == 0) & (t["correct"] == True)]
    assert len(fail_em_judged_right) == 36
    # the EM judge, asked to replace the source data's decisions, turns exactly those 36 into False
    res = judge_answers(shared_traces, ["em"], overwrite="all")
    flipped = [a["trace_id"] for a, b in zip(res.traces, shared_traces)
               if a["correct"]["value"] is False and b["correct"]["value"] is True]
    assert sorted(flipped) == sorted(fail_em_judged_right["trace_id"])
