"""Spec section 9: agreement per field and step kind, rule-derived labels apart, panels on every step.

Each expected value is derived by hand in the comment above it.
"""

from __future__ import annotations

import math
import warnings

import pytest

from seekbench import UndefinedMetricWarning
from seekbench.agreement import compare_annotations
from seekbench.labels import AnnotationSet

# One trace: reasoning steps 0-3, search steps 4-7.
KINDS = ["reasoning"] * 4 + ["search"] * 4
TRACES = [{"trace_id": "t", "agent": "a", "steps": [
    {"index": i, "kind": k, **({"query": f"q{i}"} if k == "search" else {})} for i, k in enumerate(KINDS)]}]


def rec(step, value, rater, field="grounding", kind="judge", trace="t"):
    prov = {"kind": "human"} if rater == "human" else {"kind": kind, "judge": rater}
    return {"trace_id": trace, "step": step, "field": field, "value": value,
            "unscored_reason": None if value is not None else "server error", "rater": rater, "provenance": prov}


def compare(*sets, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return compare_annotations(*sets, n_boot=0, **kw)


def rows(res, rater):
    s = res.summary[res.summary["rater"] == rater]
    return {(r["field"], r["step_kind"]): r for r in s.to_dict("records")}


def test_grounding_of_reasoning_and_search_steps_is_never_pooled():
    # Reasoning:  human G N G N, judge G N N N -> confusion [[1, 1], [0, 2]]: p_o = 3/4,
    #             p_e = (2*1 + 2*3) / 16 = 1/2, kappa = (3/4 - 1/2) / (1/2) = 1/2.
    # Search:     human G G G G, judge G G G G -> p_o = 1, p_e = 1: kappa undefined (a note says
    #             why), AC1 = 1.
    # One kappa over all eight (the old output): p_o = 7/8, p_e = (6*5 + 2*3) / 64 = 9/16,
    #             kappa = (7/8 - 9/16) / (7/16) = 5/7, a number for neither question.
    # The pooled row stratifies: p_o = 7/8, p_e = (4 * 1/2 + 4 * 1) / 8 = 3/4, kappa = 1/2.
    g, n = "Grounded", "NotGrounded"
    human = AnnotationSet.from_records([rec(i, v, "human") for i, v in enumerate([g, n, g, n, g, g, g, g])])
    judge = AnnotationSet.from_records([rec(i, v, "j") for i, v in enumerate([g, n, n, n, g, g, g, g])])
    res = compare(human, judge, traces=TRACES)
    r = rows(res, "j")
    assert set(r) == {("grounding", "reasoning"), ("grounding", "search"), ("all (pooled)", "all")}
    assert r[("grounding", "reasoning")]["kappa"] == pytest.approx(1 / 2)
    assert r[("grounding", "reasoning")]["raw_agreement"] == pytest.approx(3 / 4)
    assert math.isnan(r[("grounding", "search")]["kappa"]) and r[("grounding", "search")]["ac1"] == 1.0
    assert "kappa undefined" in r[("grounding", "search")]["note"]
    assert r[("all (pooled)", "all")]["kappa"] == pytest.approx(1 / 2)
    assert r[("all (pooled)", "all")]["raw_agreement"] == pytest.approx(7 / 8)
    assert all(v["kappa"] != pytest.approx(5 / 7) for v in r.values() if not math.isnan(v["kappa"]))
    assert set(res.confusion) == {("j", "grounding", "reasoning"), ("j", "grounding", "search")}


def test_step_kinds_come_from_the_labels_without_traces():
    # Step 0 has a reasoning_type label, step 4 a search_type one: their grounding labels fall in
    # the reasoning and search strata even without the traces.
    human = AnnotationSet.from_records([rec(0, "Grounded", "human"), rec(0, "PlanFormation", "human", "reasoning_type"),
                                        rec(4, "Grounded", "human"), rec(4, "InitialQuery", "human", "search_type")])
    judge = AnnotationSet.from_records([rec(0, "Grounded", "j"), rec(4, "NotGrounded", "j")])
    r = rows(compare(human, judge), "j")
    assert r[("grounding", "reasoning")]["raw_agreement"] == 1.0
    assert r[("grounding", "search")]["raw_agreement"] == 0.0


def test_rule_derived_labels_are_the_rules_not_the_judges():
    # Searches 4, 5, 6: the judge's InitialQuery on 4 and RepeatQuery on 6 come from rules (both
    # right, by construction); its own RefinedQuery on 5 is wrong (human: FollowUpQuery).
    # Old output: judge search_type n = 3, agreement 2/3. Now: the judge n = 1, agreement 0, the
    # two rule labels excluded from it as "rule-derived" and scored as the rater "rule-derived":
    # n = 2, agreement 1.
    human = AnnotationSet.from_records([rec(4, "InitialQuery", "human", "search_type"),
                                        rec(5, "FollowUpQuery", "human", "search_type"),
                                        rec(6, "RepeatQuery", "human", "search_type")])
    judge = AnnotationSet.from_records([rec(4, "InitialQuery", "j", "search_type", kind="rule"),
                                        rec(5, "RefinedQuery", "j", "search_type"),
                                        rec(6, "RepeatQuery", "j", "search_type", kind="rule")])
    res = compare(human, judge, traces=TRACES)
    j = rows(res, "j")[("search_type", "search")]
    assert (j["n_compared"], j["raw_agreement"], j["n_rule_derived"]) == (1, 0.0, 2)
    rule = rows(res, "rule-derived")[("search_type", "search")]
    assert (rule["n_compared"], rule["raw_agreement"]) == (2, 1.0)
    assert res.raters == ["j", "rule-derived"]


def test_a_judge_without_a_label_of_its_own_has_n_0_and_no_coefficient():
    # A judge whose calls all failed: every label unscored except the rule-derived InitialQuery.
    # Old output: overall n = 1, agreement 1.000, AC1 1.000 [1.00, 1.00] (the rule's label).
    # Now every row of the judge has n = 0, NaN coefficients and a note; the rule is scored apart.
    human = AnnotationSet.from_records([rec(0, "Grounded", "human"), rec(1, "NotGrounded", "human"),
                                        rec(4, "InitialQuery", "human", "search_type")])
    dead = AnnotationSet.from_records([rec(0, None, "dead"), rec(1, None, "dead"),
                                       rec(4, "InitialQuery", "dead", "search_type", kind="rule")])
    res = compare(human, dead, traces=TRACES)
    for row in rows(res, "dead").values():
        assert row["n_compared"] == 0
        for key in ("raw_agreement", "kappa", "ac1", "ac1_lower", "ac1_upper"):
            assert math.isnan(row[key]), key
        assert row["note"].startswith("n = 0")
    pooled = rows(res, "dead")[("all (pooled)", "all")]
    assert (pooled["n_unscored_by_rater"], pooled["n_rule_derived"]) == (2, 1)
    assert rows(res, "rule-derived")[("search_type", "search")]["raw_agreement"] == 1.0


def test_a_panel_of_two_is_scored_on_every_step_the_reference_labeled():
    # Reasoning steps 0-3. Human G G N G; j1 G N N G; j2 G G G G (each 3/4 right).
    # The judges agree on steps 0 and 3 (G, right) and tie on 1 and 2.
    # Old output: the panel scored on steps 0 and 3 only: agreement 1, "better" than both judges.
    # Now all four are scored, the two open ties as the response "(unresolved tie)":
    #   agreement 2/4; confusion rows human (G: 3, N: 1), columns panel (G: 2, N: 0, tie: 2):
    #   p_e (kappa) = (3*2 + 1*0) / 16 = 3/8, kappa = (1/2 - 3/8) / (5/8) = 1/5;
    #   AC1 (q = 2 labels): pi_G = (3 + 2)/8, pi_N = (1 + 0)/8, p_e = 5/8 * 3/8 + 1/8 * 7/8 = 11/32,
    #   AC1 = (1/2 - 11/32) / (21/32) = 5/21.
    # With j1 breaking ties the panel is j1's labels on 1 and 2: G N N G, agreement 3/4, no open tie.
    g, n = "Grounded", "NotGrounded"
    human = AnnotationSet.from_records([rec(i, v, "human") for i, v in enumerate([g, g, n, g])])
    j1 = AnnotationSet.from_records([rec(i, v, "j1") for i, v in enumerate([g, n, n, g])])
    j2 = AnnotationSet.from_records([rec(i, v, "j2") for i, v in enumerate([g, g, g, g])])
    res = compare(human, j1, j2, traces=TRACES)
    p = rows(res, "panel:majority")[("grounding", "reasoning")]
    assert (p["n_compared"], p["n_unresolved_ties"], p["n_excluded"]) == (4, 2, 0)
    assert p["raw_agreement"] == pytest.approx(1 / 2)
    assert p["kappa"] == pytest.approx(1 / 5) and p["ac1"] == pytest.approx(5 / 21)
    assert rows(res, "j1")[("grounding", "reasoning")]["raw_agreement"] == pytest.approx(3 / 4)
    assert list(res.confusion[("panel:majority", "grounding", "reasoning")].columns) == [g, n, "(unresolved tie)"]
    broken = rows(compare(human, j1, j2, traces=TRACES, tiebreaker="j1"), "panel:majority")[("grounding", "reasoning")]
    assert (broken["n_compared"], broken["n_unresolved_ties"], broken["raw_agreement"]) == (4, 0, 3 / 4)


def test_no_rule_rater_when_the_fields_compared_hold_no_rule_label():
    human = AnnotationSet.from_records([rec(0, "Grounded", "human"), rec(4, "InitialQuery", "human", "search_type")])
    judge = AnnotationSet.from_records([rec(0, "Grounded", "j"),
                                        rec(4, "InitialQuery", "j", "search_type", kind="rule")])
    res = compare(human, judge, traces=TRACES, fields=["grounding"])
    assert res.raters == ["j"] and set(res.summary["rater"]) == {"j"}
