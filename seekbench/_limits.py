"""Bounded input: how many bytes one record, one archive member and one Parquet row group may take.

A small hostile file can stand for a huge one: a 1 MB zip of zeros inflates to gigabytes, a
70 KB Parquet file declares row groups of gigabytes, ``/dev/zero`` is a line that never ends.
Every reader stops at a documented limit instead, with exit 2 naming the limit and the option
that raises it (docs/formats.md, "Limits"). The defaults are far above real traces (the
largest line of the 190 human-labeled traces is 15 KB; a long Inspect sample with its events
is tens of MB) and far below what exhausts a machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._errors import UserInputError

MiB = 2**20
#: Decompressed bytes of one record: a JSONL line, or a whole-file JSON or text document.
RECORD_BYTES = 256 * MiB
#: Decompressed bytes of one zip member (an Inspect ``.eval`` log's header or sample).
MEMBER_BYTES = 256 * MiB
#: Uncompressed bytes of one Parquet row group, as its metadata declares them.
ROW_GROUP_BYTES = 512 * MiB

_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)(i?b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


@dataclass(frozen=True)
class ReadLimits:
    """The byte limits of one read; each is raised (or lowered) by its command-line option.

    Parameters
    ----------
    record_bytes : int
        One JSONL line, or a whole-file document (``--max-record-bytes``).
    member_bytes : int
        One decompressed zip member (``--max-member-bytes``).
    row_group_bytes : int
        One Parquet row group, uncompressed (``--max-row-group-bytes``).
    """

    record_bytes: int = RECORD_BYTES
    member_bytes: int = MEMBER_BYTES
    row_group_bytes: int = ROW_GROUP_BYTES


class InputLimitError(UserInputError):
    """Input past one of the :class:`ReadLimits`: always ends the read (``--skip-invalid`` does not pass
    over it, since what follows cannot be found without reading what is too large to hold)."""


#: The limits a read uses when none are given.
DEFAULT_LIMITS = ReadLimits()

#: limit field -> (what it bounds, the option that sets it).
_WHAT = {
    "record_bytes": ("per record (one line, or a whole-file document)", "--max-record-bytes"),
    "member_bytes": ("per decompressed archive member", "--max-member-bytes"),
    "row_group_bytes": ("per Parquet row group (uncompressed)", "--max-row-group-bytes"),
}


def format_size(n: int) -> str:
    """``268435456`` -> ``'256 MiB'`` (whole units only, else bytes).

    >>> format_size(256 * 2**20), format_size(1536), format_size(10)
    ('256 MiB', '1.5 KiB', '10 bytes')
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


def parse_size(text: str) -> int:
    """A byte count as an option gives it: ``1000``, ``64K``, ``256M``, ``2G`` (binary units; ``MiB``,
    ``MB`` and ``m`` are the same). A user error for anything else, or for zero.

    >>> parse_size("256M"), parse_size("2GiB"), parse_size("100")
    (268435456, 2147483648, 100)
    """
    m = _SIZE.fullmatch(text)
    if m is None or int(m.group(1)) == 0:
        raise UserInputError(f"{text!r} is not a size; write a positive number of bytes, e.g. 1000, 64K, 256M or 2G")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def limit_error(
    field: str, limits: ReadLimits, *, file: str, line: int | None = None, what: str = ""
) -> InputLimitError:
    """The one user error for input past a limit: the limit, its value, and the option that raises it.

    >>> limit_error("record_bytes", DEFAULT_LIMITS, file="x.jsonl", line=3).one_line()[:60]
    'x.jsonl:3: input past the limit of 256 MiB per record (one l'
    """
    kind, option = _WHAT[field]
    value = getattr(limits, field)
    subject = f"{what} is " if what else "input "
    return InputLimitError(
        f"{subject}past the limit of {format_size(value)} {kind}; if the file is trusted, raise it "
        f"with {option} SIZE (e.g. {option} {_suggest(value)})",
        file=file,
        line=line,
    )


def _suggest(value: int) -> str:
    n = 4 * value
    for unit, size in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


#: Bytes one value of a Parquet physical type takes at least once read (BYTE_ARRAY: its offset or index).
_WIDTH = {"BOOLEAN": 1 / 8, "INT32": 1, "INT64": 8, "INT96": 8, "FLOAT": 4, "DOUBLE": 8, "BYTE_ARRAY": 4}


def check_row_groups(metadata, limits: ReadLimits | None, *, file: str) -> None:
    """Refuse a Parquet file (its ``pyarrow`` ``FileMetaData``) declaring a row group, or a column of
    one, larger uncompressed than ``limits.row_group_bytes``, or with more values than fit in it (a run
    of repeated numbers encodes in a few bytes and decodes to 8 bytes each): reading it would hold that
    much at once. The error names the row group and, as its line, the row the group starts at.

    What string values decode to is not in the metadata (a dictionary-encoded string counts once,
    however many rows repeat it): ``RowGroups`` of the Parquet importer measures it as it reads.
    """
    limits = limits or DEFAULT_LIMITS
    cap, row = limits.row_group_bytes, 1
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        columns = [group.column(j) for j in range(group.num_columns)]
        values = sum(
            max(c.num_values, group.num_rows) * _WIDTH.get(c.physical_type, 1) for c in columns
        )  # INT32 counted as 1 byte: it may be read as int8
        size = max([group.total_byte_size, int(values)] + [c.total_uncompressed_size for c in columns])
        if size > cap:
            raise limit_error(
                "row_group_bytes", limits, file=file, line=row, what=f"row group {i} ({format_size(size)})"
            )
        row += group.num_rows
