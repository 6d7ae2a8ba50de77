"""Krippendorff's alpha for nominal labels, with missing ratings (spec section 9)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics import EstimateResult, Resampler, check_bootstrap_options
from ._counts import category_counts, encode_matrix, warn_undefined


def _coincidence_columns(codes: np.ndarray, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pairable item (two or more ratings): its q x q coincidences, flattened; and the mask.

    o_ck(u) = (n_uc n_uk - [c = k] n_uc) / (m_u - 1), with n_uc the ratings of item u in
    category c and m_u its number of ratings: every ordered pair of ratings by different
    raters, weighted so that each pairable item contributes m_u in total.
    """
    counts = category_counts(codes, q)
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    c, m = counts[pairable], m_u[pairable]
    o = (c[:, :, None] * c[:, None, :] - np.einsum("ij,jk->ijk", c, np.eye(q))) / (m - 1)[:, None, None]
    return o.reshape(len(c), q * q), pairable


def _alpha_from_coincidences(o: np.ndarray, q: int) -> np.ndarray:
    """alpha = 1 - (n - 1) (n - tr o) / (n^2 - sum_c n_c^2) from ``(..., q*q)`` coincidence sums.

    n = sum of o, n_c its row sums. Undefined when n <= 1 or every pairable value is one
    category (expected disagreement 0).
    """
    mat = np.atleast_2d(o).reshape(-1, q, q)
    n = mat.sum(axis=(1, 2))
    n_c = mat.sum(axis=2)
    d_e = n**2 - (n_c**2).sum(axis=1)
    d_o = n - np.trace(mat, axis1=1, axis2=2)
    ok = (d_e > 1e-9 * np.maximum(n, 1.0) ** 2) & (n > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, 1.0 - (n - 1.0) * d_o / np.where(ok, d_e, 1.0), np.nan)


def _why(codes: np.ndarray, n_pairable: int) -> str:
    if n_pairable == 0:
        return "no item has two or more ratings"
    return "every rating is the same label (no expected disagreement)"


def krippendorff_alpha_score(ratings: object, *, labels: Sequence | None = None) -> float:
    """Krippendorff's alpha for nominal labels (spec section 9).

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k, where
    o is the coincidence matrix of all ordered pairs of ratings given to the same item by
    different raters (an item with m_u ratings weighs each pair 1 / (m_u - 1)), n_c its
    marginals and n the number of pairable ratings. Items with fewer than two ratings are
    not pairable and drop out; raters need not rate every item.

    Parameters
    ----------
    ratings : DataFrame or 2-D array-like
        One row per item, one column per rater; missing ratings are None or NaN. (The
        ``krippendorff`` package takes the transpose, raters x items.)
    labels : sequence, optional
        The possible labels (default: those observed); unobserved labels do not change alpha.

    Returns
    -------
    float
        At most 1, higher is better; 0 is chance level. NaN with an ``UndefinedMetricWarning``
        when no item has two ratings or only one label occurs among pairable ratings.

    Examples
    --------
    >>> round(krippendorff_alpha_score([["a", "a", None], ["a", "b", "b"], ["b", "b", "b"], [None, "a", None]]), 4)
    0.5333

    (The last item has one rating and drops out. Coincidences o_aa = 2 (item 1),
    o_ab = o_ba = 1 and o_bb = 1 (item 2, pairs weighted 1/2), o_bb += 3 (item 3): n = 8,
    n_a = 3, n_b = 5, alpha = 1 - 7 * 2 / (64 - 9 - 25) = 0.5333.)
    """
    codes, cats, _ = encode_matrix(ratings, labels)
    cols, pairable = _coincidence_columns(codes, len(cats))
    value = float(_alpha_from_coincidences(cols.sum(axis=0), len(cats))[0]) if len(cats) else float("nan")
    if np.isnan(value):
        warn_undefined("Krippendorff's alpha", _why(codes, int(pairable.sum())))
    return value


@dataclass
class AlphaResult(EstimateResult):
    """What :func:`krippendorff_alpha` computes.

    Attributes
    ----------
    value : float
        Nominal alpha (NaN when undefined).
    n_items : int
        Pairable items (two or more ratings).
    n_excluded : int
        Items with fewer than two ratings.
    n_pairable : int
        Ratings in pairable items (n of the formula).
    coincidence : DataFrame
        The coincidence matrix o.
    undefined : str
        Why ``value`` is NaN (what the warning says); empty when it is defined.
    """

    n_items: int
    n_excluded: int
    n_pairable: int
    n_raters: int
    labels: list
    coincidence: pd.DataFrame
    undefined: str = ""

    _summary_name = "krippendorff_alpha"
    _summary_columns = ("n_items", "n_excluded", "n_pairable", "n_raters")


def krippendorff_alpha(
    ratings: object,
    *,
    labels: Sequence | None = None,
    groups: Sequence | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    resampler: Resampler | None = None,
) -> AlphaResult:
    """Nominal Krippendorff's alpha with a bootstrap CI over whole groups (traces).

    Formula as in :func:`krippendorff_alpha_score`. Coincidences add up over items, so a
    resample of whole groups is a weighted sum of per-group coincidence matrices.

    Parameters
    ----------
    ratings, labels : see :func:`krippendorff_alpha_score`.
    groups, n_boot, seed, alpha, resampler : see :func:`~seekbench.agreement.cohen_kappa` (one group per row).

    Returns
    -------
    AlphaResult

    Examples
    --------
    >>> res = krippendorff_alpha([["a", "a"], ["b", "b"], ["a", None]], n_boot=0)
    >>> res.value, res.n_items, res.n_excluded
    (1.0, 2, 1)
    """
    check_bootstrap_options(n_boot, alpha)
    res = alpha_result(
        ratings,
        labels=labels,
        groups=groups,
        resampler=Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="krippendorff_alpha"),
        alpha=alpha,
    )
    if res.undefined:
        warn_undefined("Krippendorff's alpha", res.undefined)
    return res


def alpha_result(
    ratings: object, *, labels: Sequence | None, groups: Sequence | None, resampler: Resampler, alpha: float
) -> AlphaResult:
    """:func:`krippendorff_alpha` without its warning: an undefined value's reason is in ``undefined``."""
    codes, cats, _ = encode_matrix(ratings, labels)
    q = len(cats)
    g = np.arange(len(codes)) if groups is None else np.asarray(list(groups), dtype=object)
    cols, pairable = _coincidence_columns(codes, q)
    total = cols.sum(axis=0)
    value = float(_alpha_from_coincidences(total, q)[0]) if q else float("nan")
    # no label at all: no coincidence matrix to resample
    ci = (
        resampler.with_clusters(g[pairable]).interval(cols, lambda s: _alpha_from_coincidences(s, q), alpha=alpha)
        if q
        else (float("nan"), float("nan"))
    )
    return AlphaResult(
        value=value,
        ci=ci,
        n_items=int(pairable.sum()),
        n_excluded=int((~pairable).sum()),
        n_pairable=round(total.sum()),
        n_raters=codes.shape[1],
        labels=cats,
        coincidence=pd.DataFrame(
            total.reshape(q, q), index=pd.Index(cats, name="label"), columns=pd.Index(cats, name="label")
        ),
        options={**resampler.as_options(), "alpha": alpha},
        undefined=_why(codes, int(pairable.sum())) if np.isnan(value) else "",
    )
