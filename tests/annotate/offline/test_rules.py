"""The rules judge: hand-derived labels, rule provenance, coverage of every step, determinism, shared data."""

from __future__ import annotations

import math

import pytest

from seekbench import UserInputError
from seekbench._schemas import validator
from seekbench.analysis import agreement_table, kappa_score
from seekbench.annotate.offline import RulesJudge, human_labels, load_offline_judge, step_scores
from seekbench.annotate.offline._context import iter_step_views
from seekbench.annotate.offline._text import content_words, count_cues, coverage, jaccard
from seekbench.traces import FIELDS_BY_KIND, LABEL_VALUES

NO_DOCS = "observation has no documents and no text"
NO_TEXT = "reasoning step has no text"

# Hand derivation (thresholds of _rules.THRESHOLDS; question words: river, flows, past, town, leo, bennett, died).
EXPECTED = {
    # "I need to" + "to find out": 2 plan cues, no other cue.
    (0, "reasoning_type"): "PlanFormation",
    # No observation yet: nothing to be grounded in.
    (0, "grounding"): "NotGrounded",
    # First search: rule.
    (1, "search_type"): "InitialQuery",
    # Query words leo, bennett, place, death; leo, bennett visible (question) -> 2/4 = 0.5 >= 0.5.
    (1, "grounding"): "Grounded",
    # Document 1 holds all four query words -> coverage 1.0 >= 0.6.
    (2, "clarity"): "Clear",
    # Final answer "river thames" not in the documents, but document 1 covers 1.0 >= 0.8 of the query
    # and both of its capitalised words (leo, bennett).
    (2, "sufficiency"): "Sufficient",
    # "Based on": one synthesis cue, no other.
    (3, "reasoning_type"): "InformationSynthesis",
    # New words thames, ditton, surrey: all in step 2's documents (3/3 >= 0.5, 3 >= 2 words).
    (3, "grounding"): "Grounded",
    # {thames, ditton, river} vs previous {leo, bennett, place, death}: Jaccard 0 < 0.3.
    (4, "search_type"): "FollowUpQuery",
    # river (question), thames, ditton (step 2): 3/3.
    (4, "grounding"): "Grounded",
    (5, "clarity"): None,
    (5, "sufficiency"): None,
    (6, "reasoning_type"): None,
    (6, "grounding"): None,
    # {thames, ditton, river, flows} vs {thames, ditton, river}: Jaccard 3/4 >= 0.3.
    (7, "search_type"): "RefinedQuery",
    # flows, river (question), thames, ditton (step 2): 4/4.
    (7, "grounding"): "Grounded",
    # Equal to step 1 after normalize_query: rule.
    (8, "search_type"): "RepeatQuery",
    # leo, bennett (question), place, death (step 2): 4/4.
    (8, "grounding"): "Grounded",
    # Producing query (step 8) leo, bennett, place, death: none in "River Thames flows past Thames Ditton".
    (9, "clarity"): "Unclear",
    # The final answer "River Thames" occurs in the document.
    (9, "sufficiency"): "Sufficient",
    # "seems", "not sure", "i am not": 3 assessment cues.
    (10, "reasoning_type"): "StateAssessment",
    # New words clearly, sure: in no observation -> 0 < 0.5.
    (10, "grounding"): "NotGrounded",
}


def _by_key(records):
    return {(r["step"], r["field"]): r for r in records}


def test_hand_trace_labels(hand_trace):
    recs = RulesJudge().label_traces([hand_trace], rater="r")
    got = _by_key(recs)
    assert len(recs) == len(got) == len(EXPECTED)
    assert {k: r["value"] for k, r in got.items()} == EXPECTED
    assert got[(5, "clarity")]["unscored_reason"] == NO_DOCS
    assert got[(5, "sufficiency")]["unscored_reason"] == NO_DOCS
    assert got[(6, "reasoning_type")]["unscored_reason"] == NO_TEXT
    assert got[(9, "sufficiency")]["provenance"]["heuristic"] == "answer-in-documents"
    assert got[(0, "reasoning_type")]["provenance"]["heuristic"] == "cue-phrases"


def test_rule_provenance(hand_trace):
    got = _by_key(RulesJudge(name="my-rules").label_traces([hand_trace], rater="me"))
    first, repeat = got[(1, "search_type")], got[(8, "search_type")]
    assert first["provenance"]["kind"] == repeat["provenance"]["kind"] == "rule"
    assert first["provenance"]["rule"] == "first_search"
    assert repeat["provenance"]["rule"] == "repeat_normalized_query"
    assert repeat["provenance"]["repeat_of"] == 1
    for key in [(4, "search_type"), (7, "search_type"), (1, "grounding"), (2, "clarity"), (5, "clarity")]:
        assert got[key]["provenance"]["kind"] == "judge"
        assert got[key]["provenance"]["judge"] == "my-rules"
        assert got[key]["provenance"]["model"] == "rules@1"
    assert {r["rater"] for r in got.values()} == {"me"}


