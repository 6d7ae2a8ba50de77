"""Parquet row groups read within ``--max-row-group-bytes`` as decoded, not only as declared.

A row group's metadata counts a dictionary-encoded string once, however many rows repeat
it: a 400 KB string in 6,000 rows declares 400 KB and decodes to 2.4 GB, so a 90 KB file
passes :func:`seekbench._limits.check_row_groups` and takes gigabytes to read. Here every
string or binary leaf column (nested ones too, e.g. ``documents.list.element.text``) is
read as a dictionary, which holds about what the file declares; the bytes its rows decode
to are summed from the dictionary's value lengths taken by the indices, and a row group
past the limit is refused before any of it is decoded. Within the limit, the columns are
decoded to the types a plain read gives (except those the caller reads as dictionaries),
so readers see the same tables as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..._limits import DEFAULT_LIMITS, ReadLimits, format_size, limit_error

#: Parquet logical types of a BYTE_ARRAY leaf read as a dictionary (text or bytes; not decimals).
_TEXT = ("STRING", "NONE", "JSON", "ENUM", "BSON")


def decoded_bytes(arr: pa.Array | pa.ChunkedArray) -> int:
    """Bytes ``arr`` takes once its dictionaries are decoded: value bytes and offsets of each string,
    the fixed widths of the rest. Vectorised (a take and a sum per dictionary).

    >>> decoded_bytes(pa.array(["ab", "ab", None]).dictionary_encode())  # 2 + 2 value bytes, 4 offsets
    20
    """
    if isinstance(arr, pa.ChunkedArray):
        return sum(decoded_bytes(c) for c in arr.chunks)
    t = arr.type
    if pa.types.is_dictionary(t):
        v = t.value_type
        if not (
            pa.types.is_binary(v) or pa.types.is_string(v) or pa.types.is_large_binary(v) or pa.types.is_large_string(v)
        ):  # fixed-width values
            return len(arr) * max(v.bit_width // 8, 1)
        values = pc.sum(pc.take(pc.binary_length(arr.dictionary), arr.indices)).as_py() or 0
        return int(values) + 4 * (len(arr) + 1)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        return 4 * (len(arr) + 1) + decoded_bytes(arr.values)
    if pa.types.is_fixed_size_list(t):
        return decoded_bytes(arr.values)
    if pa.types.is_struct(t):
        return sum(decoded_bytes(arr.field(i)) for i in range(t.num_fields))
    return int(arr.nbytes)


def plain_type(t: pa.DataType) -> pa.DataType:
    """``t`` with each dictionary replaced by its value type (inside lists and structs too)."""
    if pa.types.is_dictionary(t):
        return t.value_type
    if pa.types.is_map(t):
        return pa.map_(plain_type(t.key_type), t.item_field.with_type(plain_type(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(plain_type(f.type)) for f in t])
    return t


def text_leaves(schema) -> list[str]:
    """The paths of the string and binary leaf columns of a ``pyarrow.parquet.ParquetSchema``."""
    out = []
    for i in range(len(schema)):
        col = schema.column(i)
        if col.physical_type == "BYTE_ARRAY" and col.logical_type.type in _TEXT:
            out.append(col.path)
    return out


class RowGroups:
    """The row groups of one Parquet file, each read only when it decodes within ``limits``.

    Parameters
    ----------
    source : path or binary file
        The Parquet file (a path, or a file object as :func:`~seekbench.traces.open_binary` gives).
    metadata : pyarrow.parquet.FileMetaData
        Its footer, already read (and checked by :func:`seekbench._limits.check_row_groups`).
    file : str
        The name errors give.
    limits : ReadLimits, optional
        ``row_group_bytes`` bounds the decoded bytes of the columns read from one row group.
    dictionary : sequence of str
        Top-level columns returned as dictionaries (as ``read_dictionary`` of a plain read would).
    """

    def __init__(
        self, source, metadata, *, file: str, limits: ReadLimits | None = None, dictionary: Sequence[str] = ()
    ) -> None:
        import pyarrow.parquet as pq

        self.file = file
        self.limits = limits or DEFAULT_LIMITS
        self.keep = set(dictionary)
        paths = list(dict.fromkeys([*dictionary, *text_leaves(metadata.schema)]))
        self.pf = pq.ParquetFile(source, metadata=metadata, read_dictionary=paths)
        self.n = metadata.num_row_groups
        self.first_row = np.r_[0, np.cumsum([metadata.row_group(i).num_rows for i in range(self.n)])].astype(np.int64)

    def read(self, groups: Iterable[int], columns: list[str] | None = None, *, decode: bool = True) -> pa.Table:
        """Row groups ``groups`` (in order), columns ``columns`` (every column when None), each group
        refused past the limit as decoded. ``decode=False`` leaves every text column a dictionary (then
        :meth:`decode` a slice at a time)."""
        parts = []
        for rg in groups:
            t = self.pf.read_row_group(rg, columns=columns)
            size = sum(decoded_bytes(c) for c in t.columns)
            if size > self.limits.row_group_bytes:
                raise limit_error(
                    "row_group_bytes",
                    self.limits,
                    file=self.file,
                    line=int(self.first_row[rg]) + 1,
                    what=f"row group {rg} ({format_size(size)} decoded)",
                )
            parts.append(self.decode(t) if decode else t)
        if not parts:  # a file without row groups
            empty = self.pf.schema_arrow.empty_table()
            return self.decode(empty if columns is None else empty.select(list(dict.fromkeys(columns))))
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)

    def decode(self, t: pa.Table | pa.RecordBatch):
        """``t`` with the dictionary columns not asked for as dictionaries decoded to their values."""
        fields, columns, changed = list(t.schema), list(t.columns), False
        for i, field in enumerate(fields):
            if field.name in self.keep:
                continue
            plain = plain_type(field.type)
            if not plain.equals(field.type):
                fields[i], columns[i], changed = field.with_type(plain), columns[i].cast(plain), True
        if not changed:
            return t
        # from_arrays rather than set_column: RecordBatch.set_column is newer than the pyarrow 14 we support
        schema = pa.schema(fields, metadata=t.schema.metadata)
        return (pa.Table if isinstance(t, pa.Table) else pa.RecordBatch).from_arrays(columns, schema=schema)
