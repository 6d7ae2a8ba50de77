"""The learned judge: JSON models equal to scikit-learn's, safe loading, grouped CV, the shared-data numbers."""

from __future__ import annotations

import copy
import json
import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from seekbench import SeekbenchWarning, UserInputError
from seekbench.analysis import cross_validate_learned, grouped_folds, train_learned_model
from seekbench.annotate.offline import LearnedJudge, LearnedModel, fit_learned_model, human_labels, load_offline_judge
from seekbench.annotate.offline._context import trace_views
from seekbench.annotate.offline._learned import PARAMS, TREE_FIELDS, training_examples, view_inputs
from seekbench.annotate.offline._trees import TREE_PARAMS
from seekbench.traces import FIELDS_BY_KIND, LABEL_VALUES


@pytest.fixture(scope="module")
def sample_model(sample_traces):
    return fit_learned_model(sample_traces, human_labels(sample_traces), seed=0)


def test_json_model_predicts_like_sklearn(sample_traces, sample_model):
    """The numpy/scipy prediction from the JSON arrays equals a pipeline fitted directly with scikit-learn
    (for the grounding of reasoning steps, averaged with boosted trees fitted directly on the scores)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    examples = training_examples(trace_views(sample_traces), human_labels(sample_traces))
    for (kind, field), (views, y) in examples.items():
        m = sample_model.fields[f"{kind}.{field}"]
        texts, scores = view_inputs(views, m.score_names)
        vec = TfidfVectorizer(ngram_range=(1, 2), min_df=PARAMS["min_df"], max_features=PARAMS["max_features"],
                              sublinear_tf=True)
        scaler = StandardScaler().fit(scores)
        x = sp.hstack([vec.fit_transform(texts), scaler.transform(scores)], format="csr")
        clf = LogisticRegression(C=1.0, class_weight="balanced", max_iter=PARAMS["max_iter"], random_state=0).fit(x, y)
        proba = clf.predict_proba(x)[:, -1]
        if (kind, field) in TREE_FIELDS:
            trees = HistGradientBoostingClassifier(**TREE_PARAMS, early_stopping=False, random_state=0)
            proba = 0.5 * (proba + trees.fit(scores, np.asarray(y) == clf.classes_[1]).predict_proba(scores)[:, 1])
        if m.threshold is None:
            expected = clf.predict(x).tolist()
        else:  # a calibrated field: classes[1] when its probability reaches the threshold
            expected = [clf.classes_[int(p >= m.threshold)] for p in proba]
        assert m.predict(texts, scores) == expected, (kind, field)
        ours = m.features(texts, scores) @ np.asarray(m.coef).T + np.asarray(m.intercept)
        theirs = clf.decision_function(x).reshape(ours.shape)
        np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_save_load_roundtrip(tmp_path, sample_traces, sample_model, strip_time):
    path = tmp_path / "m.json"
    sample_model.save(path)
    json.loads(path.read_text())  # plain JSON
    loaded = LearnedModel.load(path)
    assert loaded.sha256 == sample_model.sha256
    a = LearnedJudge(sample_model).label_traces(sample_traces, rater="l")
    b = LearnedJudge(loaded).label_traces(sample_traces, rater="l")
    assert strip_time(a) == strip_time(b)


def test_unsafe_or_broken_model_files_refused(tmp_path, sample_model):
    # A pickle is never unpickled: binary pickles fail as text, ASCII ones as JSON.
    pkl = tmp_path / "m.pkl"
    pkl.write_bytes(pickle.dumps({"format": "seekbench.offline.learned"}))
    with pytest.raises(UserInputError, match="invalid UTF-8"):
        LearnedModel.load(pkl)
    pkl.write_bytes(pickle.dumps({"format": "seekbench.offline.learned"}, protocol=0))
    with pytest.raises(UserInputError, match="not a learned-judge model"):
        LearnedModel.load(pkl)
    bad = sample_model.to_dict()
    key = next(iter(bad["fields"]))
    bad["fields"][key]["coef"] = [[1.0]]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(UserInputError, match="malformed"):
        LearnedModel.load(tmp_path / "bad.json")
    bad = sample_model.to_dict()
    bad["fields"][key]["classes"] = ["Yes", "No"]
    (tmp_path / "bad2.json").write_text(json.dumps(bad))
    with pytest.raises(UserInputError, match="outside the ontology"):
        LearnedModel.load(tmp_path / "bad2.json")


def test_every_step_labeled_or_unscored(sample_traces, sample_model, hand_trace):
    recs = LearnedJudge(sample_model).label_traces([hand_trace, *sample_traces], rater="l")
    expected = [(t["trace_id"], st["index"], f) for t in [hand_trace, *sample_traces] for st in t["steps"]
                if st["kind"] in ("reasoning", "search", "search_result") for f in FIELDS_BY_KIND[st["kind"]]]
    assert [(r["trace_id"], r["step"], r["field"]) for r in recs] == expected
    for r in recs:
        assert (r["value"] in LABEL_VALUES[r["field"]]) != (r["unscored_reason"] is not None), r
    by_key = {(r["trace_id"], r["step"], r["field"]): r for r in recs}
    assert by_key[("hand-1", 5, "clarity")]["value"] is None  # empty observation
    assert by_key[("hand-1", 1, "search_type")]["provenance"] == {**by_key[("hand-1", 1, "search_type")]["provenance"],
                                                                   "kind": "rule", "rule": "first_search"}
    assert by_key[("hand-1", 4, "search_type")]["provenance"]["kind"] == "judge"


def test_single_class_field_is_unscored_with_reason(sample_traces):
    traces = copy.deepcopy(sample_traces)
    for t in traces:
        for st in t["steps"]:
            if st["kind"] == "search" and "grounding" in (st.get("labels") or {}):
                st["labels"]["grounding"] = "Grounded"
    model = fit_learned_model(traces, human_labels(traces))
    assert "search.grounding" not in model.fields
    assert "fewer than two classes" in model.unsupported["search.grounding"]
    recs = LearnedJudge(model).label_traces(traces[:3], rater="l")
    searches = {(t["trace_id"], s["index"]) for t in traces[:3] for s in t["steps"] if s["kind"] == "search"}
    sg = [r for r in recs if r["field"] == "grounding" and (r["trace_id"], r["step"]) in searches]
    assert sg and all(r["value"] is None and "fewer than two classes" in r["unscored_reason"] for r in sg)


def test_training_is_deterministic(sample_traces):
    a = fit_learned_model(sample_traces, human_labels(sample_traces), seed=3)
    b = fit_learned_model(list(reversed(sample_traces))[::-1], human_labels(sample_traces), seed=3)
    assert a.sha256 == b.sha256


def test_grouped_folds_never_share_a_question(sample_traces):
    traces = copy.deepcopy(sample_traces)
    for t in traces[:8]:  # without question ids the normalised question text groups them
        t["question_id"] = None
    folds = grouped_folds(traces, n_splits=4)
    assert len(folds) == 4
    seen = []
    for train, test in folds:
        assert not {traces[i]["question"] for i in train} & {traces[i]["question"] for i in test}
        assert not set(train) & set(test)
        seen.extend(test)
    assert sorted(seen) == list(range(len(traces)))
    with pytest.raises(UserInputError, match="at least 2 questions"):
        grouped_folds(traces[:1])


def test_model_card(sample_traces):
    model = train_learned_model(sample_traces, human_labels(sample_traces), seed=7, n_splits=3, source="/x/s.jsonl")
    card = model.card
    assert card["seed"] == 7
    assert len(card["training_data"]["sha256"]) == 64
    assert card["training_data"]["n_traces"] == 48 and card["training_data"]["source"] == "s.jsonl"
    assert card["cv"]["n_splits"] == 3
    assert set(card["cv"]["per_field"]) >= {"reasoning_type", "grounding (reasoning)", "clarity", "sufficiency"}


def test_loader_model_path_and_fallback(tmp_path, sample_model, sample_traces):
    (tmp_path / "models").mkdir()
    sample_model.save(tmp_path / "models" / "m.json")
    judge = load_offline_judge({"name": "mine", "kind": "learned", "model_path": "models/m.json",
                                "path": str(tmp_path / "mine.toml")})
    assert judge.name == "mine" and judge.model.sha256 == sample_model.sha256
    with pytest.raises(UserInputError, match="not found; train one"):
        load_offline_judge({"name": "x", "kind": "learned", "model_path": "nope.json", "if_missing": "error",
                            "path": str(tmp_path / "x.toml")})
    with pytest.raises(UserInputError, match="if_missing"):
        load_offline_judge({"name": "x", "kind": "learned", "if_missing": "maybe"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judge = load_offline_judge({"name": "x", "kind": "learned", "model_path": str(tmp_path / "nope.json")})
    assert any(issubclass(w.category, SeekbenchWarning) and "training on the embedded sample" in str(w.message)
               for w in caught)
    assert judge.label_traces(sample_traces[:1], rater="x")


def test_shipped_learned_judge_file(sample_traces):
    from seekbench.annotate import load_judge_config

    with warnings.catch_warnings():
        warnings.simplefilter("error", SeekbenchWarning)  # the shipped model file exists: no fallback
        judge = load_offline_judge(load_judge_config("learned"))
    # The shipped model: trained on the SeekBench human labels, with the license named in its card.
    assert judge.model.card["training_data"]["source"].startswith("seekbench_human_190.jsonl")
    assert judge.model.card["training_data"]["license"].startswith("Apache-2.0")
    recs = judge.label_traces(sample_traces[:4], rater="learned")
    assert all(r["value"] is not None or r["unscored_reason"] for r in recs)


@pytest.fixture(scope="module")
def shared_cv(shared_traces):
    return cross_validate_learned(shared_traces, human_labels(shared_traces), n_splits=5, seed=0)


@pytest.mark.shared_data
def test_shared_cv_folds_grouped_by_question(shared_traces, shared_cv):
    assert len(shared_cv.folds) == 5
    tested = []
    for train, test in shared_cv.folds:
        assert not {shared_traces[i]["question_id"] for i in train} & {shared_traces[i]["question_id"] for i in test}
        assert not {shared_traces[i]["trace_id"] for i in train} & {shared_traces[i]["trace_id"] for i in test}
        tested.extend(test)
    assert sorted(tested) == list(range(len(shared_traces)))
    # Every out-of-fold record comes from the fold that held its trace out.
    assert {r["trace_id"] for r in shared_cv.records} == {t["trace_id"] for t in shared_traces}


@pytest.mark.shared_data
def test_shared_cv_kappas(shared_cv):
    table = shared_cv.table.set_index("row")
    print("\nlearned judge, 5-fold CV grouped by question (190 shared traces):\n"
          + table.drop(columns="classes").to_string())
    for row in ["reasoning_type", "grounding (reasoning)", "search_type (rule-derived)", "search_type (judge-decided)",
                "clarity", "sufficiency"]:
        assert table.loc[row, "n"] > 200 and table.loc[row, "n_unscored"] == 0, row
        assert math.isfinite(table.loc[row, "kappa"]) and -1 <= table.loc[row, "kappa"] <= 1, row
    # Human search-step grounding is only ever "Grounded": no classifier, every such step unscored, kappa NaN.
    assert table.loc["grounding (search)", "n"] == 0
    assert table.loc["grounding (search)", "n_unscored"] == 252
    assert math.isnan(table.loc["grounding (search)", "kappa"])
    summary = shared_cv.summary()
    assert len(summary["reasoning_type"]["fold_kappas"]) == 5


def test_cross_validation_refuses_folds_that_split_a_question(sample_traces):
    import numpy as np

    from seekbench import UserInputError
    from seekbench.analysis import cross_validate_learned
    from seekbench.annotate.offline import human_labels, question_groups

    traces = sample_traces
    groups = question_groups(traces)
    first = [i for i, g in enumerate(groups) if g == groups[0]]
    assert len(first) > 1  # the sample data has several agents per question
    idx = np.arange(len(traces))
    bad = [(idx[idx != first[0]], np.array([first[0]]))]  # one trace of a question tested, the others trained on
    with pytest.raises(UserInputError, match="a question has traces on both sides of a fold"):
        cross_validate_learned(traces, human_labels(traces), folds=bad)
