"""Retrieval threshold semantics (strict >), monotone retrieval, and the three belief representations."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _env_helpers import make_document
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench.env import (DocumentIndex, QueryRecord, RetrievalState, TfidfEmbedder, build_belief, goal_passages,
                           missing_placeholder, retrieve)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_is_strict(dtype):
    # cosines of the query [1, 0] with these unit vectors: 1.0, 0.6, 0.0 (exact in binary at either precision)
    P = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=dtype)
    q = np.array([1.0, 0.0], dtype=dtype)
    cos_mid = float(P[1] @ q)
    assert [i for i, _ in retrieve(q, P, cos_mid)] == [0]  # exactly at theta: not retrieved
    below = float(np.nextafter(dtype(cos_mid), dtype(-1)))  # the next value down at the vectors' precision
    assert [i for i, _ in retrieve(q, P, below)] == [0, 1]  # just below: retrieved
    assert retrieve(q, P, 1.0) == []
    assert [i for i, _ in retrieve(q, P, -1.0)] == [0, 1, 2]  # everything above -1, highest first


def test_ties_in_document_order():
    P = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    assert [i for i, _ in retrieve(np.array([1.0, 0.0]), P, 0.5)] == [1, 2]


def test_document_index_matches_full_scores(pets_doc):
    emb = TfidfEmbedder().fit([p["text"] for p in goal_passages(pets_doc)])
    index = DocumentIndex(pets_doc, emb)
    query = "cats hunting mice at dawn"
    full = retrieve(emb.embed([query])[0], index.vectors, 0.05)
    hits = index.search(query, 0.05)
    assert [(h.position, round(h.score, 6)) for h in hits] == [(i, round(s, 6)) for i, s in full]
    assert {h.passage_id for h in hits[:2]} == {"p0", "p1"} and hits[0].section == "Cats"


@given(st.lists(st.lists(st.integers(0, 9), max_size=6), max_size=12))
def test_retrieval_state_is_monotone(batches):
    s = RetrievalState(10)
    seen: set[int] = set()
    last = 0.0
    for b in batches:
        new = s.add(b)
        assert new == sorted(set(b) - seen)
        seen |= set(b)
        assert s.completeness >= last and s.completeness == len(seen) / 10
        last = s.completeness
    assert s.retrieved == sorted(seen)


def test_trajectory_is_verbatim_with_repeats(pets_doc):
    history = [QueryRecord(1, "cats", (1, 0)), QueryRecord(1, "nothing", ()), QueryRecord(2, "cats again", (0,))]
    b = build_belief("trajectory", pets_doc, history)
    assert [pid for pid, _, _ in b.passages] == ["p1", "p0", "p0"]
    assert b.queries == ["cats", "nothing", "cats again"] and b.n_visible == 2 and b.n_goal is None
    assert b.text.index("step 1 query: cats") < b.text.index("no passage above") < b.text.index("cats again")
    assert b.history[0] == (1, "cats", ("p1", "p0"))


def test_deduplicated_is_unique_in_document_order(pets_doc):
    history = [QueryRecord(1, "a", (4, 1)), QueryRecord(2, "b", (1, 0))]
    b = build_belief("deduplicated", pets_doc, history)
    assert [pid for pid, _, _ in b.passages] == ["p0", "p1", "p4"]
    assert b.queries == [] and "a" not in b.text.split("\n")
    assert b.n_goal is None and not b.gaps


def _random_doc(sizes):
    return make_document(sections={f"S{i}": [f"text {i}-{j} " * 3 for j in range(n)] for i, n in enumerate(sizes)})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=5), st.data())
def test_oracle_never_hides_a_retrieved_passage(sizes, data):
    doc = _random_doc(sizes)
    passages = goal_passages(doc)
    n = len(passages)
    positions = data.draw(st.lists(st.lists(st.integers(0, n - 1), max_size=4), max_size=6))
    history = [QueryRecord(i + 1, f"q{i}", tuple(p)) for i, p in enumerate(positions)]
    b = build_belief("oracle", doc, history)
    retrieved = {i for p in positions for i in p}
    for i, p in enumerate(passages):
        if i in retrieved:
            assert f"[{p['id']}] {p['text']}" in b.text
            assert missing_placeholder(p["id"]) not in b.text
        else:
            assert b.text.count(missing_placeholder(p["id"])) == 1
    assert len(re.findall(r"<missing id=[^>]+>", b.text)) == n - len(retrieved) == len(b.gaps)
    assert {pid for pid, _, _ in b.passages} == {passages[i]["id"] for i in retrieved}
    assert b.n_goal == n and b.n_visible == len(retrieved)
    # section structure in order: every section heading, passages under their own section
    assert [ln[3:] for ln in b.text.split("\n") if ln.startswith("## ")] == [s["title"] for s in doc["sections"]]
    for g in b.gaps:
        assert passages[g.position]["id"] == g.passage_id


def test_oracle_gap_neighbours(pets_doc):
    b = build_belief("oracle", pets_doc, [QueryRecord(1, "q", (0, 3))])
    gaps = {g.passage_id: g for g in b.gaps}
    assert gaps["p1"].previous_text.startswith("Cats are") and gaps["p1"].next_text is None
    assert gaps["p2"].previous_text is None and gaps["p2"].next_text.startswith("A dog barks")


def test_unknown_belief(pets_doc):
    with pytest.raises(ValueError, match="unknown belief"):
        build_belief("summary", pets_doc, [])
