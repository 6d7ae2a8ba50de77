"""Seeded percentile bootstrap over whole traces (spec section 3), vectorised: the keyword forms.

Every trace-level statistic seekbench reports is a function of a few per-trace sums:
a mean over traces is ``sum(v * m) / sum(m)`` with ``m`` marking the traces where ``v``
is defined, a pooled ratio is ``sum(num) / sum(den)``, and the pooled calibration error
is a function of six per-trace counts. A resample of whole traces (or of whole
question clusters) only reweights those sums; a :class:`~seekbench.metrics.Resampler`
gives all B resampled sums as one matrix product. The functions here take its options
as keywords (``n_boot, seed, clusters, universe, bootstrap``) and build one per call, or
take one (``resampler=``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypedDict, Unpack, cast

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._options import check_option
from ._poisson import BootstrapMethod
from ._resampler import ExactOrPoisson, Resampler, Seed, check_alpha, check_n_boot

Cluster = Literal["trace", "question"]
_CLUSTERS = ("trace", "question")


def check_bootstrap_options(n_boot: int, alpha: float, cluster: str = "trace") -> None:
    """Validate the bootstrap keywords shared by every rich-result function."""
    check_option("cluster", cluster, _CLUSTERS)
    check_n_boot(n_boot)
    check_alpha(alpha)


def cluster_labels(trace_ids: Sequence, question_ids: Sequence | None, *, cluster: Cluster = "trace") -> np.ndarray:
    """The resampling unit of each trace: itself, or its question (``cluster="question"``).

    A trace without a question id (or all of them, ``question_ids=None``) is its own cluster.
    """
    check_option("cluster", cluster, _CLUSTERS)
    tids = np.asarray([f"trace::{t}" for t in trace_ids], dtype=object)
    if cluster == "trace" or question_ids is None:
        return tids
    qids = pd.Series(list(question_ids), dtype=object)
    return np.where(qids.isna().to_numpy(), tids, np.asarray([f"question::{q}" for q in qids], dtype=object))


def bootstrap_sums(
    columns: np.ndarray,
    *,
    n_boot: int = 2000,
    seed: Seed = 0,
    clusters: Sequence | np.ndarray | None = None,
    universe: Sequence | np.ndarray | None = None,
    bootstrap: BootstrapMethod = "exact",
) -> np.ndarray:
    """Resampled column sums: ``(n_boot x m)`` array, row b = sum over resample b's traces.

    ``Resampler(n_boot=n_boot, seed=seed, method=bootstrap, clusters=clusters,
    universe=universe).resampled_sums(columns)``: one call's draws. Pass a
    :class:`~seekbench.metrics.Resampler` around instead to share them.

    Parameters
    ----------
    columns : array of shape (n_traces,) or (n_traces, m)
        Per-trace quantities to sum; must be finite (mask undefined values before).
    n_boot : int
        Number of resamples B.
    seed : int or None
        Seed of ``numpy.random.default_rng``; equal seeds give equal resamples.
    clusters : sequence, optional
        Resampling unit of each trace (default: each trace on its own). Whole clusters
        are drawn with replacement, as many as there are clusters.
    universe : sequence, optional
        All cluster labels to draw from (default: those in ``clusters``). Two groups drawn
        with the same universe and seed share their cluster draws: a paired bootstrap.
    bootstrap : {"exact", "poisson"}
        Multinomial resample counts (default), or independent Poisson(1) weights per cluster
        (the Poisson bootstrap, :mod:`seekbench.metrics._poisson`; ``"auto"`` is resolved by
        the caller). Poisson draws are paired across the columns of one call only.

    Returns
    -------
    ndarray of shape (n_boot, m)

    Examples
    --------
    >>> bootstrap_sums(np.ones(4), n_boot=3, seed=1)[:, 0].tolist()
    [4.0, 4.0, 4.0]
    """
    check_option("bootstrap", bootstrap, ("exact", "poisson"))
    return Resampler(
        n_boot=n_boot, seed=seed, method=cast(ExactOrPoisson, bootstrap), clusters=clusters, universe=universe
    ).resampled_sums(columns)


class Resampling(TypedDict, total=False):
    """The resampling keywords of :func:`bootstrap_statistic_cis`, which :func:`bootstrap_statistic_ci`
    and :func:`bootstrap_ci` pass on."""

    n_boot: int
    seed: Seed
    clusters: Sequence | np.ndarray | None
    universe: Sequence | np.ndarray | None
    bootstrap: BootstrapMethod
    resampler: Resampler | None


def bootstrap_statistic_ci(
    columns: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    alpha: float = 0.05,
    **resampling: Unpack[Resampling],
) -> tuple[float, float]:
    """Percentile CI of a statistic computed from per-trace column sums.

    ``statistic`` maps the ``(B x m)`` resampled sums to B values (vectorised); it is
    the same function that gives the point estimate from the ``(1 x m)`` full-sample sums.
    The resampling keywords (``n_boot, seed, clusters, universe, bootstrap``, or ``resampler``)
    are those of :func:`bootstrap_statistic_cis`.

    >>> cols = np.column_stack([[1.0, 0.0, 1.0, 1.0], np.ones(4)])
    >>> lo, hi = bootstrap_statistic_ci(cols, lambda s: s[:, 0] / s[:, 1], n_boot=200, seed=0)
    >>> 0.0 <= lo <= 0.75 <= hi <= 1.0
    True
    """
    return bootstrap_statistic_cis(columns, [statistic], alpha=alpha, **resampling)[0]


def bootstrap_statistic_cis(
    columns: np.ndarray,
    statistics: Sequence[Callable[[np.ndarray], np.ndarray]],
    *,
    n_boot: int = 2000,
    seed: Seed = 0,
    alpha: float = 0.05,
    clusters: Sequence | np.ndarray | None = None,
    universe: Sequence | np.ndarray | None = None,
    bootstrap: BootstrapMethod = "exact",
    resampler: Resampler | None = None,
) -> list[tuple[float, float]]:
    """Percentile CIs of several statistics of the same resampled column sums.

    As :func:`bootstrap_statistic_ci`, but every statistic sees the same B resamples (e.g.
    Cohen's kappa and Gwet's AC1 of one confusion matrix), whatever the seed. Each CI is
    ``(nan, nan)`` when ``n_boot = 0`` or there are no rows. ``resampler`` (a
    :class:`~seekbench.metrics.Resampler`, whose draws other statistics may share) replaces
    the keywords ``n_boot, seed, clusters, universe, bootstrap``, which build one otherwise.

    >>> cols = np.column_stack([[1.0, 0.0, 1.0, 1.0], np.ones(4)])
    >>> (lo, hi), (lo0, hi0) = bootstrap_statistic_cis(cols, [ratio, lambda s: 1 - ratio(s)], n_boot=200)
    >>> abs(lo - (1 - hi0)) < 1e-12
    True
    """
    if resampler is None:
        check_option("bootstrap", bootstrap, ("exact", "poisson"))
        resampler = Resampler(
            n_boot=n_boot, seed=seed, method=cast(ExactOrPoisson, bootstrap), clusters=clusters, universe=universe
        )
    elif not (n_boot == 2000 and seed == 0 and clusters is None and universe is None and bootstrap == "exact"):
        raise UserInputError("pass either resampler= or its keywords (n_boot, seed, clusters, universe, bootstrap)")
    return resampler.intervals(columns, statistics, alpha=alpha)


@dataclass
class EstimateResult:
    """An estimate with its percentile bootstrap CI: what every rich result shares.

    A subclass adds its counts and decompositions, and names the row and the count columns
    of :attr:`summary` in ``_summary_name`` and ``_summary_columns`` (attribute names, or
    ``(column, attribute)`` pairs where the column is named otherwise).

    Attributes
    ----------
    value : float
        The estimate (NaN when undefined).
    ci : tuple of float
        Percentile bootstrap CI resampling whole traces (or the groups given);
        ``(nan, nan)`` without resamples.
    options : dict
        The options it was computed with.

    Examples
    --------
    >>> EstimateResult(0.5, (0.25, 0.75)).summary.columns.tolist()
    ['estimate', 'lower', 'upper']
    """

    value: float
    ci: tuple[float, float]
    options: dict = field(default_factory=dict, kw_only=True)

    _summary_name: ClassVar[str] = "estimate"
    _summary_columns: ClassVar[tuple[str | tuple[str, str], ...]] = ()

    @property
    def summary(self) -> pd.DataFrame:
        """One row: ``estimate``, CI bounds ``lower`` and ``upper``, then the counts."""
        row: dict[str, object] = {"estimate": self.value, "lower": self.ci[0], "upper": self.ci[1]}
        for col in self._summary_columns:
            column, attribute = col if isinstance(col, tuple) else (col, col)
            row[column] = getattr(self, attribute)
        return pd.DataFrame([row], index=pd.Index([self._summary_name]))


def ratio(sums: np.ndarray) -> np.ndarray:
    """``sums[:, 0] / sums[:, 1]``, NaN where the denominator is 0 (a vectorised statistic)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1.0), np.nan)


