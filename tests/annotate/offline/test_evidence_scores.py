"""Evidence-detail scores of reasoning steps, derived by hand on the hand-made trace of conftest.py."""

from __future__ import annotations

import math

import pytest

from seekbench.annotate.offline._context import StepView, iter_step_views
from seekbench.annotate.offline._evidence_scores import (
    CONTEXT_SCORE_NAMES,
    EVIDENCE_SCORE_NAMES,
    context_scores,
    evidence_scores,
    grounding_scores,
)


@pytest.fixture
def reasoning(hand_trace):
    return {v.step: v for v in iter_step_views(hand_trace) if v.kind == "reasoning"}


def test_before_any_search(reasoning):
    sc = evidence_scores(reasoning[0])
    assert list(sc) == list(EVIDENCE_SCORE_NAMES)
    # Nothing seen yet: every overlap 0, no number (-1), no observation (-1 steps since one);
    # tokens: i need to find out where leo bennett died = 9 -> log(10).
    assert sc["has_prior_search"] == 0.0 and sc["n_prior_obs"] == 0.0
    assert sc["doc_max_new"] == sc["doc_max_all"] == sc["support_all"] == 0.0
    assert sc["num_share"] == -1.0 and sc["has_nums"] == 0.0
    assert sc["steps_since_obs"] == -1.0
    assert sc["log_len"] == pytest.approx(math.log(10))


def test_step_restating_one_document(reasoning):
    sc = evidence_scores(reasoning[3])
    # New content words (not in the question): thames, ditton, surrey; the first document of
    # step 2 holds all three, so the best single document covers 3/3; right after step 2.
    assert sc["doc_max_new"] == 1.0 and sc["last_doc_max_new"] == 1.0
    assert sc["ent_share"] == 1.0  # Thames, Ditton, Surrey: capitalised, all seen
    assert sc["steps_since_obs"] == 0.0 and sc["has_prior_search"] == 1.0
    # The final answer "River Thames" is not yet in any observation ("... by the river." only).
    assert sc["answer_seen"] == 0.0


def test_later_step_sees_every_document_and_the_answer(reasoning):
    sc = evidence_scores(reasoning[10])
    # Content words: river, clearly, sure (it, seems, the, is, not, mentioned, i, am: stop words).
    # river is in the question, so the new words are clearly, sure: found nowhere.
    assert sc["doc_max_new"] == 0.0
    # All words: river is in documents 1 and 4 -> best single-document coverage 1/3.
    assert sc["doc_max_all"] == pytest.approx(1 / 3)
    assert sc["n_prior_obs"] == 3.0  # steps 2, 5, 9
    assert sc["answer_seen"] == 1.0  # "The River Thames flows past Thames Ditton." (step 9)


def test_numbers_looked_up_in_the_seen_text():
    v = StepView("t", 4, 4, "reasoning", 6, 1, "He was born in 1901 and died in 1971.", "When did he die?",
                 seen_obs_text="leo bennett (1901-1958) was a painter", n_prior_obs=1, n_prior_searches=1)
    sc = evidence_scores(v)
    assert sc["has_nums"] == 1.0
    assert sc["num_share"] == 0.5  # 1901 seen, 1971 not


def test_question_bigram_and_name_scores(reasoning):
    sc = evidence_scores(reasoning[3])
    # Question content words: river, flows, past, town, leo, bennett, died (7); its capitalised
    # ones: leo, bennett. Document 1 of step 2 holds river, leo, bennett, died (4/7) and both names.
    assert sc["q_last_best"] == sc["q_seen_best"] == pytest.approx(4 / 7)
    assert sc["qent_last_best"] == sc["qent_seen_best"] == 1.0
    # The step's new words thames, ditton, surrey are best covered by document 1, whose question share is 4/7.
    assert sc["best_doc_q"] == pytest.approx(4 / 7)
    # Names not in the question: thames, ditton, surrey; all in document 1.
    assert sc["n_new_ent"] == 3.0 and sc["n_new_ent_sup"] == 3.0
    # Bigrams (pairs of two stop words left out): documents-leo, leo-bennett, bennett-died, died-at,
    # at-thames, thames-ditton, ditton-in, in-surrey (8); document 1 reads "leo bennett died at thames
    # ditton surrey in": 5 of them.
    assert sc["bigram_seen"] == sc["bigram_last"] == pytest.approx(5 / 8) and sc["n_bigram_seen"] == 5.0
    # Content words leo, bennett, died, thames, ditton, surrey: 3 restate the question, 3 are new.
    assert sc["q_restate"] == 0.5 and sc["new_ratio"] == 0.5
    assert sc["starts_plan"] == 0.0
    assert sc["ans_last"] == 0.0  # "river thames" is not in step 2's text ("... by the river.")


def test_plan_opening_and_answer_in_the_latest_observation(reasoning):
    assert evidence_scores(reasoning[0])["starts_plan"] == 1.0  # "I need to find out ..."
    assert evidence_scores(reasoning[10])["ans_last"] == 1.0  # step 9: "The River Thames flows past ..."


def test_trace_context_averages_the_other_reasoning_steps_after_retrieval(reasoning):
    # Step 3's others: step 10 only (step 0 precedes any observation, step 6 is empty).
    ctx = context_scores(reasoning[3])
    assert list(ctx) == list(CONTEXT_SCORE_NAMES)
    assert ctx["ctx_n"] == 1.0
    assert ctx["ctx_doc_max_all"] == round(1 / 3, 6)  # step 10's (test above), rounded to 6 decimals
    assert ctx["ctx_cue_plan"] == 0.0
    # Step 0's others: steps 3 and 10; step 3's six content words all in document 1 (1.0), step 10's 1/3.
    assert context_scores(reasoning[0])["ctx_doc_max_all"] == round((1 + 1 / 3) / 2, 6)
    # A lone step has no others: zeros and the flag off.
    lone = StepView("t", 0, 0, "reasoning", 1, 0, "Leo Bennett died.", "Where?")
    lone.trace_steps.append(lone)
    assert set(context_scores(lone).values()) == {0.0}
    # grounding_scores joins both, in the classifier's column order.
    assert list(grounding_scores(reasoning[3])) == [*EVIDENCE_SCORE_NAMES, *CONTEXT_SCORE_NAMES]


def test_subject_and_claim_named_by_one_document(reasoning):
    # Step 3: the question names leo, bennett; the step's new names thames, ditton, surrey;
    # document 1 of step 2 holds all five, so both coverages are 1.
    assert evidence_scores(reasoning[3])["subject_claim_last"] == 1.0
    # Step 0 names nothing new (leo, bennett are the question's): -1.
    assert evidence_scores(reasoning[0])["subject_claim_last"] == -1.0


def test_subject_and_claim_on_different_pages_score_low():
    def score(docs):
        v = StepView("t", 3, 3, "reasoning", 4, 1, "Night Train was produced by Ofra Bikel.", "Who produced Night Train?",
                     last_doc_words=docs, n_prior_obs=1, n_prior_searches=1)
        return evidence_scores(v)["subject_claim_last"]

    # Question names night, train; the step's new names ofra, bikel.
    # A page about the producer (0 of 2 question names) and one about the film (0 of 2 claim names): 0.
    assert score([{"ofra", "bikel", "producer"}, {"night", "train", "film"}]) == 0.0
    # One page naming the film and half the claim: min(2/2, 1/2) = 0.5, the best over the documents.
    assert score([{"ofra", "bikel"}, {"night", "train", "ofra"}]) == 0.5
    assert score([]) == 0.0  # no documents in the latest observation
