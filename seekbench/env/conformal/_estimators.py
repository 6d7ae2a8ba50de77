"""Completeness estimators that need no LLM, their features, and the estimates file.

An estimator maps a belief state (deduplicated form, visible passages only, N
hidden) to c_hat in [0, 1] (spec section 8). Two baselines:

- :class:`MeanEstimator`: c_hat = mean of c over the states it was fitted on
  (the calibration half); the reference against which a raw R^2 of 0 is
  measured.
- :class:`FeatureRegressionEstimator`: least squares of c on features of the
  visible passages only, c_hat = clip(b0 + sum_j b_j x_j, 0, 1), with
  x = (number of visible passages, log(1 + total characters), number of
  sections with a visible passage, mean passage length in characters / 1000).

Both are fitted on calibration states only. Calibration scores of a fitted
estimator must not come from the fit itself (in-sample residuals are too
small and q_hat too tight): :func:`cross_fit_predict` gives out-of-fold
estimates, folds by document.

The estimates file (JSONL) has one line per (state, estimator):
``{doc_id, state_id, true_completeness, estimator, c_hat, reason?}``;
``c_hat`` null means unscored, with the reason.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ..._errors import UserInputError
from ._synthetic import BeliefState, BeliefView

FEATURES = ("n_visible", "log_chars", "n_sections_visible", "mean_kchars")
ESTIMATE_COLUMNS = ["doc_id", "state_id", "true_completeness", "estimator", "c_hat", "reason"]


def belief_features(views: Sequence[BeliefView]) -> pd.DataFrame:
    """Features of the visible passages of each belief (nothing that needs N), indexed by ``state_id``.

    Columns: ``n_visible``, ``log_chars`` = log(1 + total characters),
    ``n_sections_visible`` (distinct sections with a visible passage),
    ``mean_kchars`` (mean passage length / 1000), and ``doc_id``.
    """
    rows = []
    for v in views:
        lengths = [len(p.text) for p in v.passages]
        rows.append(
            {
                "state_id": v.state_id,
                "doc_id": v.doc_id,
                "n_visible": float(len(lengths)),
                "log_chars": math.log1p(sum(lengths)),
                "n_sections_visible": float(len({p.section_index for p in v.passages})),
                "mean_kchars": (sum(lengths) / len(lengths) / 1000.0) if lengths else 0.0,
            }
        )
    return pd.DataFrame(rows, columns=["state_id", "doc_id", *FEATURES]).set_index("state_id")


def baseline_features(states: Sequence[BeliefState], views: Sequence[BeliefView]) -> pd.DataFrame:
    """:func:`belief_features` plus ``true_completeness``: the input of refitted baselines in evaluation."""
    feats = belief_features(views)
    truth = pd.Series({s.state_id: s.true_completeness for s in states}, name="true_completeness")
    return feats.assign(true_completeness=truth.reindex(feats.index))


class MeanEstimator:
    """c_hat = the mean true completeness of the fitted (calibration) states.

    Attributes
    ----------
    mean_ : float

    Examples
    --------
    >>> MeanEstimator().fit(None, [0.2, 0.4]).predict([[0], [0], [0]])
    array([0.3, 0.3, 0.3])
    """

    name = "mean"

    def fit(self, features, c) -> MeanEstimator:
        c = np.asarray(c, dtype=float)
        if c.size == 0:
            raise UserInputError("cannot fit the mean estimator on zero calibration states")
        self.mean_ = float(c.mean())
        return self

    def predict(self, features) -> np.ndarray:
        return np.full(len(features), self.mean_)


class FeatureRegressionEstimator:
    """Least squares of c on visible-passage features; c_hat = clip(X b, 0, 1).

    Parameters
    ----------
    features : tuple of str
        Columns of :func:`belief_features` to use.

    Attributes
    ----------
    coef_ : ndarray
        Intercept first, then one coefficient per feature (minimum-norm
        solution when features are collinear).
    """

    name = "regression"

    def __init__(self, features: Sequence[str] = FEATURES) -> None:
        self.features = tuple(features)

    def _design(self, features) -> np.ndarray:
        x = (
            np.asarray(features[list(self.features)], dtype=float)
            if isinstance(features, pd.DataFrame)
            else np.asarray(features, dtype=float)
        )
        return np.column_stack([np.ones(len(x)), x])

    def fit(self, features, c) -> FeatureRegressionEstimator:
        c = np.asarray(c, dtype=float)
        if c.size == 0:
            raise UserInputError("cannot fit the regression estimator on zero calibration states")
        self.coef_ = np.linalg.lstsq(self._design(features), c, rcond=None)[0]
        return self

    def predict(self, features) -> np.ndarray:
        return np.clip(self._design(features) @ self.coef_, 0.0, 1.0)


BASELINES = {"mean": MeanEstimator, "regression": FeatureRegressionEstimator}


def make_baseline(name: str):
    """A fresh baseline estimator by name (``mean`` or ``regression``)."""
    if name not in BASELINES:
        raise UserInputError(f"unknown baseline estimator {name!r}; use one of {', '.join(BASELINES)}")
    return BASELINES[name]()


def document_folds(groups, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold index per row, whole groups (documents) per fold, fold sizes in groups as equal as possible."""
    groups = np.asarray(groups)
    uniq = np.unique(groups)
    perm = rng.permutation(len(uniq))
    fold_of = dict(zip(uniq[perm], np.arange(len(uniq)) % n_folds, strict=True))
    return np.array([fold_of[g] for g in groups], dtype=int)