def test_records_are_valid_annotations(hand_trace, sample_traces):
    check = validator("annotation")
    for rec in RulesJudge().label_traces([hand_trace, *sample_traces[:5]], rater="rules"):
        assert not list(check.iter_errors(rec)), rec
        if rec["value"] is None:
            assert rec["unscored_reason"]
        else:
            assert rec["value"] in LABEL_VALUES[rec["field"]]
            assert rec["unscored_reason"] is None


def test_every_applicable_field_of_every_step(sample_traces):
    recs = RulesJudge().label_traces(sample_traces, rater="rules")
    expected = [(t["trace_id"], st["index"], f) for t in sample_traces for st in t["steps"]
                if st["kind"] in ("reasoning", "search", "search_result") for f in FIELDS_BY_KIND[st["kind"]]]
    assert [(r["trace_id"], r["step"], r["field"]) for r in recs] == expected


def test_deterministic(sample_traces, strip_time):
    a = RulesJudge().label_traces(sample_traces, rater="rules")
    b = RulesJudge().label_traces(list(sample_traces), rater="rules")
    assert strip_time(a) == strip_time(b)


def test_context_sees_only_earlier_steps(hand_trace):
    views = {v.step: v for v in iter_step_views(hand_trace)}
    assert views[0].seen_obs_words == set() and views[0].n_prior_obs == 0
    assert "thames" in views[3].seen_obs_words and "novelist" in views[3].seen_obs_words
    assert views[9].query == "leo bennett, place of death!"  # producing search via depends_on
    assert views[7].prev_query == "Thames Ditton river"
    assert step_scores(views[2])["top_doc_query"] == 1.0
    assert step_scores(views[11]) == {}  # answer steps have no scores


def test_text_helpers():
    assert content_words("I need to find the Leo Bennett page") == {"leo", "bennett", "page"}
    assert coverage(set(), {"a"}) == 0.0
    assert coverage({"a", "b", "c", "d"}, {"a", "b"}) == 0.5
    assert jaccard(set(), set()) == 0.0
    assert count_cues("I don't have that; let's search.", ["i don't have", "let's", "based on"]) == 2
    assert count_cues("planned", ["plan"]) == 0  # word boundaries


def test_loader_and_errors():
    judge = load_offline_judge({"name": "r2", "kind": "rules", "version": "3", "description": "x",
                                "path": "/j/r2.toml"})
    assert (judge.name, judge.model_id) == ("r2", "rules@3")
    with pytest.raises(UserInputError, match="offline judges are 'rules' or 'learned'"):
        load_offline_judge({"name": "x", "kind": "openai"})
    with pytest.raises(UserInputError, match="unknown key 'temprature'"):
        load_offline_judge({"name": "x", "kind": "rules", "temprature": 0})


def test_shipped_rules_judge_file(sample_traces):
    from seekbench.annotate import load_judge_config

    judge = load_offline_judge(load_judge_config("rules"))
    assert judge.name == "rules"
    assert judge.label_traces(sample_traces[:2], rater="rules")


@pytest.mark.shared_data
def test_rules_agreement_on_shared_data(shared_traces):
    from sklearn.metrics import cohen_kappa_score

    ref = human_labels(shared_traces)
    judge = RulesJudge()
    recs = judge.label_traces(shared_traces, rater="rules")
    table = agreement_table(shared_traces, recs, ref).set_index("row")
    print("\nrules judge vs human labels (190 shared traces):\n" + table.drop(columns="classes").to_string())
    # Each applicable row has its documented n: every human-labeled step is compared.
    assert table["n"].to_dict() == {"reasoning_type": 630, "grounding (reasoning)": 630, "grounding (search)": 252,
                                    "search_type (judge-decided)": 232, "search_type (rule-derived)": 297,
                                    "clarity": 467,
                                    "sufficiency": 467}
    assert (table["n_unscored"] == 0).all()
    for row, k in table["kappa"].items():
        assert math.isfinite(k) and -1 <= k <= 1, row
    # Independent recomputation of one row straight from the records.
    pairs = [(ref[(r["trace_id"], r["step"], "clarity")], r["value"]) for r in recs
             if r["field"] == "clarity" and (r["trace_id"], r["step"], "clarity") in ref and r["value"]]
    assert table.loc["clarity", "kappa"] == pytest.approx(cohen_kappa_score(*zip(*pairs, strict=True)), abs=1e-12)
    # Rule-derived labels: every first search is InitialQuery by rule.
    firsts = {(t["trace_id"], next(s["index"] for s in t["steps"] if s["kind"] == "search"))
              for t in shared_traces if any(s["kind"] == "search" for s in t["steps"])}
    got = {(r["trace_id"], r["step"]): r for r in recs if r["field"] == "search_type"}
    assert all(got[k]["value"] == "InitialQuery" and got[k]["provenance"]["kind"] == "rule" for k in firsts)
    # Empty observations (no documents, no text) are unscored, never labeled.
    empty = [r for r in recs if r["field"] == "clarity" and r["value"] is None]
    assert empty and all(r["unscored_reason"] == NO_DOCS for r in empty)


def test_kappa_undefined_is_nan():
    assert math.isnan(kappa_score(["A", "A"], ["A", "A"]))
    assert math.isnan(kappa_score([], []))
    assert kappa_score(["A", "B"], ["A", "B"]) == 1.0
