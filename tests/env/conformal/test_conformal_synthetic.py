"""Synthetic belief states: K count, r ranges, exact completeness, determinism, rendering without N."""

from __future__ import annotations

import json
import math

import pytest
from _conformal_helpers import make_corpus, make_document, write_corpus

from seekbench import SeekbenchWarning, UserInputError
from seekbench.env.conformal import (
    BeliefState,
    document_belief_states,
    document_goal_passages,
    load_corpus_records,
    missing_range,
    read_belief_states,
    render_belief,
    render_beliefs,
    synthesize_belief_states,
    write_belief_states,
)


@pytest.mark.parametrize("n,delta", [(1, 10), (9, 10), (10, 10), (11, 10), (30, 10), (57, 10), (57, 15), (23, 1)])
def test_k_count_r_range_and_exact_completeness(n, delta):
    doc = make_document("d", n)
    states = document_belief_states(doc, delta=delta, seed=5)
    assert len(states) == math.ceil(n / delta)
    ids = [p.id for p in document_goal_passages(doc)]
    for k, s in enumerate(states):
        lo, hi = k * delta, min((k + 1) * delta, n) - 1
        assert (lo, hi) == missing_range(k, n, delta)
        assert lo <= s.n_missing <= hi
        assert len(s.visible_passage_ids) == n - s.n_missing
        assert s.true_completeness == (n - s.n_missing) / n  # exact, not approximate
        assert s.n_goal_passages == n and s.k == k and s.state_id == f"d#{k}"
        # visible passages are distinct goal passages, in document order
        assert len(set(s.visible_passage_ids)) == len(s.visible_passage_ids)
        assert list(s.visible_passage_ids) == [i for i in ids if i in set(s.visible_passage_ids)]


def test_r_is_uniform_over_its_interval_and_subsets_vary():
    # Over many seeds, r for k = 0 (N = 30, delta = 10) takes every value 0..9 about equally often.
    doc = make_document("d", 30)
    rs = [document_belief_states(doc, seed=s)[0].n_missing for s in range(2000)]
    counts = [rs.count(r) for r in range(10)]
    assert set(rs) == set(range(10))
    assert max(counts) - min(counts) < 90  # expected 200 each, sd ~ 13
    subsets = {document_belief_states(doc, seed=s)[2].visible_passage_ids for s in range(50)}
    assert len(subsets) > 40


def test_seeded_and_independent_of_corpus_order():
    corpus = make_corpus(6, seed=1)
    a = synthesize_belief_states(corpus, seed=11)
    b = synthesize_belief_states(list(reversed(corpus)), seed=11)
    assert {s.state_id: s for s in a} == {s.state_id: s for s in b}
    c = synthesize_belief_states(corpus, seed=12)
    assert [s.visible_passage_ids for s in a] != [s.visible_passage_ids for s in c]


def test_empty_documents_skipped_with_warning():
    corpus = [make_document("a", 12), {"doc_id": "empty", "sections": []}]
    with pytest.warns(SeekbenchWarning, match="without passages"):
        states = synthesize_belief_states(corpus)
    assert {s.doc_id for s in states} == {"a"}


def test_bad_delta_and_duplicate_ids():
    with pytest.raises(UserInputError, match="delta"):
        document_belief_states(make_document("a", 5), delta=0)
    doc = {"doc_id": "x", "sections": [{"title": "s", "passages": [{"id": "p1", "text": "a"},
                                                                   {"id": "p1", "text": "b"}]}]}
    with pytest.raises(UserInputError, match="twice"):
        document_belief_states(doc)
    with pytest.raises(UserInputError, match="twice in the corpus"):
        synthesize_belief_states([make_document("a", 3), make_document("a", 4)])


def test_render_hides_n_and_passage_ids():
    doc = make_document("doc-7", 25)
    state = document_belief_states(doc, seed=2)[1]
    view = render_belief(state, doc)
    data = view.to_prompt_data()
    text = json.dumps(data)
    assert len(data["retrieved_passages"]) == len(state.visible_passage_ids)
    assert [p["n"] for p in data["retrieved_passages"]] == list(range(1, len(state.visible_passage_ids) + 1))
    assert "25" not in text.replace("doc-7", "")  # N does not appear
    for pid in state.visible_passage_ids:
        assert f'"{pid}"' not in text
    assert set(data) == {"title", "abstract", "retrieved_passages"}


def test_render_wrong_corpus_is_user_error():
    state = document_belief_states(make_document("a", 12))[0]
    with pytest.raises(UserInputError, match="does not have"):
        render_beliefs([state], [make_document("b", 12)])
    bad = BeliefState("a#0", "a", 0, 0, 1, ("zzz",), 1.0)
    with pytest.raises(UserInputError, match="zzz"):
        render_belief(bad, make_document("a", 3))


def test_write_read_round_trip(tmp_path):
    corpus = make_corpus(5, seed=3)
    path = write_corpus(tmp_path / "corpus.jsonl", corpus)
    loaded = load_corpus_records(path)
    assert [d["doc_id"] for d in loaded] == [d["doc_id"] for d in corpus]
    states = synthesize_belief_states(loaded, delta=7, seed=4)
    out = tmp_path / "beliefs.jsonl"
    assert write_belief_states(out, states) == len(states)
    rec = json.loads(out.read_text().splitlines()[0])
    assert {"doc_id", "state_id", "visible_passage_ids", "true_completeness"} <= set(rec)
    assert read_belief_states(out) == states


def test_read_errors_name_line_and_field(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_text('{"doc_id": "a", "state_id": "a#0", "visible_passage_ids": ["p1"], "true_completeness": 1.5, '
                 '"n_goal_passages": 1}\n')
    with pytest.raises(UserInputError, match=r"b.jsonl:1.*true_completeness"):
        read_belief_states(p)
    bad_corpus = tmp_path / "c.jsonl"
    bad_corpus.write_text('{"doc_id": "a", "sections": [{"title": "s", "passages": [{"id": 3, "text": "x"}]}]}\n')
    with pytest.raises(UserInputError, match=r"c.jsonl"):
        load_corpus_records(bad_corpus)


def test_old_name_goal_passages_still_works_with_a_future_warning():
    import seekbench.env.conformal as conformal

    with pytest.warns(FutureWarning, match="renamed document_goal_passages"):
        assert conformal.goal_passages is document_goal_passages
