"""The resampling of the percentile bootstrap as one explicit value (spec section 3).

Every bootstrapped number seekbench reports is a statistic of per-row column sums (rows are
traces, or items of an agreement table). A resample of whole units (traces, or questions) only
reweights those sums: with the ``(B x n_units)`` matrix of resample counts, all B resampled sums
are one matrix product, ``counts @ per_unit_sums``. A :class:`Resampler` holds what decides those
counts (the units, B, the seed and the method), draws them when first needed and keeps them, so
every statistic it is given sees the same resamples: the statistics of one group share one
instance, as ``scipy.stats.bootstrap`` takes its resampling options in one call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._options import check_option
from ._poisson import poisson_sums

#: Upper bound on the entries of one chunk of the resample-count matrix (the chunks come in order
#: from one generator, so the counts do not depend on it; it bounds the memory of one product).
MAX_CELLS = 4_000_000
#: The resampling methods a Resampler draws with (``"auto"`` is resolved before one is made).
ExactOrPoisson = Literal["exact", "poisson"]

#: The seeds ``numpy.random.default_rng`` takes: an int, a sequence of ints, a SeedSequence, or None
#: (fresh entropy).
Seed = Any


def percentile_interval(stats: np.ndarray, *, alpha: float = 0.05) -> tuple[float, float]:
    """The ``(alpha/2, 1 - alpha/2)`` percentiles of bootstrap statistics.

    Resamples where the statistic is undefined (NaN, e.g. no labeled trace drawn) are
    dropped; all undefined gives ``(nan, nan)``.

    >>> percentile_interval(np.arange(101.0), alpha=0.1)
    (5.0, 95.0)
    """
    s = np.asarray(stats, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.percentile(s, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return (float(lo), float(hi))


def check_n_boot(n_boot: object) -> None:
    """``n_boot`` is a non-negative integer (a user error otherwise)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise UserInputError(f"n_boot must be a non-negative integer, got {n_boot!r}")


