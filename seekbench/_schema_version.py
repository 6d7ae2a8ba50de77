"""Refusing records written for a newer ``schema_version`` than this seekbench reads.

Traces and annotation records carry ``schema_version`` (``MAJOR.MINOR``, see
``CHANGELOG.md``). A record from a newer seekbench would otherwise fail the
schema with a bare "'1.0' was expected"; this says what happened and what to do.
"""

from __future__ import annotations

import re

from ._errors import UserInputError
from ._version import SCHEMA_VERSION, __version__

__all__ = ["check_schema_version", "parse_schema_version"]

_VERSION = re.compile(r"(\d+)\.(\d+)")


def parse_schema_version(value: object) -> tuple[int, int] | None:
    """``(major, minor)`` of a ``schema_version`` string, or None when it is not ``MAJOR.MINOR``.

    Examples
    --------
    >>> parse_schema_version("1.10")
    (1, 10)
    >>> parse_schema_version("v2") is None
    True
    """
    m = _VERSION.fullmatch(value) if isinstance(value, str) else None
    return (int(m[1]), int(m[2])) if m else None


def check_schema_version(
    value: object, *, what: str, file: str | None = None, line: int | None = None, trace_id: str | None = None
) -> None:
    """Raise :class:`UserInputError` when ``value`` is a newer schema version than :data:`SCHEMA_VERSION`.

    Any other mismatch (older, malformed, missing) is left to the JSON Schema, whose
    message names the expected value.

    Parameters
    ----------
    value : object
        The record's ``schema_version``.
    what : str
        ``"trace"`` or ``"annotation"``, for the message.
    file, line, trace_id : optional
        Where the record is, for the message.

    Examples
    --------
    >>> check_schema_version("1.0", what="trace")
    >>> check_schema_version("9.0", what="trace")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    seekbench._errors.UserInputError: at $.schema_version: trace schema_version 9.0 is newer than ...
    """
    got, have = parse_schema_version(value), parse_schema_version(SCHEMA_VERSION)
    if got is not None and have is not None and got > have:
        raise UserInputError(
            f"{what} schema_version {value} is newer than this seekbench {__version__} reads "
            f"({SCHEMA_VERSION}); upgrade seekbench (pip install -U seekbench)",
            file=file,
            line=line,
            trace_id=trace_id,
            path="$.schema_version",
        )
