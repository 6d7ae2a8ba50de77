"""The counts every agreement coefficient is built from: label coding, count tables, their bootstrap.

Every coefficient is a function of a few counts that add up over items (a confusion
matrix for two raters, per-item category counts for Fleiss' kappa, a coincidence matrix for
Krippendorff's alpha). Resampling whole traces only reweights those sums, so the bootstrap
is one matrix product (:meth:`seekbench.metrics.Resampler.resampled_sums`) followed by a
vectorised formula, never a Python loop per resample.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ..metrics import percentile_interval


def is_missing(value: object) -> bool:
    """None, NaN and pd.NA are missing; every other value is a label."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _as_objects(y: Sequence, name: str) -> np.ndarray:
    if isinstance(y, (str, bytes)):
        raise UserInputError(f"{name} must be a sequence of labels, not a single string")
    arr = np.empty(len(y), dtype=np.object_)
    arr[:] = list(y)
    return arr


def _sort_key(value: object) -> tuple[str, str]:
    return (type(value).__name__, str(value))


def category_list(observed: Sequence, labels: Sequence | None) -> list:
    """The categories: ``labels`` as given (every observed value must be one), else the sorted observed values."""
    seen = list(dict.fromkeys(v for v in observed if not is_missing(v)))
    if labels is None:
        return sorted(seen, key=_sort_key)
    cats = list(dict.fromkeys(labels))
    unknown = [v for v in seen if v not in cats]
    if unknown:
        raise UserInputError(f"label {unknown[0]!r} is not among labels={cats!r}; add it or fix the data")
    return cats


def encode_pairs(
    y1: Sequence, y2: Sequence, labels: Sequence | None = None, groups: Sequence | None = None
) -> tuple[np.ndarray, np.ndarray, list, np.ndarray, int]:
    """Codes of the items both raters labeled.

    Returns ``(codes1, codes2, categories, groups_kept, n_excluded)``; items where either
    label is missing are left out and counted in ``n_excluded``.
    """
    a, b = _as_objects(y1, "y1"), _as_objects(y2, "y2")
    if len(a) != len(b):
        raise UserInputError(f"y1 and y2 must have the same length, got {len(a)} and {len(b)}")
    g = np.arange(len(a)) if groups is None else _as_objects(groups, "groups")
    if len(g) != len(a):
        raise UserInputError(f"groups must have one entry per item, got {len(g)} for {len(a)} items")
    keep = np.array([not (is_missing(u) or is_missing(v)) for u, v in zip(a, b, strict=True)], dtype=bool)
    cats = category_list([*a[keep], *b[keep]], labels)
    index = {c: i for i, c in enumerate(cats)}
    c1 = np.array([index[v] for v in a[keep]], dtype=np.int64)
    c2 = np.array([index[v] for v in b[keep]], dtype=np.int64)
    return c1, c2, cats, g[keep], int((~keep).sum())


def confusion(c1: np.ndarray, c2: np.ndarray, q: int) -> np.ndarray:
    """The q x q confusion matrix of two code arrays (rows: rater 1)."""
    conf = np.zeros((q, q))
    np.add.at(conf, (c1, c2), 1.0)
    return conf


def confusion_columns(c1: np.ndarray, c2: np.ndarray, q: int) -> np.ndarray:
    """One row per item, one-hot over the q * q cells of the confusion matrix (row-major)."""
    cols = np.zeros((len(c1), q * q))
    cols[np.arange(len(c1)), c1 * q + c2] = 1.0
    return cols


def interval(stats: np.ndarray | None, alpha: float) -> tuple[float, float]:
    """The percentile interval of bootstrap statistics; ``(nan, nan)`` without resamples (None)."""
    if stats is None:
        return (float("nan"), float("nan"))
    return percentile_interval(stats, alpha=alpha)


def undefined_message(what: str, why: str) -> str:
    """The sentence saying that a coefficient is NaN and why (a warning's, or a result's)."""
    return f"{what} is undefined ({why}); returning NaN"


def warn_undefined(what: str, why: str, stacklevel: int = 3) -> None:
    warnings.warn(undefined_message(what, why), UndefinedMetricWarning, stacklevel=stacklevel)


def encode_matrix(ratings: object, labels: Sequence | None = None) -> tuple[np.ndarray, list, list]:
    """Codes of an items x raters label matrix (-1 where missing), the categories and rater names."""
    if isinstance(ratings, pd.DataFrame):
        names = [str(c) for c in ratings.columns]
        values = ratings.to_numpy(dtype=object)
    else:
        values = np.asarray(ratings, dtype=object)
        if values.ndim != 2:
            raise UserInputError(f"ratings must be a 2-D items x raters array, got {values.ndim} dimension(s)")
        names = [f"rater_{j}" for j in range(values.shape[1])]
    cats = category_list(values.ravel().tolist(), labels)
    index = {c: i for i, c in enumerate(cats)}
    codes = np.full(values.shape, -1, dtype=np.int64)
    for (i, j), v in np.ndenumerate(values):
        if not is_missing(v):
            codes[i, j] = index[v]
    return codes, cats, names


def category_counts(codes: np.ndarray, q: int) -> np.ndarray:
    """Per item (row): how many raters gave each category."""
    counts = np.zeros((codes.shape[0], q))
    rows, cols = np.nonzero(codes >= 0)
    np.add.at(counts, (rows, codes[rows, cols]), 1.0)
    return counts
