"""Per-trace reductions over step rows with numpy: the vectorised core under the metrics.

The step table lists each trace's steps in order (``build_tables``), so a trace's rows
form a segment. :class:`Segments` numbers the traces in order of first appearance
(pandas' ``groupby(sort=False)`` order), and gives sums, maxima, cumulative maxima and
forward fills per trace with one numpy call each instead of a pandas groupby. Tables
whose traces are not contiguous (any DataFrame the public functions accept) are handled
by a stable sort, so results never depend on row layout beyond what pandas' groupby
would.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


class Segments:
    """Traces of a step table as numbered segments.

    Parameters
    ----------
    keys : array-like
        The ``trace_id`` of each row. Missing ids (None, NaN) belong to no trace, as in
        a pandas groupby with ``dropna=True``.

    Attributes
    ----------
    codes : ndarray of int64
        Trace number of each row (0 .. n - 1 in order of first appearance; -1 if missing).
    uniques : ndarray of object
        The trace ids, in that order.
    n : int
        Number of traces.
    """

    def __init__(self, keys) -> None:
        values = keys.to_numpy(dtype=object) if isinstance(keys, pd.Series) else np.asarray(keys, dtype=object)
        codes, uniques = pd.factorize(values, sort=False)
        self.codes = codes.astype(np.int64, copy=False)
        self.uniques = np.asarray(uniques, dtype=object)
        self.n = len(self.uniques)
        self.contiguous = bool(len(codes) == 0 or (codes >= 0).all() and (np.diff(codes) >= 0).all())

    @classmethod
    def from_codes(cls, codes: np.ndarray, n: int) -> Segments:
        """Segments from precomputed codes (0 .. n - 1, -1 for none)."""
        self = cls.__new__(cls)
        self.codes = np.asarray(codes, dtype=np.int64)
        self.uniques = np.arange(n, dtype=object)
        self.n = n
        self.contiguous = bool(len(codes) == 0 or (self.codes >= 0).all() and (np.diff(self.codes) >= 0).all())
        return self

    def sum(self, weights: np.ndarray, *, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-trace sum of ``weights`` (over the rows where ``mask`` holds)."""
        ok = self.codes >= 0 if mask is None else (self.codes >= 0) & mask
        return np.bincount(self.codes[ok], weights=np.asarray(weights, dtype=float)[ok], minlength=self.n).astype(float)

    def count(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-trace number of rows (where ``mask`` holds), int64."""
        ok = self.codes >= 0 if mask is None else (self.codes >= 0) & mask
        return np.bincount(self.codes[ok], minlength=self.n).astype(np.int64)

    def first_valid(self, values) -> np.ndarray:
        """Per trace: the first non-missing value in row order (None where there is none), object."""
        values = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else np.asarray(values, dtype=object)
        out = np.full(self.n, None, dtype=object)
        rows = np.flatnonzero((self.codes >= 0) & pd.notna(values))
        found, first = np.unique(self.codes[rows], return_index=True)
        out[found] = values[rows[first]]
        return out

    def max_int(self, values: np.ndarray, *, empty: int = -1) -> np.ndarray:
        """Per-trace maximum of integer ``values`` (``empty`` for a trace without rows)."""
        out = np.full(self.n, empty, dtype=np.int64)
        ok = self.codes >= 0
        np.maximum.at(out, self.codes[ok], np.asarray(values, dtype=np.int64)[ok])
        return out

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        """Cumulative sum within each trace, in row order, of integer ``values`` (int64)."""
        values = np.asarray(values, dtype=np.int64)
        order = self._order()
        v = values if order is None else values[order]
        c = self.codes if order is None else self.codes[order]
        run = np.cumsum(v)
        if len(v):
            start = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
            before = np.repeat(run[start] - v[start], np.diff(np.r_[start, len(v)]))
            run = run - before
        if order is None:
            return run
        out = np.empty_like(run)
        out[order] = run
        return out

    def _order(self) -> np.ndarray | None:
        return None if self.contiguous else np.argsort(np.where(self.codes < 0, self.n, self.codes), kind="stable")

    def cummax_small(self, values: np.ndarray) -> np.ndarray:
        """Cumulative maximum within each trace, in row order, of values in [0, 3) (evidence states).

        Rows of a missing trace get NaN.
        """
        return _in_order(self, values, _cummax_sorted)

    def ffill(self, values: np.ndarray) -> np.ndarray:
        """Forward fill of NaN within each trace, in row order (leading NaN stay NaN)."""
        return _in_order(self, values, _ffill_sorted)


def _in_order(seg: Segments, values: np.ndarray, fn) -> np.ndarray:
    """Apply ``fn(values, codes)`` (which needs non-decreasing codes) in segment order, then undo it."""
    values = np.asarray(values, dtype=float)
    order = seg._order()
    if order is None:
        out = fn(values, seg.codes)
    else:
        out = np.empty_like(values)
        out[order] = fn(values[order], seg.codes[order])
    out[seg.codes < 0] = np.nan
    return out


def _cummax_sorted(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    # Shift each trace above every earlier one, so one running maximum never crosses a boundary.
    shift = np.where(codes < 0, 0, codes).astype(float) * 4.0
    filled = np.where(np.isnan(values), -1.0, values)
    run = np.maximum.accumulate(filled + shift) - shift
    return np.where(run < 0, np.nan, run)


def _ffill_sorted(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    n = len(values)
    if n == 0:
        return values.copy()
    idx = np.where(np.isnan(values), -1, np.arange(n))
    last = np.maximum.accumulate(idx)
    start = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    seg_start = np.repeat(start, np.diff(np.r_[start, n]))
    ok = last >= seg_start
    return np.where(ok, values[np.where(ok, last, 0)], np.nan)
