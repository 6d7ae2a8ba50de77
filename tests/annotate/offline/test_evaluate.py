"""``judge evaluate``'s agreement table: per field and step kind, the rule-derived labels apart."""

from __future__ import annotations

import math

from seekbench.analysis import agreement_table

TRACE = {"trace_id": "t", "steps": [{"index": 0, "kind": "reasoning"}, {"index": 1, "kind": "search"},
                                    {"index": 2, "kind": "search_result"}, {"index": 3, "kind": "search"}]}


def _rec(step, field, value, kind="judge"):
    return {"trace_id": "t", "step": step, "field": field, "value": value,
            "unscored_reason": None if value else "server error", "provenance": {"kind": kind}}


def test_rows_per_field_and_step_kind_with_rule_labels_apart():
    # Human: step 0 reasoning Grounded, step 1 search Grounded + InitialQuery, step 3 FollowUpQuery.
    # Judge: NotGrounded on 0 (wrong), Grounded on 1 (right), InitialQuery on 1 BY RULE (right),
    # RefinedQuery on 3 by itself (wrong).
    # Old table: one "search_type" row, n = 2, accuracy 1/2, the rule's label counted as the judge's.
    # Now: judge-decided n = 1, accuracy 0; rule-derived n = 1, accuracy 1; grounding of the
    # reasoning step (accuracy 0) and of the search step (accuracy 1) in rows of their own.
    ref = {("t", 0, "grounding"): "Grounded", ("t", 1, "grounding"): "Grounded",
           ("t", 1, "search_type"): "InitialQuery", ("t", 3, "search_type"): "FollowUpQuery"}
    recs = [_rec(0, "grounding", "NotGrounded"), _rec(1, "grounding", "Grounded"),
            _rec(1, "search_type", "InitialQuery", kind="rule"), _rec(3, "search_type", "RefinedQuery"),
            _rec(2, "clarity", None)]
    t = agreement_table([TRACE], recs, ref).set_index("row")
    assert "search_type" not in t.index
    assert (t.loc["search_type (judge-decided)", "n"], t.loc["search_type (judge-decided)", "accuracy"]) == (1, 0.0)
    assert (t.loc["search_type (rule-derived)", "n"], t.loc["search_type (rule-derived)", "accuracy"]) == (1, 1.0)
    assert (t.loc["grounding (reasoning)", "n"], t.loc["grounding (reasoning)", "accuracy"]) == (1, 0.0)
    assert (t.loc["grounding (search)", "n"], t.loc["grounding (search)", "accuracy"]) == (1, 1.0)
    # Every undefined number says why: one class only, or nothing compared.
    assert math.isnan(t.loc["grounding (search)", "kappa"])
    assert t.loc["grounding (search)", "note"] == "kappa undefined: one class only"
    assert t.loc["clarity", "n"] == 0 and t.loc["clarity", "note"].startswith("n = 0")