def cross_fit_predict(
    estimator, features: pd.DataFrame, c, groups, *, n_folds: int = 5, seed: int | np.random.Generator = 0
) -> np.ndarray:
    """Out-of-fold c_hat: each state is estimated by a model fitted on the other folds' documents.

    With fewer documents than ``n_folds``, one fold per document. With one
    document, the estimator cannot be fitted out of fold: NaN (unscored).

    Parameters
    ----------
    estimator : MeanEstimator or FeatureRegressionEstimator
        Refitted per fold (its fitted state is overwritten).
    features : DataFrame
        Rows aligned with ``c`` and ``groups``.
    c : array-like
        True completeness.
    groups : array-like
        Document of each row.
    n_folds : int, default 5
    seed : int or Generator

    Returns
    -------
    ndarray
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    c = np.asarray(c, dtype=float)
    n_groups = len(np.unique(np.asarray(groups)))
    out = np.full(len(c), np.nan)
    if n_groups < 2:
        return out
    folds = document_folds(groups, min(n_folds, n_groups), rng)
    for f in np.unique(folds):
        test = folds == f
        estimator.fit(features.iloc[~test], c[~test])
        out[test] = estimator.predict(features.iloc[test])
    return out


def baseline_estimates(
    states: Sequence[BeliefState], views: Sequence[BeliefView], name: str, *, n_folds: int = 5, seed: int = 0
) -> pd.DataFrame:
    """Cross-fitted estimates of a baseline for a pool of states, as estimates-file rows.

    Every state's c_hat comes from a model fitted on other documents only
    (:func:`cross_fit_predict`), so the rows can be calibrated and tested by
    ``seekbench conformal`` like any fixed estimator.
    """
    feats = belief_features(views)
    c = np.array([s.true_completeness for s in states])
    groups = [s.doc_id for s in states]
    c_hat = cross_fit_predict(make_baseline(name), feats, c, groups, n_folds=n_folds, seed=seed)
    return pd.DataFrame(
        {
            "doc_id": groups,
            "state_id": [s.state_id for s in states],
            "true_completeness": c,
            "estimator": name,
            "c_hat": c_hat,
            "reason": [None if np.isfinite(v) else "a single document: cannot be fitted out of fold" for v in c_hat],
        },
        columns=ESTIMATE_COLUMNS,
    )


def estimates_frame(
    states: Sequence[BeliefState],
    estimator: str,
    c_hat: Sequence[float | None],
    reasons: Sequence[str | None] | None = None,
) -> pd.DataFrame:
    """Estimates-file rows for one estimator (``None`` or NaN c_hat = unscored)."""
    vals = np.array([np.nan if v is None else float(v) for v in c_hat], dtype=float)
    return pd.DataFrame(
        {
            "doc_id": [s.doc_id for s in states],
            "state_id": [s.state_id for s in states],
            "true_completeness": [s.true_completeness for s in states],
            "estimator": estimator,
            "c_hat": vals,
            "reason": list(reasons) if reasons is not None else [None] * len(states),
        },
        columns=ESTIMATE_COLUMNS,
    )


def write_estimates(path: str | os.PathLike, frames: pd.DataFrame | Iterable[pd.DataFrame]) -> int:
    """Write estimates as JSONL atomically (NaN c_hat as null); return the number of lines."""
    from ..._io import write_jsonl

    df = frames if isinstance(frames, pd.DataFrame) else pd.concat(list(frames), ignore_index=True)
    recs = []
    for r in df.itertuples(index=False):
        rec = {
            "doc_id": r.doc_id,
            "state_id": r.state_id,
            "true_completeness": float(r.true_completeness),
            "estimator": r.estimator,
            "c_hat": None if not np.isfinite(r.c_hat) else float(r.c_hat),
        }
        reason = getattr(r, "reason", None)
        if isinstance(reason, str) and reason:
            rec["reason"] = reason
        recs.append(rec)
    return write_jsonl(path, recs)


def _number(rec: dict, key: str, *, file: str, line: int, nullable: bool) -> float:
    v = rec.get(key)
    if v is None and nullable:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        what = "a number in [0, 1] or null (unscored)" if nullable else "a number in [0, 1]"
        raise UserInputError(f"{key} must be {what}, got {v!r}", file=file, line=line, path=key)
    return float(v)


def read_estimates(path: str | os.PathLike) -> pd.DataFrame:
    """Read an estimates JSONL into a DataFrame with :data:`ESTIMATE_COLUMNS`.

    Raises
    ------
    UserInputError
        Malformed JSON, a missing field, a value outside [0, 1], a (state,
        estimator) pair twice, or one state with two true completeness values.
    """
    from ..._io import iter_jsonl

    file = str(path)
    rows, seen = [], set()
    truth: dict[str, tuple[str, float]] = {}
    for line, rec in iter_jsonl(path):
        if isinstance(rec, UserInputError):
            raise rec
        if not isinstance(rec, dict):
            raise UserInputError("an estimate record must be a JSON object", file=file, line=line)
        for key in ("doc_id", "state_id", "estimator"):
            if not isinstance(rec.get(key), str) or not rec[key]:
                raise UserInputError(
                    f"missing or empty string field {key!r} (a line needs doc_id, state_id, "
                    "true_completeness, estimator, c_hat)",
                    file=file,
                    line=line,
                    path=key,
                )
        c = _number(rec, "true_completeness", file=file, line=line, nullable=False)
        c_hat = _number(rec, "c_hat", file=file, line=line, nullable=True)
        pair = (rec["state_id"], rec["estimator"])
        if pair in seen:
            raise UserInputError(f"state {pair[0]!r} has two estimates from {pair[1]!r}", file=file, line=line)
        seen.add(pair)
        if truth.setdefault(rec["state_id"], (rec["doc_id"], c)) != (rec["doc_id"], c):
            raise UserInputError(
                f"state {rec['state_id']!r} appears with a different doc_id or "
                "true_completeness than on an earlier line",
                file=file,
                line=line,
            )
        reason = rec.get("reason")
        rows.append(
            (
                rec["doc_id"],
                rec["state_id"],
                c,
                rec["estimator"],
                c_hat,
                reason if isinstance(reason, str) else ("unscored" if math.isnan(c_hat) else None),
            )
        )
    if not rows:
        raise UserInputError("the estimates file holds no records", file=file)
    return pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)
