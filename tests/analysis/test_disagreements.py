"""disagreement_examples: which steps are shown, in which order, with what text and explanation."""

from __future__ import annotations

from seekbench.analysis import disagreement_examples
from seekbench.labels import AnnotationSet


def _rec(tid, step, value, rater, explanation=None):
    prov = {"kind": "llm", "explanation": explanation} if explanation else {}
    return {"trace_id": tid, "step": step, "field": "grounding", "value": value, "unscored_reason": None,
            "rater": rater, "provenance": prov}


def _trace(tid, n):
    return {"trace_id": tid, "agent": "x", "steps": [{"index": i, "kind": "reasoning", "text": f"{tid} step {i} " * 2}
                                                     for i in range(n)]}


TRACES = [_trace("t1", 3), _trace("t2", 2), _trace("t3", 1)]


def test_explained_first_then_one_per_trace_then_trace_order():
    ref = AnnotationSet.from_records(
        [_rec(t, s, "Grounded", "human") for t, s in [("t1", 0), ("t1", 1), ("t1", 2), ("t2", 0), ("t2", 1), ("t3", 0)]],
        name="human",
    )
    # The judge differs on t1 steps 0, 1, 2, on t2 step 1 and on t3 step 0 (with an explanation); agrees on t2 step 0.
    judge = AnnotationSet.from_records(
        [
            _rec("t1", 0, "NotGrounded", "judge"),
            _rec("t1", 1, "NotGrounded", "judge"),
            _rec("t1", 2, "NotGrounded", "judge"),
            _rec("t2", 0, "Grounded", "judge"),
            _rec("t2", 1, "NotGrounded", "judge"),
            _rec("t3", 0, "NotGrounded", "judge", explanation="the step cites no document"),
        ],
        name="judge",
    )
    ex = disagreement_examples(ref, [judge], TRACES, per_field=3)
    # 5 disagreements, 3 shown: the explained one (t3/0), then the first of each other trace in trace order
    # (t1/0, t2/1); t1's second and third wait behind them.
    assert list(zip(ex["trace_id"], ex["step"], strict=True)) == [("t3", 0), ("t1", 0), ("t2", 1)]
    assert ex["explanation"].tolist()[0] == "the step cites no document" and ex["explanation"][1:].isna().all()
    assert (ex["reference"] == "Grounded").all() and (ex["judge"] == "NotGrounded").all()
    assert set(ex["step_kind"]) == {"reasoning"} and ex["text"][0] == "t3 step 0 t3 step 0"


def test_long_text_is_clipped_and_agreement_gives_no_rows():
    long = [{"trace_id": "t", "agent": "x", "steps": [{"index": 0, "kind": "reasoning", "text": "word " * 200}]}]
    ref = AnnotationSet.from_records([_rec("t", 0, "Grounded", "human")], name="human")
    judge = AnnotationSet.from_records([_rec("t", 0, "NotGrounded", "judge")], name="judge")
    text = disagreement_examples(ref, [judge], long)["text"][0]
    assert len(text) == 300 and text.endswith("\u2026")
    same = AnnotationSet.from_records([_rec("t", 0, "Grounded", "judge")], name="judge")
    assert disagreement_examples(ref, [same], long).empty
