"""Evidence-detail scores of reasoning steps, derived by hand on the hand-made trace of conftest.py."""

from __future__ import annotations

import math

import pytest

from seekbench.annotate.offline._context import StepView, iter_step_views
from seekbench.annotate.offline._evidence_scores import EVIDENCE_SCORE_NAMES, evidence_scores


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
