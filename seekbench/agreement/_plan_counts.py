"""Per-trace confusion counts of a judge (or two) against the reference, one stratum at a time.

The planning projection resamples whole traces, so each trace is one row of counts: its
cells of the (reference x judge) confusion matrix on one (field, step kind) stratum, or
of two judges' matrices side by side on the items all three labeled.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..labels import AnnotationSet
from ._align import align_pair, field_labels
from ._kappa import kappa_from_confusion
from ._strata import kind_column


def compared_items(ref: AnnotationSet, judge: AnnotationSet, field: str, kind: str, kinds: dict) -> pd.DataFrame:
    """``trace_id, step, reference, rater``: the items of one stratum both labeled (with a value)."""
    al = align_pair(ref, judge, field)
    al = al[(kind_column(al, kinds) == kind).to_numpy() & (al["status"] == "compared").to_numpy()]
    return al[["trace_id", "step", "reference", "rater"]].reset_index(drop=True)


def trace_counts(items: pd.DataFrame, field: str, columns: tuple[str, ...] = ("rater",)) -> tuple[list, np.ndarray]:
    """``(trace ids, counts)``: per trace, its items' confusion cells (reference x each column).

    ``counts`` has one row per trace (sorted ids) and q*q columns per entry of ``columns``
    (row-major: reference label a, rater label b at a*q + b).
    """
    labels = list(field_labels(field))
    q = len(labels)
    code = {v: i for i, v in enumerate(labels)}
    ids = sorted(items["trace_id"].astype(str).unique())
    row = {t: i for i, t in enumerate(ids)}
    counts = np.zeros((len(ids), q * q * len(columns)))
    r = items["trace_id"].astype(str).map(row).to_numpy()
    a = items["reference"].map(code).to_numpy()
    for j, col in enumerate(columns):
        b = items[col].map(code).to_numpy()
        np.add.at(counts, (r, j * q * q + a * q + b), 1)
    return ids, counts


def kappa_statistic(q: int):
    """Summed counts ``(..., q*q)`` -> Cohen's kappa ``(...)``."""

    def stat(s: np.ndarray) -> np.ndarray:
        return kappa_from_confusion(s.reshape(*s.shape[:-1], q, q))

    return stat


def kappa_difference_statistic(q: int):
    """Summed counts ``(..., 2*q*q)`` (judge A's cells, then B's) -> kappa_A - kappa_B ``(...)``."""

    def stat(s: np.ndarray) -> np.ndarray:
        a = kappa_from_confusion(s[..., : q * q].reshape(*s.shape[:-1], q, q))
        b = kappa_from_confusion(s[..., q * q :].reshape(*s.shape[:-1], q, q))
        return a - b

    return stat


def cluster_bootstrap_ci(
    counts: np.ndarray, statistic, *, n_boot: int, seed: int | None, alpha: float
) -> tuple[float, float]:
    """Percentile CI of ``statistic`` over ``n_boot`` resamples of the rows (whole traces).

    Resamples where the statistic is undefined are dropped, as in
    :func:`~seekbench.agreement.cohen_kappa`; ``(nan, nan)`` without resamples or rows.
    """
    n = counts.shape[0]
    if n_boot == 0 or n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot)
    values = statistic(weights @ counts)
    values = values[np.isfinite(values)]
    if not len(values):
        return float("nan"), float("nan")
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)
