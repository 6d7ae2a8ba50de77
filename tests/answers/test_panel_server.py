"""Answer-judge panels against the real local OpenAI-compatible server (HTTP, official client, nothing patched).

Judges A and B disagree on a known set; the tiebreaker C is asked only then and decides.
"""

from __future__ import annotations

import collections
import math

import pytest
from answers_support import candidate_of, is_false_premise_request, make_trace

from seekbench.answers import judge_answers
from seekbench.testing import OpenAIServer, PolicyError

# candidate -> reply of judge A, B, C (None: C must not be asked). "ans6" is a false-premise question and
# B hedges twice (the first reply and the one repair allowed by answer-local), so B's vote is unscored.
SCRIPT = {
    "ans1": ("Yes.", "yes, because both name the same river", None),
    "ans2": ("No", "No.", None),
    "ans3": ("Yes", "No", "Yes"),
    "ans4": ("No", "Yes", "No."),
    "ans5": ("Yes", "No", "Correct"),
    "ans6": ("Yes", "Maybe.", "No"),
}
JUDGE_INDEX = {"model-A": 0, "model-B": 1, "model-C": 2}


def policy(request):
    reply = SCRIPT[candidate_of(request)][JUDGE_INDEX[request["model"]]]
    if reply is None:
        raise PolicyError("the tiebreaker was asked although A and B agreed", status=400)
    return reply


def traces():
    out = [make_trace(f"t{i}", f"ans{i}") for i in range(1, 7)]
    out[5]["metadata"] = {"false_premise": True}
    return out


def chat(srv):
    return [r for r in srv.requests if r["path"] == "/v1/chat/completions"]


def test_two_judges_disagree_and_the_tiebreaker_decides(tmp_path, answer_cfg):
    seen = []

    def recording(request):
        seen.append(request)
        return policy(request)

    A, B, C = answer_cfg("A"), answer_cfg("B"), answer_cfg("C")
    with OpenAIServer(policy=recording) as srv:
        res = judge_answers(traces(), [A, B], tiebreak=C, cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        requests = chat(srv)
    # Hand derivation. Majority needs 2 of the panel of 3.
    # t1 A yes, B yes -> True (C not asked); t2 no, no -> False; t3 yes/no, C yes -> True;
    # t4 no/yes, C no -> False; t5 yes/no, C "Correct" -> True; t6 yes/unscored, C no -> no majority.
    got = {r.trace_id: r.value for r in res.decisions.itertuples()}
    assert got == {"t1": True, "t2": False, "t3": True, "t4": False, "t5": True, "t6": None}
    votes = {r.trace_id: (r.vote_A, r.vote_B, r.vote_C) for r in res.decisions.itertuples()}
    nan = votes["t1"][2]
    assert nan is None or (isinstance(nan, float) and math.isnan(nan))
    assert [votes[t][:2] for t in ("t1", "t2", "t3", "t4", "t5", "t6")] == [
        (True, True), (False, False), (True, False), (False, True), (True, False), (True, None)]
    assert [votes[t][2] for t in ("t3", "t4", "t5", "t6")] == [True, False, True, False]
    # Disagreement: compared = t1..t5 (both scored), disagree = t3, t4, t5 -> 3/5.
    assert (res.n_compared, res.n_disagree, res.disagreement_rate) == (5, 3, 0.6)
    assert res.n_tiebreak == 4
    assert res.counts["decided"] == 5 and res.counts["unscored"] == 1 and res.counts["pending"] == 0
    # Requests: A 6, B 6 + 1 repair (t6), C 4 (only the four unsettled answers).
    per_model = collections.Counter(r["model"] for r in requests)
    assert per_model == {"model-A": 6, "model-B": 7, "model-C": 4}
    assert res.requests == 17
    # The false-premise question, and only it, is graded with the false-premise prompt.
    assert {candidate_of(r) for r in seen if is_false_premise_request(r)} == {"ans6"}
    # Decisions written into the traces: source panel, every vote kept.
    by_id = {t["trace_id"]: t for t in res.traces}
    c3 = by_id["t3"]["correct"]
    assert c3["value"] is True and c3["source"] == "panel"
    assert [(v["judge"], v["value"]) for v in c3["detail"]["votes"]] == [("A", True), ("B", False), ("C", True)]
    assert c3["detail"]["disagreement"] is True and c3["detail"]["tiebreak_asked"] is True
    assert c3["detail"]["votes"][0]["prompt_version"] == "answer_v1"
    c1 = by_id["t1"]["correct"]
    assert len(c1["detail"]["votes"]) == 2 and c1["detail"]["tiebreak_asked"] is False
    c6 = by_id["t6"]["correct"]
    assert c6["value"] is None and "no majority" in c6["detail"]["unscored_reason"]
    assert c6["detail"]["votes"][1]["status"] == "unscored" and c6["detail"]["votes"][1]["repairs"] == 1
    assert c6["detail"]["votes"][0]["prompt_version"] == "answer_false_premise_v1"
    # A re-run is free: every completion comes from the cache, with the same decisions.
    with OpenAIServer(policy=policy) as srv:
        again = judge_answers(traces(), [A, B], tiebreak=C, cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        assert chat(srv) == []
    assert again.requests == 0 and list(again.decisions["value"]) == list(res.decisions["value"])


def test_single_llm_judge_and_a_failed_request_left_pending(tmp_path, answer_cfg):
    def pol(request):
        if candidate_of(request) == "boom":
            raise PolicyError("rejected", status=400)
        return "Yes"

    ts = [make_trace("a", "fine"), make_trace("b", "boom"), make_trace("c", None)]
    with OpenAIServer(policy=pol) as srv:
        res = judge_answers(ts, [answer_cfg("A")], cache=tmp_path / "c.sqlite", base_url=srv.base_url)
    by_id = {t["trace_id"]: t for t in res.traces}
    assert by_id["a"]["correct"]["value"] is True and by_id["a"]["correct"]["source"] == "judge"
    # the request failed: written undecided, pending, with the reason, for a re-run (issue 24)
    assert by_id["b"]["correct"]["value"] is None and by_id["b"]["correct"]["detail"]["pending"] is True
    assert "request_failed: HTTP 400: rejected" in by_id["b"]["correct"]["detail"]["unscored_reason"]
    assert by_id["c"]["correct"]["value"] is None  # nothing to judge: unscored, with the reason
    assert "no answer" in by_id["c"]["correct"]["detail"]["unscored_reason"]
    assert res.counts["pending"] == 1 and res.counts["decided"] == 1 and res.counts["unscored"] == 1


def test_budget_stops_before_any_paid_request(tmp_path, answer_cfg):
    paid = answer_cfg("A", price_input_per_mtok=1.0, price_output_per_mtok=1.0)
    with OpenAIServer(policy=lambda r: "Yes") as srv:
        res = judge_answers([make_trace("a", "x")], [paid], cache=tmp_path / "c.sqlite", base_url=srv.base_url,
                            budget_usd=0.0)
        assert chat(srv) == []
    assert res.stopped_by_budget and res.counts["pending"] == 1 and res.traces[0]["correct"]["value"] is None
    assert "not sent: the budget would be exceeded" in res.traces[0]["correct"]["detail"]["unscored_reason"]


def test_a_step_label_judge_is_refused_as_answer_judge():
    from seekbench import UserInputError

    with pytest.raises(UserInputError, match="kind = \"answer\""):
        judge_answers([make_trace("a", "x")], ["local"])
    with pytest.raises(UserInputError, match="--tiebreak needs at least two"):
        judge_answers([make_trace("a", "x")], ["em"], tiebreak="em")
