"""Gwet's AC1: chance-corrected agreement that stays meaningful when one label dominates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..metrics import EstimateResult, Resampler, check_bootstrap_options
from ._counts import confusion, confusion_columns, encode_pairs, warn_undefined


def ac1_parts(conf: np.ndarray, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Observed and Gwet chance agreement ``(p_o, p_e)`` of a stack of confusion matrices.

    pi_k = (r_k + c_k) / 2n, p_e = sum_k pi_k (1 - pi_k) / (q - 1). With fewer than two
    categories the sum is 0, so p_e = 0 whatever the number of possible categories. A
    matrix wider than q (a panel's extra "unresolved tie" response, last) counts those
    items as misses in p_o and leaves them out of the chance term, which sums the q labels.
    """
    n = conf.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(conf, axis1=-2, axis2=-1) / n
        pi = (conf.sum(axis=-1) + conf.sum(axis=-2)) / (2.0 * n[..., None])
    pi = pi[..., :q]
    pe = (pi * (1.0 - pi)).sum(axis=-1) / max(q - 1, 1)
    return po, pe


def ac1_from_confusion(conf: np.ndarray, q: int) -> np.ndarray:
    """Gwet's AC1 of a stack of confusion matrices; NaN only without items."""
    po, pe = ac1_parts(conf, q)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (po - pe) / (1.0 - pe)


def gwet_ac1_score(y1: Sequence, y2: Sequence, *, labels: Sequence | None = None) -> float:
    """Gwet's first-order agreement coefficient AC1 between two raters (spec section 9).

    AC1 = (p_o - p_e) / (1 - p_e) with p_o the share of items labeled alike and the chance
    agreement p_e = 1/(q - 1) * sum_k pi_k (1 - pi_k), pi_k = (p1_k + p2_k) / 2 the pooled
    share of label k and q the number of possible labels. Unlike Cohen's p_e, Gwet's p_e is
    small when one label dominates (p_e <= 1/q), so a rater who agrees on a skewed field is
    not penalised for the skew (the "kappa paradox").

    Parameters
    ----------
    y1, y2 : sequence of labels
        Items where either label is missing are left out.
    labels : sequence, optional
        The possible labels; q = len(labels). Default: the labels observed. Pass the
        ontology's values (e.g. ``("Grounded", "NotGrounded")``) when a label may be
        absent from the data, since q changes p_e.

    Returns
    -------
    float
        In [-1, 1], higher is better. Defined whenever one item is labeled by both raters
        (p_e <= 1/2): two raters who give one and the same label to every item get 1, where
        Cohen's kappa is undefined. NaN with an ``UndefinedMetricWarning`` without items.

    Examples
    --------
    >>> y1 = ["G", "G", "G", "G", "G", "G", "G", "G", "G", "N"]
    >>> y2 = ["G", "G", "G", "G", "G", "G", "G", "G", "N", "G"]
    >>> round(gwet_ac1_score(y1, y2), 4)  # p_o = 0.8, pi_G = 0.9, p_e = 0.18
    0.7561
    """
    c1, c2, cats, _, _ = encode_pairs(y1, y2, labels)
    if not len(c1):
        warn_undefined("Gwet's AC1", "no item labeled by both raters")
        return float("nan")
    return float(ac1_from_confusion(confusion(c1, c2, len(cats)), len(cats)))


@dataclass
class AC1Result(EstimateResult):
    """What :func:`gwet_ac1` computes.

    Attributes
    ----------
    value : float
        AC1 in [-1, 1] (NaN without items).
    n, n_excluded : int
        Items both raters labeled; items left out because one label is missing.
    observed_agreement, expected_agreement : float
        p_o and Gwet's p_e.
    n_categories : int
        q, the number of possible labels used in p_e.
    """

    n: int
    n_excluded: int
    observed_agreement: float
    expected_agreement: float
    n_categories: int
    labels: list

    _summary_name = "gwet_ac1"
    _summary_columns = ("n", "n_excluded", "observed_agreement", "expected_agreement")


def gwet_ac1(
    y1: Sequence,
    y2: Sequence,
    *,
    labels: Sequence | None = None,
    groups: Sequence | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    resampler: Resampler | None = None,
) -> AC1Result:
    """Gwet's AC1 with a bootstrap CI over whole groups (traces).

    AC1 as in :func:`gwet_ac1_score`; the CI as in :func:`~seekbench.agreement.cohen_kappa`.

    Parameters
    ----------
    y1, y2, labels : see :func:`gwet_ac1_score`.
    groups, n_boot, seed, alpha, resampler : see :func:`~seekbench.agreement.cohen_kappa`.

    Returns
    -------
    AC1Result

    Examples
    --------
    >>> gwet_ac1(["a", "a"], ["a", "a"], labels=["a", "b"], n_boot=0).value
    1.0
    """
    check_bootstrap_options(n_boot, alpha)
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="gwet_ac1")
    c1, c2, cats, g, n_excl = encode_pairs(y1, y2, labels, groups)
    q = len(cats)
    conf = confusion(c1, c2, q)
    if len(c1):
        po, pe = (float(x) for x in ac1_parts(conf, q))
        value = float(ac1_from_confusion(conf, q))
    else:
        warn_undefined("Gwet's AC1", "no item labeled by both raters")
        po = pe = value = float("nan")
    ci = resampler.with_clusters(g).interval(
        confusion_columns(c1, c2, q), lambda s: ac1_from_confusion(s.reshape(-1, q, q), q), alpha=alpha
    )
    return AC1Result(
        value=value,
        ci=ci,
        n=len(c1),
        n_excluded=n_excl,
        observed_agreement=po,
        expected_agreement=pe,
        n_categories=q,
        labels=cats,
        options={**resampler.as_options(), "alpha": alpha},
    )
