"""Inputs that are streams (``-`` for stdin, a pipe, a FIFO, ``<(cmd)``, a device) spooled to a file.

Every reader opens its input by name, often more than once: detection reads the head, then the
importer reads it all (a zip archive even seeks). A stream gives its bytes once, so detection
used to consume what the importer then missed ("cannot tell the trace format"). A stream is
copied to a regular file first, a block at a time, and read from there: detection and the
importer see the same bytes. The copy is bounded as a read is: a run of more than
``limits.record_bytes`` bytes without a newline (``/dev/zero``) stops it with the limit's error.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from .._errors import UserInputError
from .._limits import DEFAULT_LIMITS, ReadLimits, limit_error

#: The name that reads standard input.
STDIN = "-"
_BLOCK = 1 << 20


def is_stream(name: str | os.PathLike) -> bool:
    """True for ``-`` and for an existing input that is not a regular file or a folder (a pipe, a FIFO,
    a character device such as ``/dev/stdin``); False for files, folders, URLs and missing paths."""
    name = os.fspath(name)
    if name == STDIN:
        return True
    if "://" in str(name):
        return False
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def stream_label(name: str | os.PathLike) -> str:
    """The file name a stream's copy takes (its importers may name an agent after it): ``stdin`` for
    ``-``, else the stream's own base name (``/dev/fd/63`` -> ``fd63``, ``runs/pipe`` -> ``pipe``)."""
    name = os.fspath(name)
    if name == STDIN:
        return "stdin"
    path = Path(name)
    return f"fd{path.name}" if path.parent.name == "fd" and path.name.isdigit() else (path.name or "stream")


def spool_stream(name: str | os.PathLike, target: str | os.PathLike, *, limits: ReadLimits | None = None) -> Path:
    """Copy the stream ``name`` (``-``: standard input) to the new file ``target``; return ``target``.

    Raises
    ------
    UserInputError
        The stream cannot be opened, or holds a run of more than ``limits.record_bytes`` bytes
        without a newline (``/dev/zero``): the error names the stream and ``--max-record-bytes``.
    """
    name = os.fspath(name)
    cap = (limits or DEFAULT_LIMITS).record_bytes
    try:
        src = sys.stdin.buffer if name == STDIN else open(name, "rb")  # noqa: SIM115 (closed below)
    except OSError as e:
        raise UserInputError(f"cannot read this input: {e.strerror}", file=name) from e
    run, line = 0, 1  # bytes since the last newline; the line they are on
    try:
        with open(target, "xb") as out:
            while block := src.read(_BLOCK):
                parts = block.split(b"\n")
                if len(parts) > 1:  # the first part ends the current run; whole lines sit between
                    longest = max([run + len(parts[0]), *map(len, parts[1:-1])])
                    run, line = len(parts[-1]), line + len(parts) - 1
                else:
                    longest = run = run + len(block)
                if max(longest, run) > cap:
                    raise limit_error("record_bytes", limits or DEFAULT_LIMITS, file=name, line=line)
                out.write(block)
    finally:
        if src is not sys.stdin.buffer:
            src.close()
    return Path(target)
