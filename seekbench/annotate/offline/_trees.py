"""Gradient-boosted trees on a step's scores, stored as plain arrays and applied with numpy.

The grounding of reasoning steps depends on interactions a linear model misses (a high
overlap with the documents means little before any search, or in a plan that restates the
question), so its classifier averages the logistic regression's probability with that of
scikit-learn's ``HistGradientBoostingClassifier`` fitted on the same numeric scores (not the
TF-IDF columns). The fitted trees are exported as JSON-safe arrays; prediction walks them
with numpy, so a model file never holds pickle and applying it needs neither the fitted
object nor scikit-learn's private classes.
"""

from __future__ import annotations

import numpy as np

#: Fixed in advance (not searched on any split); ``random_state`` is the model's seed.
TREE_PARAMS: dict[str, float | int] = {
    "max_iter": 200,
    "learning_rate": 0.05,
    "max_leaf_nodes": 8,
    "min_samples_leaf": 20,
    "l2_regularization": 1.0,
}

_ARRAYS = ("feature", "threshold", "missing_left", "left", "right", "leaf", "value")


def fit_trees(x: np.ndarray, positive: np.ndarray, *, seed: int = 0) -> dict:
    """Fit the boosted trees on scores ``x`` for the binary target ``positive`` and export them.

    Parameters
    ----------
    x : ndarray, shape (n, k)
        Raw (unscaled) scores.
    positive : ndarray of bool, shape (n,)
        True for the class whose probability :func:`tree_proba` returns; both values must occur.
    seed : int
        ``random_state`` (nothing is subsampled with these parameters; fixed for safety).

    Returns
    -------
    dict
        ``{"baseline": float, "n_features": k, "trees": [{array name: list}, ...]}``.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # one thread: the same histograms, so the same trees, on every machine
        clf = HistGradientBoostingClassifier(**TREE_PARAMS, early_stopping=False, random_state=seed)
        clf.fit(np.asarray(x, dtype=np.float64), np.asarray(positive, dtype=int))
    trees = []
    for (predictor,) in clf._predictors:  # binary: one tree per iteration
        nodes = predictor.nodes
        trees.append(
            {
                "feature": nodes["feature_idx"].astype(int).tolist(),
                "threshold": nodes["num_threshold"].astype(float).tolist(),
                "missing_left": nodes["missing_go_to_left"].astype(bool).tolist(),
                "left": nodes["left"].astype(int).tolist(),
                "right": nodes["right"].astype(int).tolist(),
                "leaf": nodes["is_leaf"].astype(bool).tolist(),
                "value": nodes["value"].astype(float).tolist(),
            }
        )
    return {"baseline": float(np.ravel(clf._baseline_prediction)[0]), "n_features": int(x.shape[1]), "trees": trees}


def tree_proba(model: dict, x: np.ndarray) -> np.ndarray:
    """Probability of the positive class for each row of ``x`` (``predict_proba(x)[:, 1]`` of the fit).

    A row goes left when its value is at most the node's threshold, and a missing value (NaN)
    the way the fit sent missing values.
    """
    x = np.asarray(x, dtype=np.float64)
    raw = np.full(len(x), model["baseline"])
    rows = np.arange(len(x))
    for t in model["trees"]:
        feature, threshold = np.asarray(t["feature"]), np.asarray(t["threshold"])
        left, right = np.asarray(t["left"]), np.asarray(t["right"])
        leaf, missing_left = np.asarray(t["leaf"], dtype=bool), np.asarray(t["missing_left"], dtype=bool)
        node = np.zeros(len(x), dtype=int)
        while True:
            inner = ~leaf[node]
            if not inner.any():
                break
            r, n = rows[inner], node[inner]
            v = x[r, feature[n]]
            go_left = np.where(np.isnan(v), missing_left[n], v <= threshold[n])
            node[inner] = np.where(go_left, left[n], right[n])
        raw += np.asarray(t["value"])[node]
    return 1.0 / (1.0 + np.exp(-raw))


def check_trees(model: object, n_features: int) -> None:
    """Raise ValueError unless ``model`` is an exported tree ensemble over ``n_features`` columns."""
    if not isinstance(model, dict) or not isinstance(model.get("trees"), list):
        raise ValueError("trees: expected an object with a list of trees")
    if model.get("n_features") != n_features or not np.isfinite(float(model.get("baseline", np.nan))):
        raise ValueError("trees: feature count or baseline does not match")
    for t in model["trees"]:
        if not isinstance(t, dict) or set(t) != set(_ARRAYS):
            raise ValueError("trees: a tree lacks arrays")
        n = len(t["leaf"])
        if n == 0 or any(len(t[a]) != n for a in _ARRAYS):
            raise ValueError("trees: array lengths differ")
        inner = ~np.asarray(t["leaf"], dtype=bool)
        for a in ("left", "right"):
            child = np.asarray(t[a], dtype=int)[inner]
            # Children come after their parent, so a walk always ends at a leaf.
            if (child <= np.flatnonzero(inner)).any() or (child >= n).any():
                raise ValueError("trees: a child index is out of order or range")
        feats = np.asarray(t["feature"], dtype=int)[inner]
        if (feats < 0).any() or (feats >= n_features).any():
            raise ValueError("trees: a feature index is out of range")
        if not np.isfinite(np.asarray(t["value"], dtype=float)).all():
            raise ValueError("trees: non-finite leaf values")