def check_alpha(alpha: object) -> None:
    """``alpha`` is a number strictly between 0 and 1 (a user error otherwise)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < float(alpha) < 1.0:
        raise UserInputError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")


@dataclass(frozen=True, eq=False, kw_only=True)
class Resampler:
    """B bootstrap resamples of whole units, drawn once: their column sums and percentile CIs (spec section 3).

    Resample b draws as many units as there are, with replacement (``method="exact"``: one row
    of multinomial counts), and reweights each data row by the count of its unit. The counts
    of B resamples over n units come in order from one ``numpy.random.default_rng(seed)``, in row
    chunks (of at most :data:`MAX_CELLS` entries, which do not change them): equal options give
    equal resamples. They are drawn when first needed and kept (the last draw) by the instance
    and those made from it with :meth:`with_clusters` and :meth:`subset`, since the counts
    depend only on the seed, B and the number of units: pass one instance to every statistic
    that should see the same resamples. The instance never changes otherwise.

    Parameters
    ----------
    n_boot : int, default 2000
        B, the number of resamples (0: no resamples, every CI ``(nan, nan)``).
    seed : int, sequence of int, SeedSequence or None, default 0
        Seed of ``numpy.random.default_rng``; None draws from fresh entropy (once per instance and
        those derived from it).
    method : {"exact", "poisson"}, default "exact"
        Multinomial resample counts (the classical bootstrap), or independent Poisson(1) weights
        per unit (the Poisson bootstrap, :mod:`seekbench.metrics._poisson`, drawn per call: its
        draws are made for the distinct rows of the data).
    clusters : sequence, optional
        The unit of each data row (e.g. its trace id or question id); default each row its own
        unit, numbered in row order.
    universe : sequence, optional
        All units to draw from (default those in ``clusters``, in order of first appearance). Two
        data sets resampled with the same universe and seed get the same draws of each unit: a
        paired bootstrap.

    Examples
    --------
    Four traces, each its own unit: the mean's percentile CI from 500 resamples.

    >>> import numpy as np
    >>> r = Resampler(n_boot=500, seed=0)
    >>> values = np.column_stack([[1.0, 0.0, 1.0, 1.0], np.ones(4)])  # [value, 1] per trace
    >>> sums = r.resampled_sums(values)  # row b: the two column sums over resample b
    >>> sums.shape, bool((sums[:, 1] == 4).all())
    ((500, 2), True)
    >>> lo, hi = r.interval(values, lambda s: s[:, 0] / s[:, 1])
    >>> 0.0 <= lo <= 0.75 <= hi <= 1.0
    True

    Steps resampled by trace: the rows of one trace enter a resample together.

    >>> by_trace = Resampler(n_boot=200, seed=1, clusters=["a", "a", "b", "c"])
    >>> bool((by_trace.resampled_sums(np.ones(4))[:, 0] % 1 == 0).all())
    True
    """

    n_boot: int = 2000
    seed: Seed = 0
    method: ExactOrPoisson = "exact"
    clusters: Sequence | np.ndarray | None = None
    universe: Sequence | np.ndarray | None = None
    # {n_units: the count chunks of that many units}: the last counts drawn, shared with the
    # instances derived from this one (same seed, B and method, so the same counts); one entry, so
    # the memory stays that of one draw however many instances are derived.
    _draws: dict[int, tuple[np.ndarray, ...]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        check_n_boot(self.n_boot)
        check_option("method", self.method, ("exact", "poisson"))

    @classmethod
    def resolve(cls, resampler: Resampler | None, *, n_boot: int = 2000, seed: Seed = 0, where: str) -> Resampler:
        """The resampling of a function with the convenience keywords ``n_boot`` (default 2000) and
        ``seed`` (default 0) beside ``resampler``: ``resampler`` when given (then ``n_boot`` and
        ``seed`` keep their defaults, and it has no clusters, since the function knows its rows'
        units), else one built from them; ``where`` names the function in errors."""
        if resampler is None:
            return cls(n_boot=n_boot, seed=seed)
        if not isinstance(resampler, Resampler):
            raise UserInputError(f"{where}: resampler must be a seekbench.metrics.Resampler, got {resampler!r}")
        if not (_unchanged(n_boot, 2000) and _unchanged(seed, 0)):
            raise UserInputError(f"{where}: pass either resampler= or n_boot=/seed=, not both")
        if resampler.clusters is not None or resampler.universe is not None:
            raise UserInputError(
                f"{where}: its rows' resampling units come from its own options; pass a Resampler without clusters"
            )
        return resampler

    def as_options(self) -> dict:
        """``{"n_boot", "seed"}`` (and ``"bootstrap"`` when not exact): how a result records its resampling."""
        out = {"n_boot": self.n_boot, "seed": self.seed}
        if self.method != "exact":
            out["bootstrap"] = self.method
        return out

    def with_clusters(
        self, clusters: Sequence | np.ndarray | None, universe: Sequence | np.ndarray | None = None
    ) -> Resampler:
        """The same resampling (seed, B, method, draws) of data rows whose units are ``clusters``."""
        return self._derive(clusters=clusters, universe=universe)

    def subset(self, rows: np.ndarray) -> Resampler:
        """The same resampling of the data rows where the boolean mask ``rows`` holds (their clusters);
        ``self`` when it keeps every row."""
        rows = np.asarray(rows, dtype=bool)
        if rows.all():
            return self
        clusters = np.arange(len(rows)) if self.clusters is None else np.asarray(self.clusters)
        return self._derive(clusters=clusters[rows], universe=self.universe)

    def _derive(self, *, clusters: Sequence | np.ndarray | None, universe: Sequence | np.ndarray | None) -> Resampler:
        new = dataclasses.replace(self, clusters=clusters, universe=universe)
        object.__setattr__(new, "_draws", self._draws)  # the counts depend on seed, B and n only
        return new

    def resampled_sums(self, values: np.ndarray) -> np.ndarray:
        """Resampled column sums: ``(n_boot x m)``, row b the sum over resample b's rows.

        ``values`` (shape ``(n_rows,)`` or ``(n_rows, m)``, one row per cluster label) must be
        finite: mask undefined values before.
        """
        cols = np.asarray(values, dtype=float)
        if cols.ndim == 1:
            cols = cols[:, None]
        if not np.isfinite(cols).all():
            raise ValueError("resampled_sums needs finite columns; mask undefined values first")
        per_unit = self._per_unit(cols)
        if self.method == "poisson":
            return poisson_sums(per_unit, n_boot=self.n_boot, seed=self.seed)
        n_units = per_unit.shape[0]
        if self.n_boot == 0 or n_units == 0:
            return np.zeros((self.n_boot, cols.shape[1]))
        out = np.empty((self.n_boot, cols.shape[1]))
        start = 0
        for counts in self.counts(n_units):
            stop = start + len(counts)
            out[start:stop] = counts @ per_unit
            start = stop
        return out

    def counts(self, n_units: int) -> tuple[np.ndarray, ...]:
        """The multinomial resample counts of ``n_units`` units, ``(B x n_units)`` as float row chunks
        of at most :data:`MAX_CELLS` entries: drawn in order from one ``default_rng(seed)`` the first
        time, then kept."""
        draws = self._draws.get(n_units)
        if draws is None:
            rng = np.random.default_rng(self.seed)
            p = np.full(n_units, 1.0 / n_units)
            chunk = max(1, MAX_CELLS // n_units)
            draws = tuple(
                rng.multinomial(n_units, p, size=min(chunk, self.n_boot - start)).astype(float)
                for start in range(0, self.n_boot, chunk)
            )
            self._draws.clear()
            self._draws[n_units] = draws
        return draws

    def _per_unit(self, cols: np.ndarray) -> np.ndarray:
        """The column sums of each unit, ``(n_units x m)``, units in the order the counts use."""
        n = cols.shape[0]
        units: Sequence | np.ndarray = np.arange(n) if self.clusters is None else self.clusters
        if len(units) != n:
            raise ValueError(f"the resampler has {len(units)} cluster labels for {n} data rows")
        if self.universe is None and _increasing(units):
            # Each row its own unit, numbered in row order: the per-unit sums are the rows
            # (summing each into zeros only turns -0.0 into 0.0, which adding 0.0 does too).
            return np.add(cols, 0.0, out=np.empty_like(cols, order="C"))
        if self.universe is None:  # units numbered in order of first appearance, as pd.unique lists them
            codes, labels = pd.factorize(np.asarray(units), use_na_sentinel=False)
        else:
            labels = pd.Index(pd.unique(pd.Series(list(self.universe), dtype=object)))
            codes = labels.get_indexer(pd.Series(list(units), dtype=object))
        if (codes < 0).any():
            raise ValueError("every cluster label must be in the universe")
        per_unit = np.zeros((len(labels), cols.shape[1]))
        np.add.at(per_unit, codes, cols)
        return per_unit

    def interval(
        self, values: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *, alpha: float = 0.05
    ) -> tuple[float, float]:
        """Percentile CI at level 1 - ``alpha`` of ``statistic`` of the resampled sums of ``values``.

        ``statistic`` maps the ``(B x m)`` resampled sums to B values (vectorised), the function that
        gives the point estimate from the ``(1 x m)`` full-sample sums. ``(nan, nan)`` without
        resamples or rows; resamples where the statistic is undefined (NaN) are dropped.
        """
        return self.intervals(values, [statistic], alpha=alpha)[0]

    def intervals(
        self, values: np.ndarray, statistics: Sequence[Callable[[np.ndarray], np.ndarray]], *, alpha: float = 0.05
    ) -> list[tuple[float, float]]:
        """:meth:`interval` of several statistics of the same resampled sums (one product)."""
        check_alpha(alpha)
        cols = np.asarray(values, dtype=float)
        if self.n_boot == 0 or cols.shape[0] == 0:
            return [(float("nan"), float("nan")) for _ in statistics]
        sums = self.resampled_sums(cols)
        with np.errstate(invalid="ignore", divide="ignore"):
            return [percentile_interval(statistic(sums), alpha=alpha) for statistic in statistics]


def _increasing(units: Sequence | np.ndarray) -> bool:
    """Whether ``units`` are integers in strictly increasing order (row numbers: all distinct)."""
    return isinstance(units, np.ndarray) and units.dtype.kind in "iu" and bool((np.diff(units) > 0).all())


def _unchanged(value: object, default: int) -> bool:
    """``value`` is the int ``default`` (what a keyword left alone holds)."""
    return type(value) is int and value == default
