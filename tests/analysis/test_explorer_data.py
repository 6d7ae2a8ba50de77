"""The trace explorer's data: turn and E after each step, label chips, disagreements, index rows, agent rates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from seekbench.analysis import explorer_data
from seekbench.labels import AnnotationSet
from seekbench.metrics import FLAGS
from seekbench.traces import build_tables

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "metrics"))
from _helpers import make_trace  # noqa: E402


def _trace():
    # steps: 0 reasoning (turn 0, E 0); 1 search (turn 1; E before its observation: 0); 2 result (Clear,
    # Insufficient: E = 1); 3 reasoning (turn 1, E 1); 4 search (turn 2, E still 1); 5 result (Clear, Sufficient:
    # E = 2); 6 answer (turn 2, E 2).
    t = make_trace([("r", "N", "PF"), ("s", "who"), ("o", "C", "I"), ("r", "G", "SA"), ("s", "where"),
                    ("o", "C", "S"), ("a",)], trace_id="t1", agent="ag<1>", correct=True, final_answer="x",
                   gold=["x"])
    t["question"] = "Where was the clockmaker born?"
    t["steps"][2]["documents"] = [{"rank": 1, "title": "Orlesk", "text": "a bell founder's town"}]
    t["inline_labels"] = {"kind": "human", "rater": "human-1"}
    return t


def _judge(records):
    return AnnotationSet.from_records(
        [{"trace_id": "t1", "step": s, "field": f, "value": v, "unscored_reason": None, "rater": "judge-x",
          "provenance": p} for s, f, v, p in records], name="judge-x")


@pytest.fixture(scope="module")
def data():
    t = _trace()
    steps, traces = build_tables([t])
    judge = _judge([(0, "grounding", "NotGrounded", {"kind": "judge"}),  # agrees
                    (3, "grounding", "NotGrounded", {"kind": "judge", "explanation": "cites no document"}),
                    (4, "search_type", "RepeatQuery", {"kind": "rule", "rule": "repeat", "repeat_of": 1})])
    reference = AnnotationSet.from_traces([t])
    return explorer_data([t], steps, traces, reference=reference, raters=[judge], audit_options={})


def test_steps_have_turn_E_after_and_chips(data):
    (detail,) = list(data.details())
    got = [(s["i"], s["kind"], s["turn"], s["E"]) for s in detail["steps"]]
    assert got == [(0, "reasoning", 0, 0), (1, "search", 1, 0), (2, "search_result", 1, 1), (3, "reasoning", 1, 1),
                   (4, "search", 2, 1), (5, "search_result", 2, 2), (6, "answer", 2, 2)]
    chips0 = detail["steps"][0]["chips"]
    # Each chip names field, value and rater; the inline labels are the metric labels and the reference, shown once.
    assert ["grounding", "NotGrounded", "human-1", "labels"] in chips0
    assert ["grounding", "NotGrounded", "judge-x", "judge"] in chips0
    assert sum(c[:3] == ["grounding", "NotGrounded", "human-1"] for c in chips0) == 1
    assert detail["steps"][2]["docs"] == [{"rank": 1, "title": "Orlesk", "text": "a bell founder's town"}]


def test_disagreements_side_by_side_with_explanations(data):
    (detail,) = list(data.details())
    dis = {(d["step"], d["field"]): d for d in detail["dis"]}
    assert set(dis) == {(3, "grounding")}  # step 4 has no reference search_type label: not compared
    d = dis[(3, "grounding")]
    assert (d["reference"], d["judge"], d["rater"], d["explanation"]) == ("Grounded", "NotGrounded", "judge-x",
                                                                          "cites no document")
    assert d["kind"] == "reasoning"
    assert data.index["dis"] == [1]
    rows = {(r["rater"], r["field"], r["step_kind"]): r for r in data.meta["agreement"]["rows"]}
    r = rows[("judge-x", "grounding", "reasoning")]
    assert (r["n_compared"], r["n_disagree"], r["raw_agreement"], r["traces"]) == (2, 1, 0.5, [0])
    # No reference search_type label: the rule-derived RepeatQuery is compared nowhere, counted nowhere.
    assert not any(k[0] == "rule-derived" for k in rows)
    assert rows[("judge-x", "reasoning_type", "reasoning")]["kappa"] is None  # n = 0: no coefficient, not 0 or 1


def test_rule_provenance_is_an_explanation():
    from seekbench.analysis._explorer_agreement import _explanation

    assert _explanation({"kind": "rule", "rule": "repeat", "repeat_of": 1}) == "rule repeat (repeats step 1)"
    assert _explanation({"kind": "judge"}, "abstained: null") == "abstained: null"
    assert _explanation({"kind": "judge"}) is None


def test_index_row(data):
    ix = data.index
    assert ix["id"] == ["t1"] and data.meta["agents"] == ["ag<1>"]
    # u = 1/2 with 2 labeled reasoning steps (< 3): not ungrounded; E = 2 at the answer, recovered: no flag.
    assert ix["correct"] == [1] and ix["E"] == [2] and ix["flags"] == [0] and ix["score"] == [0.0]
    assert data.meta["flags"] == list(FLAGS)
    assert "(0.75)" in data.meta["flag_definitions"]["ungrounded"]


def test_docstring_examples_run():
    import doctest

    import seekbench.analysis._explorer_data as mod

    result = doctest.testmod(mod)
    assert result.attempted >= 4 and result.failed == 0


def test_index_and_details_agree_with_the_audit_on_shared_data(shared_traces, shared_tables):
    from seekbench.metrics import trace_audit

    steps, traces = shared_tables
    audit = trace_audit(steps, traces).set_index("trace_id")
    data = explorer_data(shared_traces, steps, traces)
    labels = steps.set_index(["trace_id", "step"])[["reasoning_type", "grounding", "search_type", "clarity",
                                                    "sufficiency"]]
    n_labels = labels.notna().sum(axis=1)
    for k, detail in enumerate(data.details()):
        row = audit.loc[detail["id"]]
        decoded = [f for b, f in enumerate(data.meta["flags"]) if data.index["flags"][k] >> b & 1]
        assert ",".join(decoded) == row["flags"] == ",".join(detail["flags"])
        e = row["evidence_at_answer"]
        assert data.index["E"][k] == (-1 if e != e else int(e))
        assert len(detail["steps"]) == row["n_steps"]
        for s in detail["steps"]:  # one chip per label the metrics used (inline labels: one rater)
            assert len(s["chips"]) == n_labels.loc[(detail["id"], s["i"])]


def test_agent_rates_in_meta(data):
    (r,) = data.meta["agent_rates"]
    # One trace, correct, no flag.
    assert r == {"agent": "ag<1>", "n": 1, "correct": 1.0, "flagged": 0.0, "mean_score": 0.0,
                 "flags": [0.0] * len(FLAGS), "e_unknown": 0}
