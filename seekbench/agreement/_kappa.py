"""Cohen's kappa between two raters, with a bootstrap CI over whole traces (spec section 9)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..metrics import Resampler, check_bootstrap_options
from ._ac1 import ac1_from_confusion
from ._counts import confusion, confusion_columns, encode_pairs, warn_undefined


def kappa_from_confusion(conf: np.ndarray) -> np.ndarray:
    """Cohen's kappa of a stack of confusion matrices ``(..., q, q)``; NaN where undefined.

    kappa = (n * tr(C) - r . c) / (n^2 - r . c) with r, c the row and column sums, which is
    (p_o - p_e) / (1 - p_e) computed from integer counts (exact). Undefined when p_e = 1.
    """
    n = conf.sum(axis=(-2, -1))
    tr = np.trace(conf, axis1=-2, axis2=-1)
    rc = (conf.sum(axis=-1) * conf.sum(axis=-2)).sum(axis=-1)
    den = n * n - rc
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (n * tr - rc) / np.where(den > 0, den, 1.0), np.nan)


def _warn_kappa_undefined(n_items: int) -> None:
    why = (
        "no item labeled by both raters"
        if not n_items
        else "both raters give the same single label to every item (p_e = 1)"
    )
    warn_undefined("Cohen's kappa", why, stacklevel=4)


def cohen_kappa_score(y1: Sequence, y2: Sequence, *, labels: Sequence | None = None) -> float:
    """Cohen's kappa: agreement between two raters beyond chance (spec section 9).

    kappa = (p_o - p_e) / (1 - p_e), with p_o the share of items labeled alike and
    p_e = sum_k p1_k p2_k the agreement expected from the raters' own label frequencies.

    Parameters
    ----------
    y1, y2 : sequence of labels
        The two raters' labels of the same items, in the same order. Items where either is
        missing (None, NaN) are left out.
    labels : sequence, optional
        The possible labels (default: those observed). Unobserved labels do not change kappa;
        a value outside ``labels`` is an error.

    Returns
    -------
    float
        In [-1, 1], higher is better: 1 is perfect agreement, 0 chance level. NaN with an
        ``UndefinedMetricWarning`` when there is no item, or when p_e = 1 (both raters give one
        and the same label to every item: agreement is perfect but chance explains all of it;
        Gwet's AC1 stays defined there). A rater who gives one label to every item while the
        other varies gets kappa = 0 exactly.

    Examples
    --------
    >>> y1 = ["Grounded", "Grounded", "NotGrounded", "NotGrounded"]
    >>> y2 = ["Grounded", "NotGrounded", "NotGrounded", "NotGrounded"]
    >>> cohen_kappa_score(y1, y2)  # p_o = 3/4, p_e = (2*1 + 2*3)/16 = 1/2
    0.5
    """
    c1, c2, cats, _, _ = encode_pairs(y1, y2, labels)
    value = float(kappa_from_confusion(confusion(c1, c2, len(cats))))
    if np.isnan(value):
        _warn_kappa_undefined(len(c1))
    return value


@dataclass
class KappaResult:
    """What :func:`cohen_kappa` computes.

    Attributes
    ----------
    value : float
        Cohen's kappa in [-1, 1] (NaN when undefined).
    ci : tuple of float
        Percentile bootstrap CI resampling whole groups (traces); resamples where kappa is
        undefined are dropped.
    n : int
        Items both raters labeled.
    n_excluded : int
        Items left out because one label is missing.
    observed_agreement, expected_agreement : float
        p_o and p_e.
    ac1 : float
        Gwet's AC1 on the same items (see :func:`~seekbench.agreement.gwet_ac1_score`).
    ac1_ci : tuple of float
        Its bootstrap CI from the same resamples.
    labels : list
        The categories, in the order of ``confusion``.
    confusion : DataFrame
        Counts; rows are rater 1's labels, columns rater 2's.
    prevalence : DataFrame
        Per label: its share among rater 1's labels, rater 2's, and both pooled.
    """

    value: float
    ci: tuple[float, float]
    n: int
    n_excluded: int
    observed_agreement: float
    expected_agreement: float
    ac1: float
    ac1_ci: tuple[float, float]
    labels: list
    confusion: pd.DataFrame
    prevalence: pd.DataFrame
    options: dict = field(default_factory=dict)

    @property
    def summary(self) -> pd.DataFrame:
        """Rows ``cohen_kappa`` and ``gwet_ac1``: estimate, CI bounds, n, agreement shares."""
        rows = {"cohen_kappa": (self.value, *self.ci), "gwet_ac1": (self.ac1, *self.ac1_ci)}
        out = pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "lower", "upper"])
        out["n"] = self.n
        out["n_excluded"] = self.n_excluded
        out["observed_agreement"] = self.observed_agreement
        return out


def prevalence_table(conf: np.ndarray, labels: list, names: tuple[str, str] = ("rater1", "rater2")) -> pd.DataFrame:
    """Per label: its share among each rater's labels and among both pooled (NaN without items)."""
    n = conf.sum()
    r, c = conf.sum(axis=1), conf.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        data = {names[0]: r / n, names[1]: c / n, "pooled": (r + c) / (2 * n)}
    return pd.DataFrame(data, index=pd.Index(labels, name="label"))


def cohen_kappa(
    y1: Sequence,
    y2: Sequence,
    *,
    labels: Sequence | None = None,
    groups: Sequence | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    resampler: Resampler | None = None,
) -> KappaResult:
    """Cohen's kappa with its bootstrap CI, confusion matrix, prevalence and Gwet's AC1.

    kappa = (p_o - p_e) / (1 - p_e) as in :func:`cohen_kappa_score` (spec section 9). The CI
    is a percentile bootstrap that resamples whole ``groups`` (pass the trace id of each item
    so that the steps of one trace stay together; default: items on their own), B = ``n_boot``
    resamples seeded by ``seed``.

    Parameters
    ----------
    y1, y2 : sequence of labels
        Items where either label is missing are left out and counted.
    labels : sequence, optional
        The possible labels; they fix the confusion matrix's order and AC1's number of
        categories q (default: those observed).
    groups : sequence, optional
        The resampling unit of each item (e.g. its trace id).
    n_boot, seed, alpha : int, int or None, float
        Bootstrap resamples (0 skips the CI), seed of ``numpy.random.default_rng``, 1 - level.
    resampler : Resampler, optional
        The resampling in place of ``n_boot`` and ``seed`` (B, seed, method), e.g. one shared with
        other coefficients; without clusters (``groups`` names the units).

    Returns
    -------
    KappaResult
        ``value`` in [-1, 1], higher is better. Identical raters give 1 with the degenerate CI
        (1, 1) (resamples where one label covers every item are undefined and dropped).

    Examples
    --------
    >>> res = cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"], n_boot=0)
    >>> res.value, res.observed_agreement, res.expected_agreement
    (0.5, 0.75, 0.5)
    >>> int(res.confusion.loc["a", "b"])
    1
    """
    check_bootstrap_options(n_boot, alpha)
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="cohen_kappa")
    c1, c2, cats, g, n_excl = encode_pairs(y1, y2, labels, groups)
    q = len(cats)
    conf = confusion(c1, c2, q)
    value = float(kappa_from_confusion(conf))
    ac1 = float(ac1_from_confusion(conf, q)) if len(c1) else float("nan")
    if np.isnan(value):
        _warn_kappa_undefined(len(c1))
    ci, ac1_ci = resampler.with_clusters(g).intervals(
        confusion_columns(c1, c2, q),
        [lambda s: kappa_from_confusion(s.reshape(-1, q, q)), lambda s: ac1_from_confusion(s.reshape(-1, q, q), q)],
        alpha=alpha,
    )
    n = conf.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        po = float(np.trace(conf) / n) if n else float("nan")
        pe = float((conf.sum(axis=1) * conf.sum(axis=0)).sum() / n**2) if n else float("nan")
    return KappaResult(
        value=value,
        ci=ci,
        n=int(n),
        n_excluded=n_excl,
        observed_agreement=po,
        expected_agreement=pe,
        ac1=ac1,
        ac1_ci=ac1_ci,
        labels=cats,
        confusion=pd.DataFrame(
            conf.astype(int), index=pd.Index(cats, name="rater1"), columns=pd.Index(cats, name="rater2")
        ),
        prevalence=prevalence_table(conf, cats),
        options={**resampler.as_options(), "alpha": alpha},
    )