def mean_columns(
    values: Sequence[float] | np.ndarray, denominators: Sequence[float] | np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The per-trace columns :func:`bootstrap_ci` resamples, ``[v, 1]`` (or ``[v, d]``) where
    defined and ``[0, 0]`` elsewhere, and where it is defined: their sums' ratio is the mean."""
    v = np.asarray(values, dtype=float)
    if denominators is None:
        mask = np.isfinite(v)
        return np.column_stack([np.where(mask, v, 0.0), mask.astype(float)]), mask
    d = np.asarray(denominators, dtype=float)
    mask = np.isfinite(v) & np.isfinite(d)
    return np.column_stack([np.where(mask, v, 0.0), np.where(mask, d, 0.0)]), mask


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    denominators: Sequence[float] | np.ndarray | None = None,
    *,
    alpha: float = 0.05,
    **resampling: Unpack[Resampling],
) -> tuple[float, float]:
    """Percentile bootstrap CI of a mean over traces, or of a ratio of per-trace sums.

    Without ``denominators`` the statistic is the mean of ``values`` over the traces where
    it is defined (NaN values are left out, as in the point estimate). With them it is
    ``sum(values) / sum(denominators)`` (e.g. a step-pooled rate from per-trace numerators
    and denominators); traces with a NaN in either are left out.

    Parameters
    ----------
    values, denominators : array-like of shape (n_traces,)
    alpha : float
        1 - confidence level (0.05).
    **resampling
        ``n_boot, seed, clusters, universe, bootstrap``, the resampling keywords of
        :func:`bootstrap_statistic_cis` (:class:`Resampling`): resamples B (2000), seed of
        ``numpy.random.default_rng`` (0), and see :func:`bootstrap_sums`; or ``resampler``, a
        :class:`~seekbench.metrics.Resampler` in their place.

    Returns
    -------
    (lo, hi) : tuple of float
        NaN when there are no defined values or ``n_boot = 0``.

    Examples
    --------
    >>> lo, hi = bootstrap_ci([0.0, 1.0, 1.0, 0.5, float("nan")], n_boot=500, seed=0)
    >>> lo <= 0.625 <= hi
    True
    """
    cols, mask = mean_columns(values, denominators)
    if not mask.any():
        check_bootstrap_options(resampling.get("n_boot", 2000), alpha)
        return (float("nan"), float("nan"))
    return bootstrap_statistic_ci(cols, ratio, alpha=alpha, **resampling)
