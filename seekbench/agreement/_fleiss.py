"""Fleiss' kappa: chance-corrected agreement of three or more raters (spec section 9)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics import EstimateResult, Resampler, check_bootstrap_options
from ._counts import category_counts, encode_matrix, warn_undefined


def _fleiss_from_sums(sums: np.ndarray, m: int) -> np.ndarray:
    """Fleiss' kappa from summed ``[sum_i P_i, N, n_1 .. n_q]`` rows (vectorised over rows).

    P_bar = sum_i P_i / N; p_j = n_j / (N m); P_e = sum_j p_j^2; undefined when P_e = 1
    (checked on the counts: (N m)^2 = sum_j n_j^2) or N = 0.
    """
    s = np.atleast_2d(sums)
    n_items, n_j = s[:, 1], s[:, 2:]
    total = n_items * m
    den = total**2 - (n_j**2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = s[:, 0] / n_items
        p_e = (n_j**2).sum(axis=1) / total**2
        out = (p_bar - p_e) / (1.0 - p_e)
    return np.where((den > 0) & (n_items > 0), out, np.nan)


def _item_columns(codes: np.ndarray, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Complete items' columns ``[P_i, 1, n_i1 .. n_iq]`` and the mask of complete items."""
    m = codes.shape[1]
    complete = np.asarray((codes >= 0).all(axis=1))
    counts = category_counts(codes[complete], q)
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1)) if m > 1 else np.full(len(counts), np.nan)
    return np.column_stack([p_i, np.ones(len(counts)), counts]), complete


def fleiss_kappa_score(ratings: object, *, labels: Sequence | None = None) -> float:
    """Fleiss' kappa of an items x raters label matrix (spec section 9).

    With N items each labeled by all m raters and n_ij the raters giving item i label j:
    P_i = (sum_j n_ij^2 - m) / (m (m - 1)) (agreeing rater pairs on item i),
    P_bar = mean_i P_i, p_j = sum_i n_ij / (N m), P_e = sum_j p_j^2, and
    kappa = (P_bar - P_e) / (1 - P_e).

    Parameters
    ----------
    ratings : DataFrame or 2-D array-like
        One row per item, one column per rater; missing labels (None, NaN) allowed. Only
        items every rater labeled are used (Fleiss' kappa needs the same number of ratings
        per item); Krippendorff's alpha uses the others too.
    labels : sequence, optional
        The possible labels (default: those observed).

    Returns
    -------
    float
        At most 1, higher is better; 0 is chance level. NaN with an ``UndefinedMetricWarning``
        when fewer than two raters, no complete item, or a single label covers every rating.

    Examples
    --------
    >>> round(fleiss_kappa_score([["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"], ["b", "b", "a"]]), 6)
    0.333333

    (P_i = 1, 1/3, 1, 1/3 so P_bar = 2/3; p_a = p_b = 1/2 so P_e = 1/2; (2/3 - 1/2) / (1/2) = 1/3.)
    """
    codes, cats, _ = encode_matrix(ratings, labels)
    cols, _ = _item_columns(codes, len(cats))
    value = float(_fleiss_from_sums(cols.sum(axis=0), codes.shape[1])[0]) if codes.shape[1] > 1 else float("nan")
    if np.isnan(value):
        warn_undefined("Fleiss' kappa", _why(codes, cols))
    return value


def _why(codes: np.ndarray, cols: np.ndarray) -> str:
    if codes.shape[1] < 2:
        return "fewer than two raters"
    if not len(cols):
        return "no item labeled by every rater"
    return "a single label covers every rating (P_e = 1)"


@dataclass
class FleissResult(EstimateResult):
    """What :func:`fleiss_kappa` computes.

    Attributes
    ----------
    value : float
        Fleiss' kappa (NaN when undefined).
    n_items : int
        Items labeled by every rater (those used).
    n_excluded : int
        Items with at least one missing label (not used).
    n_raters : int
    observed_agreement, expected_agreement : float
        P_bar and P_e.
    prevalence : Series
        p_j per label.
    undefined : str
        Why ``value`` is NaN (what the warning says); empty when it is defined.
    """

    n_items: int
    n_excluded: int
    n_raters: int
    observed_agreement: float
    expected_agreement: float
    labels: list
    prevalence: pd.Series
    undefined: str = ""

    _summary_name = "fleiss_kappa"
    _summary_columns = ("n_items", "n_excluded", "n_raters", "observed_agreement", "expected_agreement")


def fleiss_kappa(
    ratings: object,
    *,
    labels: Sequence | None = None,
    groups: Sequence | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    resampler: Resampler | None = None,
) -> FleissResult:
    """Fleiss' kappa with a bootstrap CI over whole groups (traces).

    Formula as in :func:`fleiss_kappa_score`; the per-item quantities add up, so each resample
    of whole groups is a weighted sum.

    Parameters
    ----------
    ratings, labels : see :func:`fleiss_kappa_score`.
    groups, n_boot, seed, alpha, resampler : see :func:`~seekbench.agreement.cohen_kappa` (one group per row).

    Returns
    -------
    FleissResult

    Examples
    --------
    >>> res = fleiss_kappa([["a", "a", None], ["a", "a", "a"], ["b", "b", "b"]], n_boot=0)
    >>> res.value, res.n_items, res.n_excluded
    (1.0, 2, 1)
    """
    check_bootstrap_options(n_boot, alpha)
    res = fleiss_result(
        ratings,
        labels=labels,
        groups=groups,
        resampler=Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="fleiss_kappa"),
        alpha=alpha,
    )
    if res.undefined:
        warn_undefined("Fleiss' kappa", res.undefined)
    return res


def fleiss_result(
    ratings: object, *, labels: Sequence | None, groups: Sequence | None, resampler: Resampler, alpha: float
) -> FleissResult:
    """:func:`fleiss_kappa` without its warning: an undefined value's reason is in ``undefined``."""
    codes, cats, _ = encode_matrix(ratings, labels)
    q, m = len(cats), codes.shape[1]
    g = np.arange(len(codes)) if groups is None else np.asarray(list(groups), dtype=object)
    cols, complete = _item_columns(codes, q)
    total = cols.sum(axis=0)
    value = float(_fleiss_from_sums(total, m)[0]) if m > 1 else float("nan")
    # one rater: P_i is undefined (NaN) for every item, so there is nothing to resample
    ci = (
        resampler.with_clusters(g[complete]).interval(cols, lambda s: _fleiss_from_sums(s, m), alpha=alpha)
        if m > 1
        else (float("nan"), float("nan"))
    )
    n = total[1] if len(cols) else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        prev = total[2:] / (n * m) if n else np.full(q, np.nan)
        p_bar = float(total[0] / n) if n else float("nan")
    return FleissResult(
        value=value,
        ci=ci,
        n_items=int(n),
        n_excluded=int((~complete).sum()),
        n_raters=m,
        observed_agreement=p_bar,
        expected_agreement=float((prev**2).sum()) if n else float("nan"),
        labels=cats,
        prevalence=pd.Series(prev, index=pd.Index(cats, name="label"), name="p"),
        options={**resampler.as_options(), "alpha": alpha},
        undefined=_why(codes, cols) if np.isnan(value) else "",
    )
