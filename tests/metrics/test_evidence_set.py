"""InfoDeepSeek evidence-set metrics (spec section 6) against hand-computed values.

Five questions, n = 3, b = 1 (J = judgment of the answer from the top-k evidence; None = pending):

    q   agent correct n_q |S| J                      no-retrieval attributes
    q1  x     True    2   2   {1: F, 2: T}           True         multi_hop, domain [a, b]
    q2  x     False   1   3   {1: F}                 True         not multi_hop, domain [b]
    q3  x     True    3   1   {1: None, 2: T, 3: T}  False        multi_hop, domain [a]
    q4  y     None    0   2   {}                     None         (none)
    q5  y     False   2   ?   {1: F, 2: None}        True         not multi_hop

ACC = 2/4 (q4 pending). IA@1: q1 F, q2 F, q3 pending, q4 F (no evidence), q5 F -> 0/4.
IA@2: q1 T, q2 reuses J(1) F, q3 T, q4 F, q5 pending -> 2/4. IA@3: q1 reuses J(2) T, q2 F, q3 T, q4 F,
q5 reuses J(2) pending -> 2/4. EEU = 0.5 / 0.5 = 1 at k = 2.
IC: q1 2/2; q2 (3+1)/3; q3 3/1 (J(2) correct, the pending J(1) does not matter); q4 (3+1)/2;
q5 no source set -> out. IC = (1 + 4/3 + 3 + 2) / 4 = 22/12.
Interference: base q1, q2, q5 (correct without retrieval); wrong with retrieval q2, q5 -> 2/3.
"""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest

from seekbench import UndefinedMetricWarning, UserInputError
from seekbench.answers import evidence_set_table
from seekbench.metrics._evidence_set import (
    attribute_groups,
    effective_evidence_utilization,
    evidence_set_metrics,
    evidence_set_summary,
    information_accuracy,
    information_compactness,
    interference_rate,
    per_question,
)

ROWS = [
    ("q1", "x", True, 2, ["s1", "s2"], {"1": False, "2": True}, True, {"multi_hop": True, "domain": ["a", "b"]}),
    ("q2", "x", False, 1, ["s1", "s2", "s3"], {"1": False}, True, {"multi_hop": False, "domain": ["b"]}),
    ("q3", "x", True, 3, ["s1"], {"1": None, "2": True, "3": True}, False, {"multi_hop": True, "domain": ["a"]}),
    ("q4", "y", None, 0, ["s1", "s2"], {}, None, {}),
    ("q5", "y", False, 2, None, {"k1": False, "k2": -1}, True, {"multi_hop": False}),
]


def trace(q, agent, correct, nq, sources, judgments, nr, attrs):
    es = {"evidence": [{"url": f"u{i}", "content": "c"} for i in range(nq)], "judgments": judgments,
          "no_retrieval_correct": nr, "attributes": attrs}
    if sources is not None:
        es["sources"] = sources
    t = {"schema_version": "1.0", "trace_id": q, "agent": agent, "question_id": q, "question": "?", "steps": [],
         "metadata": {"evidence_set": es}}
    if correct is not None:
        t["correct"] = {"value": correct, "source": "judge"}
    return t


@pytest.fixture
def traces():
    return [trace(*r) for r in ROWS]


@pytest.fixture
def table(traces):
    return evidence_set_table(traces)


def quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*a, **k)


def test_hand_computed_values(table):
    r = quiet(evidence_set_metrics, table, n=3, b=1)
    assert r.accuracy == 0.5
    assert list(r.ia) == [0.0, 0.5, 0.5] and list(r.ia.index) == [1, 2, 3]
    assert r.eeu == 1.0 and r.eeu_k == 2
    assert r.ic == pytest.approx((1 + 4 / 3 + 3 + 2) / 4)
    assert r.interference_rate == pytest.approx(2 / 3)
    c = r.counts
    assert (c["n_acc"], c["pending_acc"]) == (4, 1)
    assert c["n_ia"] == {1: 4, 2: 4, 3: 4} and c["pending_ia"] == {1: 1, 2: 1, 3: 1}
    assert (c["n_ic"], c["pending_ic"], c["no_sources_ic"]) == (4, 0, 1)
    assert (c["n_interference"], c["pending_interference"]) == (3, 0)
    assert c["empty_evidence"] == 1
    s = r.summary
    assert s.loc["IA@2", "estimate"] == 0.5 and s.loc["IA@2", "n"] == 4 and s.loc["IA@2", "pending"] == 1


def test_traces_and_table_give_the_same_result(traces, table):
    a, b = quiet(evidence_set_metrics, traces, n=3), quiet(evidence_set_metrics, table, n=3)
    assert a.to_dict() == b.to_dict()


def test_k_beyond_the_evidence_list_reuses_the_whole_set(table):
    pq = quiet(per_question, table, n=5).set_index("trace_id")
    assert [pq.loc["q1", f"ia_{k}"] for k in range(1, 6)] == [False, True, True, True, True]
    assert [pq.loc["q2", f"ia_{k}"] for k in range(1, 6)] == [False] * 5
    # q5: J(2) is pending, so every k >= 2 is pending (never the stale J(1) = False as the released code does)
    assert [pq.loc["q5", f"ia_{k}"] for k in range(1, 6)] == [False, None, None, None, None]
    # q4 has no evidence at all: no answer from it, False for every k
    assert [pq.loc["q4", f"ia_{k}"] for k in range(1, 6)] == [False] * 5
    assert information_accuracy(table, k=5) == 0.5  # q1 T, q2 F, q3 T, q4 F; q5 pending


