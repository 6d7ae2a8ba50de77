"""Prior-matched decision thresholds by inner grouped CV: an independent scikit-learn rebuild, old models, checks."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from seekbench import UserInputError
from seekbench.annotate.offline import LearnedModel, fit_learned_model, human_labels, question_groups
from seekbench.annotate.offline._context import trace_views
from seekbench.annotate.offline._fit import CALIBRATED, prior_matched_threshold
from seekbench.annotate.offline._learned import PARAMS, fit_field_model, training_examples, view_inputs
from seekbench.annotate.offline._trees import TREE_PARAMS, tree_proba


@pytest.fixture(scope="module")
def grounding(sample_traces):
    views = trace_views(sample_traces)
    group_of = dict(zip((t["trace_id"] for t in sample_traces), question_groups(sample_traces), strict=True))
    steps, ys = training_examples(views, human_labels(sample_traces))[("reasoning", "grounding")]
    return steps, ys, [group_of[v.trace_id] for v in steps]


def test_threshold_equals_an_independent_rebuild(grounding):
    """Inner GroupKFold, a scikit-learn pipeline per inner fold (the regression's probability averaged
    with boosted trees' on the scores), the (1 - share) quantile of P(classes[1])."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    steps, ys, groups = grounding
    m = fit_field_model("reasoning", "grounding", steps, ys)
    texts, scores = view_inputs(steps, m.score_names)
    y = np.asarray(ys)
    proba = np.zeros(len(y))
    for tr, te in GroupKFold(n_splits=5).split(scores, groups=groups):
        vec = TfidfVectorizer(ngram_range=(1, 2), min_df=PARAMS["min_df"] if len(tr) >= 20 else 1,
                              max_features=PARAMS["max_features"], sublinear_tf=True)
        sc = StandardScaler().fit(scores[tr])
        x_tr = sp.hstack([vec.fit_transform([texts[i] for i in tr]), sc.transform(scores[tr])], format="csr")
        x_te = sp.hstack([vec.transform([texts[i] for i in te]), sc.transform(scores[te])], format="csr")
        clf = LogisticRegression(C=PARAMS["C"], class_weight="balanced", max_iter=PARAMS["max_iter"],
                                 random_state=0).fit(x_tr, y[tr])
        trees = HistGradientBoostingClassifier(**TREE_PARAMS, early_stopping=False, random_state=0)
        trees.fit(scores[tr], (y[tr] == sorted(set(ys))[1]).astype(int))
        proba[te] = 0.5 * (clf.predict_proba(x_te)[:, 1] + trees.predict_proba(scores[te])[:, 1])
    share = np.mean(y == sorted(set(ys))[1])
    expected = np.quantile(proba, 1 - share)
    got = prior_matched_threshold("reasoning", "grounding", steps, ys, groups)
    assert got == pytest.approx(expected, abs=1e-9)
    # By construction the inner out-of-fold labels have the training share of classes[1] (ties aside).
    assert np.mean(proba >= got) == pytest.approx(share, abs=2 / len(y))


def test_only_calibrated_fields_carry_a_threshold(sample_traces, grounding):
    model = fit_learned_model(sample_traces, human_labels(sample_traces), seed=0)
    steps, ys, groups = grounding
    for key, m in model.fields.items():
        if (m.kind, m.field) in CALIBRATED:
            assert m.threshold == prior_matched_threshold(m.kind, m.field, steps, ys, groups)
        else:
            assert m.threshold is None, key


def test_single_group_gives_no_threshold(grounding):
    steps, ys, _ = grounding
    assert prior_matched_threshold("reasoning", "grounding", steps, ys, ["q"] * len(ys)) is None


def test_model_without_thresholds_still_loads(tmp_path, sample_traces):
    """A format-2 file (no threshold, fewer reasoning scores) predicts as LogisticRegression.predict."""
    model = fit_learned_model(sample_traces, human_labels(sample_traces), seed=0)
    raw = model.to_dict()
    raw["format_version"] = 2
    for entry in raw["fields"].values():
        del entry["threshold"], entry["trees"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(raw))
    old = LearnedModel.load(path)
    m = old.fields["reasoning.grounding"]
    assert m.threshold is None
    steps = [v for vs in trace_views(sample_traces) for v in vs if v.kind == "reasoning" and not v.is_empty]
    texts, scores = view_inputs(steps, m.score_names)
    z = m.decision(texts, scores).ravel()
    assert m.predict(texts, scores) == [m.classes[int(v > 0)] for v in z]


def test_model_without_trees_still_loads(tmp_path, sample_traces):
    """A format-3 file (a threshold, no trees) predicts with the regression's probability alone."""
    model = fit_learned_model(sample_traces, human_labels(sample_traces), seed=0)
    raw = model.to_dict()
    raw["format_version"] = 3
    for entry in raw["fields"].values():
        del entry["trees"]
    path = tmp_path / "v3.json"
    path.write_text(json.dumps(raw))
    m = LearnedModel.load(path).fields["reasoning.grounding"]
    assert m.trees is None and m.threshold is not None
    steps = [v for vs in trace_views(sample_traces) for v in vs if v.kind == "reasoning" and not v.is_empty]
    texts, scores = view_inputs(steps, m.score_names)
    p = 1 / (1 + np.exp(-m.decision(texts, scores).ravel()))
    assert m.predict(texts, scores) == [m.classes[int(v >= m.threshold)] for v in p]
    # The shipped format keeps them: the same model with its trees predicts from the averaged probability.
    full = model.fields["reasoning.grounding"]
    assert full.trees is not None
    avg = 0.5 * (p + tree_proba(full.trees, scores))
    assert full.predict(texts, scores) == [full.classes[int(v >= full.threshold)] for v in avg]


def test_malformed_trees_refused(tmp_path, sample_traces):
    raw = fit_learned_model(sample_traces, human_labels(sample_traces), seed=0).to_dict()
    raw["fields"]["reasoning.grounding"]["trees"]["n_features"] += 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match="trees"):
        LearnedModel.load(path)


@pytest.mark.parametrize("value", [0.0, 1.0, 1.5])
def test_threshold_outside_the_open_unit_interval_refused(tmp_path, sample_traces, value):
    raw = fit_learned_model(sample_traces, human_labels(sample_traces), seed=0).to_dict()
    raw["fields"]["reasoning.grounding"]["threshold"] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match="threshold"):
        LearnedModel.load(path)


def test_unknown_score_name_refused(tmp_path, sample_traces):
    raw = fit_learned_model(sample_traces, human_labels(sample_traces), seed=0).to_dict()
    entry = raw["fields"]["reasoning.grounding"]
    entry["score_names"][0] = "made_up"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match="unknown score names"):
        LearnedModel.load(path)
