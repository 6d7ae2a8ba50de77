"""The Poisson bootstrap: resampled per-trace sums at a cost that does not grow with the corpus.

The exact bootstrap draws, for each of B resamples, a multinomial count of every resampling
unit (trace or question): B x n draws, 5.7 billion for B = 2000 at 2.85 million traces. The
Poisson bootstrap (Hanley & MacGibbon 2006, "Creating non-parametric bootstrap samples using
Poisson frequencies", Comput. Methods Programs Biomed. 83; Chamandy, Muralidharan, Najmi &
Naidu 2012, "Estimating uncertainty for massive data streams", Google) gives each unit an
independent Poisson(1) weight instead: the multinomial counts Mult(n; 1/n, ..., 1/n) are
replaced by their n independent Poisson(1) limits, which agree with them to O(1/n) in every
moment that a smooth statistic of the sums depends on, so percentile intervals agree within
Monte Carlo error for the sample sizes where the exact bootstrap is affordable (checked in
``tests/metrics/test_poisson_bootstrap.py``) and beyond.

Independence is what makes it cheap here: the statistics are functions of per-unit column
sums, and units whose rows are equal contribute the same row. A sum of k independent
Poisson(1) weights is Poisson(k), so the k equal rows are drawn as one row with a Poisson(k)
weight: the same distribution with B x (distinct rows) draws. Per-trace rows are counts
(labeled steps, decision points by state, event time and kind), so at any corpus size they
take at most a few thousand distinct values. The result depends on the multiset of rows only,
never on their order, so tables reduced in chunks give the same interval whatever the order.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
import pandas as pd

#: How the resamples are drawn: the exact multinomial bootstrap, the Poisson bootstrap, or
#: the exact one up to :data:`AUTO_POISSON_ABOVE` traces and the Poisson one above.
BootstrapMethod = Literal["auto", "exact", "poisson"]
BOOTSTRAP_METHODS: tuple[str, ...] = get_args(BootstrapMethod)

#: With ``bootstrap="auto"``: the number of traces above which the Poisson bootstrap is used.
#: The exact bootstrap draws B x traces multinomial counts: 57 million at B = 2000 and 28,493
#: traces (the paper's corpus, a few seconds), ten times that at 10x.
AUTO_POISSON_ABOVE = 100_000

#: Upper bound on the entries of one chunk of the Poisson weight matrix.
_MAX_CELLS = 4_000_000


def resolve_method(method: str, n_traces: int) -> str:
    """``"exact"`` or ``"poisson"``: the method ``method`` stands for on ``n_traces`` traces."""
    if method == "auto":
        return "poisson" if n_traces > AUTO_POISSON_ABOVE else "exact"
    return method


def poisson_sums(per_unit: np.ndarray, *, n_boot: int, seed: int | None) -> np.ndarray:
    """``(n_boot x m)`` Poisson-bootstrap sums of the rows of ``per_unit`` (units x m).

    Row b is sum_i w_bi x_i with w_bi independent Poisson(1); equal rows are pooled with
    one Poisson(k) weight (see the module docstring).

    Examples
    --------
    >>> s = poisson_sums(np.array([[1.0, 1.0]] * 1000 + [[0.0, 1.0]] * 1000), n_boot=4000, seed=0)
    >>> s.shape, round(float((s[:, 0] / s[:, 1]).std()), 2)  # sd of a mean of 2000 coin flips: 0.5 / sqrt(2000)
    ((4000, 2), 0.01)
    """
    rows = np.asarray(per_unit, dtype=float)
    out = np.zeros((n_boot, rows.shape[1]))
    if n_boot == 0 or rows.shape[0] == 0:
        return out
    distinct, counts = _distinct_rows(rows)
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_CELLS // len(distinct))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        out[start:stop] = rng.poisson(counts, size=(stop - start, len(distinct))).astype(float) @ distinct
    return out


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows in lexicographic order and how often each occurs (as ``np.unique(rows,
    axis=0, return_counts=True)``), by hashing the columns one by one instead of sorting all rows."""
    key = np.zeros(len(rows), dtype=np.int64)
    for col in rows.T:  # key < len(rows) after each factorize, so key * n_values + code fits int64
        codes, values = pd.factorize(col)
        key = pd.factorize(key * len(values) + codes)[0].astype(np.int64)
    counts = np.bincount(key)
    first = np.full(len(counts), len(rows), dtype=np.int64)
    np.minimum.at(first, key, np.arange(len(rows)))
    distinct = rows[first]
    order = np.lexsort(distinct.T[::-1])
    return distinct[order], counts[order]