def test_acc_zero_gives_nan_eeu_with_a_warning():
    t = [trace("a", "x", False, 1, ["s"], {"1": True}, None, {}), trace("b", "x", False, 1, ["s"], {"1": False},
                                                                         None, {})]
    with pytest.warns(UndefinedMetricWarning) as caught:
        r = evidence_set_metrics(t, n=2)
    assert "EEU is undefined (ACC = 0); returning NaN" in [str(w.message) for w in caught]
    assert r.accuracy == 0.0 and math.isnan(r.eeu) and list(r.ia) == [0.5, 0.5]
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(effective_evidence_utilization(t))


def test_pending_judgments_are_excluded_and_counted():
    t = [trace("a", "x", None, 2, ["s"], {"1": -1, "2": None}, None, {}),
         trace("b", "x", True, 2, ["s", "s2"], {"1": True, "2": True}, None, {})]
    r = quiet(evidence_set_metrics, t, n=2)
    assert r.accuracy == 1.0 and r.counts["pending_acc"] == 1
    assert list(r.ia) == [1.0, 1.0] and r.counts["pending_ia"] == {1: 1, 2: 1}
    # a: no k known correct, some pending -> IC pending (the released code counts -1 as correct)
    assert r.ic == 2 / 2 and r.counts["pending_ic"] == 1 and r.counts["n_ic"] == 1


def test_interference_rate_undefined_without_a_no_retrieval_correct_question():
    t = [trace("a", "x", True, 1, ["s"], {"1": True}, False, {}), trace("b", "x", True, 1, ["s"], {"1": True},
                                                                       None, {})]
    with pytest.warns(UndefinedMetricWarning, match="interference rate"):
        assert math.isnan(interference_rate(t))  # the released code reports 1 here
    # a pending final answer in the base is excluded and counted
    t = [trace("a", "x", None, 1, ["s"], {"1": True}, True, {}), trace("b", "x", True, 1, ["s"], {"1": True},
                                                                       True, {})]
    r = quiet(evidence_set_metrics, t, n=1)
    assert r.interference_rate == 0.0 and r.counts["n_interference"] == 1 and r.counts["pending_interference"] == 1


def test_ic_defaults_and_penalty():
    # n = 5, b = 1: a failed question with |S| = 3 costs (5 + 1) / 3 = 2
    t = [trace("a", "x", False, 2, ["s1", "s2", "s3"], {"1": False, "2": False}, None, {})]
    assert quiet(information_compactness, t) == 2.0
    assert quiet(information_compactness, t, n=3, b=0) == 1.0


def test_attribute_groups_for_booleans_and_lists(table):
    assert {k: list(v) for k, v in attribute_groups(table, "multi_hop").items()} == {"False": [1, 4], "True": [0, 2]}
    assert {k: list(v) for k, v in attribute_groups(table, "domain").items()} == {"a": [0, 2], "b": [0, 1]}


def test_breakdowns_by_agent_and_attribute(table):
    by_agent = quiet(evidence_set_summary, table, by=("agent",), n=3).set_index("agent")
    assert by_agent.loc["x", "ACC"] == pytest.approx(2 / 3)
    assert by_agent.loc["x", "IA@2"] == pytest.approx(2 / 3)  # q1 T, q2 F, q3 T
    assert by_agent.loc["y", "ACC"] == 0.0 and math.isnan(by_agent.loc["y", "EEU"])  # ACC = 0
    mh = quiet(evidence_set_summary, table, by=(), attribute="multi_hop", n=3).set_index("value")
    assert mh.loc["True", "ACC"] == 1.0 and mh.loc["True", "IA@2"] == 1.0 and mh.loc["True", "EEU"] == 1.0
    assert mh.loc["False", "ACC"] == 0.0 and math.isnan(mh.loc["False", "EEU"])
    assert mh.loc["False", "interference_rate"] == 1.0  # q2 and q5 both lost a no-retrieval-correct answer
    dom = quiet(evidence_set_summary, table, by=(), attribute="domain", n=3).set_index("value")
    assert dom.loc["b", "ACC"] == 0.5 and dom.loc["b", "IA@1"] == 0.0 and dom.loc["b", "IA@2"] == 0.5
    assert dom.loc["a", "questions"] == 2


def test_bad_options_are_user_errors(table):
    with pytest.raises(UserInputError, match="n \\(the evidence-set size cap\\)"):
        evidence_set_metrics(table, n=0)
    with pytest.raises(UserInputError, match="b \\(the IC failure penalty\\)"):
        evidence_set_metrics(table, b=-1)
    with pytest.raises(UserInputError, match="cannot group by"):
        evidence_set_summary(table, by=("model",))
    bad = {"schema_version": "1.0", "trace_id": "z", "agent": "x", "question": "?", "steps": [],
           "metadata": {"evidence_set": {"judgments": {"one": True}}}}
    with pytest.raises(UserInputError, match="not a rank"):
        evidence_set_table([bad])


def test_empty_table():
    with pytest.warns(UndefinedMetricWarning):
        r = evidence_set_metrics(pd.DataFrame(columns=evidence_set_table([]).columns), n=2)
    assert r.counts["n_questions"] == 0 and math.isnan(r.accuracy)
