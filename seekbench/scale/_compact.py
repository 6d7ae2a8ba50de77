"""Per-trace rows made compact in the worker and joined column by column on the driver.

At millions of traces the driver's memory is the rows it keeps, so a fragment's rows travel
(pickled) as one array per column, without a Python object per row: string columns
(``agent``, ``dataset``, ``question_id``: a few distinct values) as categoricals, and no
``trace_id`` column, since the fragment's ids travel once anyway, as an Arrow string array
for the duplicate check. The driver joins each column over all fragments and drops the
fragments' arrays of it at once, so it holds the rows once plus one column (``pd.concat``
of frames holds them twice), then builds the frame without copying the columns again.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.api.types import infer_dtype, union_categoricals

#: How string columns come out of the merge: ``object`` as the chunk function returned them (the
#: same frame ``pd.concat`` gives), ``compact`` as categoricals (sorted categories) and without the
#: ``trace_id`` column (the ids are beside the rows, as Arrow strings): the same values in a
#: fraction of the memory.
Strings = Literal["object", "compact"]
STRINGS = ("object", "compact")


@dataclass
class CompactRows:
    """A fragment's rows as columns: numpy or pandas arrays, string columns as categoricals.

    ``ids_at`` is where the ``trace_id`` column was (its values are the fragment's ids, carried
    beside), or None when the rows had none of their own.
    """

    names: list[str]
    columns: list[Any]
    encoded: frozenset[str]
    ids_at: int | None
    attrs: dict
    n: int

    def frame(self, ids: pa.Array) -> pd.DataFrame:
        """The rows as the chunk function returned them (decoded strings, ``trace_id`` put back)."""
        cols = {
            name: _objects(col) if name in self.encoded else col
            for name, col in zip(self.names, self.columns, strict=True)
        }
        out = pd.DataFrame(cols, index=pd.RangeIndex(self.n), copy=False)
        if self.ids_at is not None:
            out.insert(self.ids_at, "trace_id", ids.to_numpy(zero_copy_only=False))
        out.attrs = self.attrs
        return out


def compact_rows(rows: pd.DataFrame, ids: list[str]) -> CompactRows | pd.DataFrame:
    """``rows`` (aligned with the fragment's ``ids``) as columns; a frame whose columns are not
    unique names travels as it is."""
    if not rows.columns.is_unique or not all(isinstance(c, str) for c in rows.columns):
        return rows
    names, columns, encoded, ids_at = [], [], set(), None
    for i, name in enumerate(rows.columns):
        col = rows[name]
        if name == "trace_id" and col.dtype == object and _equal(col, ids):
            ids_at = i
            continue
        names.append(name)
        if col.dtype == object and _strings(col):
            columns.append(pd.Categorical(col.to_numpy()))
            encoded.add(name)
        else:
            columns.append(col.array if isinstance(col.dtype, pd.api.extensions.ExtensionDtype) else col.to_numpy())
    return CompactRows(names, columns, frozenset(encoded), ids_at, dict(rows.attrs), len(rows))


def _equal(col: pd.Series, ids: list[str]) -> bool:
    return len(col) == len(ids) and bool((col.to_numpy() == np.asarray(ids, dtype=object)).all())


def _strings(col: pd.Series) -> bool:
    """Every value a string or None (what a categorical gives back exactly)."""
    if infer_dtype(col, skipna=True) not in ("string", "empty"):
        return False
    missing = col.isna().to_numpy()
    return not missing.any() or all(v is None for v in col.to_numpy()[missing])


def _objects(cat: pd.Categorical) -> np.ndarray:
    """The values of ``cat`` as an object array (missing: None), sharing one string object per category."""
    out = np.full(len(cat), None, dtype=object)
    codes = cat.codes
    has = codes >= 0
    out[has] = np.asarray(cat.categories, dtype=object)[codes[has]]
    return out


def join_rows(
    parts: list[tuple[CompactRows | pd.DataFrame, pa.Array]], keep: np.ndarray, *, strings: Strings
) -> pd.DataFrame:
    """The rows of ``parts`` (each with its fragment's ids) one after another, where ``keep``, indexed 0..n-1.

    Equal to ``pd.concat`` of the parts' frames then ``[keep]`` (the same columns, dtypes and
    attrs; ``compact``: see :data:`Strings`); the parts' columns are emptied as they are joined.
    """
    if not parts:
        return pd.DataFrame()
    first = parts[0][0]
    if not all(
        isinstance(p, CompactRows) and p.names == first.names and p.ids_at == first.ids_at for p, _ in parts
    ):  # fragments returned different columns: pandas' own rules for them
        frames = [p if isinstance(p, pd.DataFrame) else p.frame(ids) for p, ids in parts]
        rows = pd.concat(frames, ignore_index=True)
        return rows if keep.all() else rows[keep].reset_index(drop=True)
    compact: list[CompactRows] = [p for p, _ in parts]
    drop = None if keep.all() else keep
    cols: dict[str, Any] = {}
    for j, name in enumerate(first.names):
        arrays = [p.columns[j] for p in compact]
        for p in compact:
            p.columns[j] = None  # this column's only copy is now the joined one
        cols[name] = _joined(arrays, [name in p.encoded for p in compact], drop, strings=strings)
        del arrays
        release_freed()
    n = int(keep.sum())
    if first.ids_at is not None and strings == "object":
        tids = pa.chunked_array([ids for _, ids in parts], type=pa.string())
        col = (tids if drop is None else tids.filter(pa.array(drop))).to_numpy()
        items = list(cols.items())
        cols = dict([*items[: first.ids_at], ("trace_id", col), *items[first.ids_at :]])
    rows = pd.DataFrame(cols, index=pd.RangeIndex(n), copy=False)
    attrs = compact[0].attrs
    if attrs and all(p.attrs == attrs for p in compact[1:]):  # what pd.concat keeps
        rows.attrs = attrs
    return rows


def _joined(arrays: list, encoded: list[bool], keep: np.ndarray | None, *, strings: Strings) -> Any:
    """One column over all fragments (``keep``: the rows left)."""
    if all(encoded):
        cat = union_categoricals(arrays, sort_categories=True)
        if keep is not None:
            cat = cat[keep].remove_unused_categories()
        return cat if strings == "compact" else _objects(cat)
    arrays = [_objects(a) if e else a for a, e in zip(arrays, encoded, strict=True)]
    if all(isinstance(a, np.ndarray) for a in arrays) and len({a.dtype for a in arrays}) == 1:
        out = np.concatenate(arrays)
    else:  # mixed or extension dtypes: pandas' own rules for them
        joined = pd.concat([pd.Series(a, copy=False) for a in arrays], ignore_index=True)
        out = joined.array if isinstance(joined.dtype, pd.api.extensions.ExtensionDtype) else joined.to_numpy()
    return out if keep is None else out[keep]


def release_freed() -> None:
    """Give the memory freed so far back to the OS (glibc; elsewhere nothing to do).

    A fragment's arrays are small blocks of glibc's heap; freed between blocks still in use,
    they stay in the process (the heap's top is seldom free), so joining columns would leave
    the driver holding the parts and the joined rows at once. ``malloc_trim`` returns the
    free pages wherever they are.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    pa.default_memory_pool().release_unused()


@functools.cache
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): no such call
        return None
