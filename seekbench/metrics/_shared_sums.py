"""One product for the integer-valued bootstrap columns of one group.

Each bootstrap of a group (CE's companion rates, accuracy, ERF(8), pooled CE or step RQI)
multiplies the group's ``(B x n)`` resample counts by its own few per-trace columns, so the count
matrix, by far the larger operand, is read once per statistic. When the columns hold
non-negative integers every product and partial sum is an integer below 2**53, which float64
holds exactly whatever the order of the additions: the resampled sums of all such columns, side by
side in one product, are then bit for bit those of one product each. Columns of fractions (RQI and
CE per trace) keep a product of their own: a BLAS product of another shape (or thread count) may
add in another order and differ in the last bits.

:func:`shared_sums` names a group's columns before its statistics are computed; within it,
:func:`~seekbench.metrics._bootstrap.bootstrap_sums` takes the sums of columns equal to one of
them (with the same seed and number of resamples) from the one product, made when first needed,
and computes any other columns as before. The draws are the same either way (one generator per
seed, number of clusters and B).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from ._draws import int_seed

#: Integers up to this are exact in float64 (the next one, 2**53 + 1, is not).
_EXACT = 2.0**53


@dataclass
class _Shared:
    seed: int
    n_boot: int
    blocks: list[np.ndarray]
    sums: list[np.ndarray] | None = None  # of every block, from one product when first asked


_SHARED: ContextVar[_Shared | None] = ContextVar("seekbench_shared_sums", default=None)


def exact_in_any_order(columns: np.ndarray) -> bool:
    """Whether resampled sums of ``columns`` (one row per cluster) are exact in any order: finite
    non-negative integers whose sum over a resample (n draws of a row, so at most n times the
    largest value) stays below 2**53; non-negative, so no sum is -0.0 in one order and 0.0 in another."""
    if not columns.size:
        return False
    return bool(
        np.isfinite(columns).all()
        and (columns >= 0).all()
        and (columns == np.floor(columns)).all()
        and columns.shape[0] * columns.max() < _EXACT
    )


@contextmanager
def shared_sums(blocks: Sequence[np.ndarray], *, seed: object, n_boot: int) -> Iterator[None]:
    """Resampled sums of the exact-integer ``blocks`` (each ``(n_clusters x m)``, one row per
    cluster, of one group) from one product while inside.

    Only with an integer seed (every call then draws the same counts) and B > 0; blocks of
    fractions, or of another number of rows than the first, are left to their own product.
    """
    keep = [np.add(b, 0.0, out=np.empty(b.shape)) for b in blocks if b.ndim == 2 and exact_in_any_order(b)]
    keep = [b for b in keep if b.shape[0] == keep[0].shape[0]]
    if len(keep) < 2 or n_boot <= 0 or not int_seed(seed):
        yield
        return
    token = _SHARED.set(_Shared(int(seed), int(n_boot), keep))
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared_block_sums(per_cluster: np.ndarray, seed: object, n_boot: int) -> np.ndarray | None:
    """The resampled sums of ``per_cluster`` from the shared product, or None when it is not one
    of the blocks of :func:`shared_sums` (then computed on its own)."""
    shared = _SHARED.get()
    if shared is None or not int_seed(seed) or seed != shared.seed or n_boot != shared.n_boot:
        return None
    for i, block in enumerate(shared.blocks):
        if block.shape == per_cluster.shape and np.array_equal(block, per_cluster):
            if shared.sums is None:
                shared.sums = _product(shared.blocks, shared.seed, shared.n_boot)
            return shared.sums[i].copy()
    return None


def _product(blocks: list[np.ndarray], seed: int, n_boot: int) -> list[np.ndarray]:
    from ._bootstrap import resampled_sums  # the module that calls this one

    sums = resampled_sums(np.concatenate(blocks, axis=1), seed, n_boot)
    bounds = np.cumsum([0] + [b.shape[1] for b in blocks])
    return [np.ascontiguousarray(sums[:, a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
