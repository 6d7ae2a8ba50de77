"""Embedding features of the learned judge: hand-derived cosines with a toy encoder, and the two model variants."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from seekbench import UserInputError
from seekbench.annotate.offline import (
    EMBED_SCORE_NAMES,
    LearnedJudge,
    LearnedModel,
    fit_learned_model,
    human_labels,
    trace_views,
)
from seekbench.annotate.offline._embed import embedding_scores, sentences
from seekbench.annotate.offline._learned import LEXICAL_ONLY_FIELDS

# A toy encoder: one axis per keyword (plus one for "none of them"), L2-normalised, so every cosine
# below is derived by hand from which keywords two texts share.
KEYWORDS = ("leo", "thames", "river", "novelist")


class ToyEncoder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            words = set(re.findall(r"[a-z]+", t.lower()))
            v = np.array([float(k in words) for k in KEYWORDS] + [0.0])
            if not v.any():
                v[-1] = 1.0
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


def test_sentences_split_after_terminal_punctuation():
    assert sentences("Leo died. He lived in Surrey!  Why? ") == ["Leo died.", "He lived in Surrey!", "Why?"]
    assert sentences("") == []


def test_hand_derived_cosines(hand_trace):
    enc = ToyEncoder()
    (scores,) = embedding_scores(trace_views([hand_trace]), enc)
    assert len(enc.calls) == 1  # every distinct text embedded in one call
    assert len(enc.calls[0]) == len(set(enc.calls[0]))
    by_step = {st["index"]: sc for st, sc in zip(hand_trace["steps"], scores, strict=True)}
    # Step 0 (leo) comes before any document: every document score is 0.
    assert by_step[0]["emb_doc_max"] == by_step[0]["emb_last_max"] == by_step[0]["emb_sent_min"] == 0.0
    # Step 3: leo+thames = (1,1,0,0)/sqrt2; doc 1 of step 2 has leo, thames, river = (1,1,1,0)/sqrt3 -> 2/sqrt6;
    # doc 2 (novelist) is orthogonal. The question has leo, river: cosine 1/2.
    s3 = by_step[3]
    assert s3["emb_doc_max"] == s3["emb_last_max"] == s3["emb_sent_mean"] == s3["emb_sent_min"] == round(2 / 6**0.5, 4)
    assert s3["emb_question"] == 0.5
    # Step 10 (river): earlier docs are doc 1 (1/sqrt3) and step 9's "River Thames" doc (thames, river: 1/sqrt2);
    # the latest observation is step 9 (step 5 had no documents, so it left none to match).
    s10 = by_step[10]
    assert s10["emb_doc_max"] == s10["emb_last_max"] == round(1 / 2**0.5, 4)
    # Search step 4 (thames, river) vs the previous query (leo): orthogonal; vs doc 1: 2/sqrt6.
    assert by_step[4]["emb_prev_query"] == 0.0
    assert by_step[4]["emb_doc_max"] == round(2 / 6**0.5, 4)
    # Observation 9: its query (step 8: leo) shares nothing with the doc (thames, river); the question
    # (leo, river) shares river: 1/2.
    assert by_step[9]["emb_query_doc_max"] == by_step[9]["emb_query_doc_mean"] == 0.0
    assert by_step[9]["emb_question_doc_max"] == 0.5
    for st, sc in zip(hand_trace["steps"], scores, strict=True):
        assert list(sc) == list(EMBED_SCORE_NAMES.get(st["kind"], ()))


@pytest.fixture(scope="module")
def two_variant_model(sample_traces):
    return fit_learned_model(sample_traces, human_labels(sample_traces), seed=0, encoder=ToyEncoder())


def test_model_holds_both_variants_and_judge_says_which(sample_traces, two_variant_model, tmp_path):
    m = two_variant_model
    # Every field has an embedding variant but the lexical-only ones (reasoning grounding).
    assert set(m.embed_fields) == set(m.fields) - {"reasoning.grounding"} and m.embedder
    assert LEXICAL_ONLY_FIELDS == {("reasoning", "grounding")}
    for key, fm in m.embed_fields.items():
        assert fm.score_names[-len(EMBED_SCORE_NAMES[fm.kind]):] == list(EMBED_SCORE_NAMES[fm.kind]), key
    path = tmp_path / "m.json"
    m.save(path)
    loaded = LearnedModel.load(path)
    assert loaded.sha256 == m.sha256 and set(loaded.embed_fields) == set(m.embed_fields)
    with_embed = LearnedJudge(loaded, encoder=ToyEncoder()).label_traces(sample_traces[:6], rater="l")
    without = LearnedJudge(loaded, encoder=None).label_traces(sample_traces[:6], rater="l")
    judged = [r for r in with_embed if r["provenance"]["kind"] == "judge" and r["value"] is not None]
    assert judged and all(r["provenance"]["model"].endswith("+minilm") for r in judged)
    # Reasoning grounding is labeled by the lexical classifier even with the embedder, and says so.
    grounding = [r for r in judged if ":reasoning.grounding" in r["provenance"]["heuristic"]]
    assert grounding and all(r["provenance"]["heuristic"].endswith("(lexical)") for r in grounding)
    assert all("(lexical+minilm)" in r["provenance"]["heuristic"] for r in judged if r not in grounding)
    assert len(grounding) < len(judged)
    plain = [r for r in without if r["provenance"]["kind"] == "judge" and r["value"] is not None]
    assert plain and not any(r["provenance"]["model"].endswith("+minilm") for r in plain)
    assert not any("minilm" in r["provenance"]["heuristic"] for r in plain)


def test_a_model_without_embedding_variant_never_embeds(sample_traces):
    model = fit_learned_model(sample_traces[:12], human_labels(sample_traces[:12]), seed=0)
    enc = ToyEncoder()
    judge = LearnedJudge(model, encoder=enc)
    judge.label_traces(sample_traces[:2], rater="l")
    assert judge.features == "lexical" and enc.calls == []


def test_variant_with_wrong_feature_set_refused(tmp_path, two_variant_model):
    obj = json.loads(json.dumps(two_variant_model.to_dict()))
    key = next(iter(obj["embed_fields"]))
    obj["embed_fields"][key]["feature_set"] = "lexical"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(UserInputError, match="features 'lexical' in embed_fields"):
        LearnedModel.load(path)


def test_version_1_model_files_still_load(tmp_path, sample_traces):
    model = fit_learned_model(sample_traces[:12], human_labels(sample_traces[:12]), seed=0)
    obj = model.to_dict()
    obj["format_version"] = 1
    del obj["embed_fields"], obj["embedder"]
    for entry in obj["fields"].values():
        del entry["feature_set"]
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(obj))
    loaded = LearnedModel.load(path)
    assert loaded.sha256 == model.sha256 and not loaded.embed_fields


def test_shipped_judge_without_the_extra_uses_the_lexical_variant(monkeypatch, sample_traces):
    from seekbench.annotate import load_judge_config
    from seekbench.annotate.offline import _embed, load_offline_judge

    monkeypatch.setattr(_embed, "embedding_available", lambda: False)  # as if local-embed were not installed
    judge = load_offline_judge(load_judge_config("learned"))
    assert judge.model.embed_fields and judge.features == "lexical"
    recs = judge.label_traces(sample_traces[:2], rater="learned")
    models = {r["provenance"]["model"] for r in recs if r["provenance"]["kind"] == "judge"}
    assert models == {f"learned@1:{judge.model.sha256[:12]}"}


def test_card_names_the_fields_without_embedding_variant(two_variant_model):
    from seekbench.analysis import model_card_markdown

    card = model_card_markdown(two_variant_model)
    assert "- no embedding variant (labeled by the lexical classifier in both feature sets): `reasoning.grounding`" in card
