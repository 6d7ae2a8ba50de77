"""Boosted trees exported as arrays (_trees.py): our numpy walk against scikit-learn's own predict_proba."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from seekbench.annotate.offline._trees import TREE_PARAMS, check_trees, fit_trees, tree_proba


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(3)
    x = rng.random((300, 4))
    positive = (x[:, 0] + 0.5 * x[:, 1] * (x[:, 2] > 0.5) + 0.2 * rng.random(300)) > 0.8
    return x, positive, fit_trees(x, positive, seed=0)


def test_walk_equals_scikit_learn(fitted):
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, positive, model = fitted
    # The independent reference: the same fit's own probabilities.
    ref = HistGradientBoostingClassifier(**TREE_PARAMS, early_stopping=False, random_state=0)
    ref.fit(x, positive.astype(int))
    new = np.random.default_rng(4).random((50, 4))
    np.testing.assert_allclose(tree_proba(model, new), ref.predict_proba(new)[:, 1], rtol=0, atol=1e-12)
    assert len(model["trees"]) == TREE_PARAMS["max_iter"] and model["n_features"] == 4


def test_fitting_twice_gives_the_same_arrays(fitted):
    x, positive, model = fitted
    assert fit_trees(x, positive, seed=0) == model


def test_missing_values_follow_the_fit(fitted):
    _, _, model = fitted
    # The training data had no NaN, so scikit-learn sends missing values to the child with more
    # samples; whatever that is, a NaN row gets a probability, never NaN.
    p = tree_proba(model, np.array([[np.nan, 0.5, 0.5, 0.5]]))
    assert np.isfinite(p).all() and 0 < p[0] < 1


def test_malformed_trees_are_rejected(fitted):
    _, _, model = fitted
    check_trees(model, 4)
    with pytest.raises(ValueError, match="feature count"):
        check_trees(model, 5)
    bad = copy.deepcopy(model)
    inner = bad["trees"][0]["leaf"].index(False)
    bad["trees"][0]["left"][inner] = inner  # a node its own child: the walk would never end
    with pytest.raises(ValueError, match="child index"):
        check_trees(bad, 4)
    bad = copy.deepcopy(model)
    bad["trees"][0]["feature"][inner] = 7
    with pytest.raises(ValueError, match="feature index"):
        check_trees(bad, 4)
    bad = copy.deepcopy(model)
    bad["trees"][0]["value"].pop()
    with pytest.raises(ValueError, match="lengths"):
        check_trees(bad, 4)
