"""Comparing annotation sets: alignment and exclusions, normalisation, panel, multi-rater, costs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from seekbench import UndefinedMetricWarning, UserInputError
from seekbench.agreement import (
    PANEL_RATER,
    cohen_kappa_score,
    compare_annotations,
    fleiss_kappa_score,
    judge_costs,
    krippendorff_alpha_score,
    majority_panel,
    normalize_annotations,
    pareto_front,
)
from seekbench.labels import AnnotationSet


def rec(trace, step, value, rater, field="grounding", prov=None, reason=None):
    return {"trace_id": trace, "step": step, "field": field, "value": value,
            "unscored_reason": reason if value is None else None, "rater": rater,
            "provenance": prov or {"kind": "human"}}


def aset(records):
    return AnnotationSet.from_records(records)


def test_spelling_variants_are_normalised_before_comparison():
    human = aset([rec("a", 0, "Grounded", "h"), rec("a", 1, "NotGrounded", "h"), rec("a", 2, "Clear", "h", "clarity"),
                  rec("b", 0, "NotGrounded", "h")])
    judge = aset([rec("a", 0, "grounded", "j", "groundness"), rec("a", 1, "Not Grounded", "j"),
                  rec("a", 2, "CLEAR", "j", "Clarity"), rec("b", 0, "not_grounded", "j", "Groundedness")])
    with pytest.warns(UndefinedMetricWarning, match="j/clarity"):  # one Clear step: p_e = 1
        res = compare_annotations(human, judge, n_boot=0)
    s = res.summary.set_index("field")
    assert s.loc["grounding", "n_compared"] == 3 and s.loc["grounding", "raw_agreement"] == 1.0
    assert s.loc["grounding", "kappa"] == 1.0
    assert s.loc["clarity", "n_compared"] == 1 and s.loc["clarity", "raw_agreement"] == 1.0
    norm = normalize_annotations(judge).records
    assert set(norm["field"]) == {"grounding", "clarity"}
    assert set(norm["value"]) == {"Grounded", "NotGrounded", "Clear"}


def test_value_outside_ontology_is_a_user_error():
    bad = aset([rec("a", 0, "Sorta", "j")])
    with pytest.raises(UserInputError, match="outside the ontology for grounding"):
        normalize_annotations(bad)


def test_exclusions_are_counted_with_reasons():
    human = aset([rec("a", 0, "Grounded", "h"), rec("a", 1, "Grounded", "h"), rec("a", 2, "NotGrounded", "h"),
                  rec("a", 3, None, "h", reason="skipped")])
    judge = aset([rec("a", 0, "Grounded", "j"), rec("a", 1, None, "j", reason="parse failure"),
                  rec("a", 3, "Grounded", "j"), rec("a", 4, "Grounded", "j")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        res = compare_annotations(human, judge, n_boot=0)
    row = res.summary[res.summary["field"] == "grounding"].iloc[0]
    assert row["n_compared"] == 1
    assert (row["n_reference_only"], row["n_rater_only"], row["n_unscored_by_rater"],
            row["n_unscored_by_reference"]) == (1, 1, 1, 1)
    assert row["n_excluded"] == 4
    assert dict(zip(res.exclusions["reason"], res.exclusions["n"])) == {
        "reference only": 1, "rater only": 1, "unscored by rater": 1, "unscored by reference": 1}


def _random_sets(seed=0, n_traces=30, flip=(0.1, 0.25, 0.4)):
    rng = np.random.default_rng(seed)
    human, judges = [], [[] for _ in flip]
    for t in range(n_traces):
        for s in range(int(rng.integers(2, 8))):
            for f, vals in (("grounding", ["Grounded", "NotGrounded"]),
                            ("reasoning_type", ["InformationSynthesis", "PlanFormation", "StateAssessment"])):
                v = vals[int(rng.integers(len(vals)))]
                human.append(rec(f"t{t}", s, v, "human", f))
                for j, p in enumerate(flip):
                    w = v if rng.random() >= p else vals[int(rng.integers(len(vals)))]
                    judges[j].append(rec(f"t{t}", s, w, f"judge{j}", f))
    return aset(human), [aset(j) for j in judges]


def test_field_rows_match_two_rater_functions_and_overall_is_field_stratified():
    human, judges = _random_sets()
    res = compare_annotations(human, *judges, n_boot=200, seed=4)
    hw = human.records.pivot(index=["trace_id", "step"], columns="field", values="value")
    for j, js in enumerate(judges):
        jw = js.records.pivot(index=["trace_id", "step"], columns="field", values="value").reindex(hw.index)
        rows = res.summary[res.summary["rater"] == f"judge{j}"].set_index("field")
        po_sum = pe_sum = n_sum = 0.0
        for f in ("grounding", "reasoning_type"):
            assert rows.loc[f, "kappa"] == pytest.approx(cohen_kappa_score(hw[f].tolist(), jw[f].tolist()), abs=1e-12)
            assert rows.loc[f, "kappa_lower"] <= rows.loc[f, "kappa"] <= rows.loc[f, "kappa_upper"]
            conf = res.confusion[(f"judge{j}", f, "reasoning")].to_numpy(dtype=float)
            n = conf.sum()
            po_sum += np.trace(conf)
            pe_sum += (conf.sum(1) * conf.sum(0)).sum() / n
            n_sum += n
        # Overall: p_o and p_e pooled over fields with weights n_f, p_e within field.
        po, pe = po_sum / n_sum, pe_sum / n_sum
        assert rows.loc["all (pooled)", "kappa"] == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
        assert rows.loc["all (pooled)", "raw_agreement"] == pytest.approx(po, abs=1e-12)
    # The worse judge (more flips) agrees less.
    ov = res.summary[res.summary["field"] == "all (pooled)"].set_index("rater")["kappa"]
    assert ov["judge0"] > ov["judge1"] > ov["judge2"]
    # Same seed, same intervals.
    again = compare_annotations(human, *judges, n_boot=200, seed=4)
    pd.testing.assert_frame_equal(res.summary, again.summary)


def test_multi_rater_statistics_and_pairwise_matrix():
    human, judges = _random_sets(seed=1)
    res = compare_annotations(human, *judges, n_boot=100, seed=0)
    assert res.raters == ["judge0", "judge1", "judge2", PANEL_RATER]
    sets = [human, *judges]
    for f in ("grounding", "reasoning_type"):
        wide = pd.concat([s.records[s.records["field"] == f].set_index(["trace_id", "step"])["value"].rename(i)
                          for i, s in enumerate(sets)], axis=1)
        m = res.multi_rater.set_index("field").loc[f]
        assert m["alpha"] == pytest.approx(krippendorff_alpha_score(wide), abs=1e-12)
        assert m["fleiss_kappa"] == pytest.approx(fleiss_kappa_score(wide), abs=1e-12)
        pw = res.pairwise[(f, "reasoning")]
        assert pw.loc["judge0", "judge1"] == pytest.approx(cohen_kappa_score(wide[1].tolist(), wide[2].tolist()))
        assert pw.loc["judge1", "judge0"] == pw.loc["judge0", "judge1"]
        assert pw.loc["human", "human"] == 1.0
    # The panel of three judges is scored like any rater and beats the worst judge.
    ov = res.summary[res.summary["field"] == "all (pooled)"].set_index("rater")["kappa"]
    assert ov[PANEL_RATER] > ov["judge2"]


def test_majority_panel_ties_and_tiebreaker():
    r = pd.DataFrame({"j1": ["a", "a", "b", None, "a"], "j2": ["a", "b", None, None, "b"],
                      "j3": ["b", "b", "a", None, "c"]})
    plain = majority_panel(r)
    assert plain.labels.tolist() == ["a", "b", None, None, None]
    assert (plain.n_ties, plain.n_ties_broken, plain.n_no_votes) == (2, 0, 1)
    assert plain.reasons.iloc[2] == "tie between a and b (no tiebreaker)"
    broken = majority_panel(r, tiebreaker="j3")
    # item 2: j1 "b" vs j3 "a" -> j3's "a"; item 4: a/b/c three-way tie, j3 says "c".
    assert broken.labels.tolist() == ["a", "b", "a", None, "c"]
    assert broken.n_ties_broken == 2
    with pytest.raises(UserInputError, match="not a panel member"):
        majority_panel(r, tiebreaker="j9")


def test_panel_with_tiebreaker_in_compare_and_errors():
    human, judges = _random_sets(seed=2, flip=(0.1, 0.5))
    res = compare_annotations(human, *judges, tiebreaker="judge0", n_boot=0)
    assert res.panel.n_ties > 0 and res.panel.n_ties_broken == res.panel.n_ties
    with pytest.raises(UserInputError, match="needs a panel"):
        compare_annotations(human, judges[0], tiebreaker="judge0", n_boot=0)
    with pytest.raises(UserInputError, match="appears twice"):
        compare_annotations(human, judges[0], judges[0], n_boot=0)


def test_judge_costs_count_each_call_once():
    def prov(cost, lat, tin, tout, kind="judge"):
        return {"kind": kind, "judge": "g", "model": "m", "time": "2025-01-01T00:00:00Z", "cost_usd": cost,
                "latency_s": lat, "input_tokens": tin, "output_tokens": tout}

    recs = []
    # Trace a: one call (cost 0.02, 3 s, 1000 + 200 tokens) labeled 3 steps; one rule label (free).
    for s in range(3):
        recs.append(rec("a", s, "Grounded", "g", prov=prov(0.02, 3.0, 1000, 200)))
    recs.append(rec("a", 3, "InitialQuery", "g", "search_type", prov={"kind": "rule", "rule": "first_search"}))
    # Trace b: one call (0.01, 1 s, 500 + 100) with one unscored step.
    recs.append(rec("b", 0, "Grounded", "g", prov=prov(0.01, 1.0, 500, 100)))
    recs.append(rec("b", 1, None, "g", prov=prov(0.01, 1.0, 500, 100), reason="label outside the enum"))
    row = judge_costs(aset(recs)).iloc[0]
    assert row["n_calls"] == 2 and row["n_traces"] == 2 and row["n_rule"] == 1
    assert row["cost_per_trace"] == pytest.approx(0.015)  # (0.02 + 0.01) / 2
    assert row["latency_s_per_trace"] == pytest.approx(2.0)
    assert row["tokens_per_trace"] == pytest.approx(900.0)  # (1200 + 600) / 2
    assert row["n_unscored"] == 1 and row["top_unscored_reason"] == "label outside the enum"
    per_record = judge_costs(aset(recs), usage="per_record").iloc[0]
    assert per_record["cost_per_trace"] == pytest.approx((3 * 0.02 + 2 * 0.01) / 2)
    human = judge_costs(aset([rec("a", 0, "Grounded", "h")])).iloc[0]
    assert math.isnan(human["cost_per_trace"]) and math.isnan(human["tokens_per_trace"])


def test_pareto_front():
    assert pareto_front([1, 2, 3, 2], [0.5, 0.7, 0.6, 0.7]).tolist() == [True, True, False, True]
    assert pareto_front([float("nan"), 1.0], [0.9, 0.1]).tolist() == [False, True]
