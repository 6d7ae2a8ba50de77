"""Writes that fail for want of room (a full disk or quota, ``ulimit -f``): one line, and nothing torn.

Python ignores SIGXFSZ, so a file size limit shows as ``OSError(EFBIG)``, as a full disk shows as
``ENOSPC``: raised by ``write``, ``flush``, ``fsync`` or ``close``, without a file name. Every writer
turns them into :class:`~seekbench._errors.OutputWriteError` naming the file, what was kept, and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os

from ._errors import OutputWriteError

#: The errors only a write gives: a full disk or quota, a file size limit (``ulimit -f``), a read-only file system.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS})


def is_write_error(e: BaseException) -> bool:
    """True for an OSError that a write gave because there is no room (see :data:`WRITE_ERRNOS`)."""
    return isinstance(e, OSError) and e.errno in WRITE_ERRNOS


def write_error(e: OSError, path: str | os.PathLike, *, kept: str, resumable: bool = False) -> OutputWriteError:
    """The one-line error for a write that failed for want of room: what failed, what was kept, what to do.

    Examples
    --------
    >>> import errno
    >>> write_error(OSError(errno.EFBIG, "File too large"), "out.jsonl", kept="the earlier file is kept").one_line()
    'out.jsonl: cannot write: File too large (a full disk or a file size limit); the earlier file is kept; \
free space (or raise the limit) and run the command again'
    """
    why = e.strerror or os.strerror(e.errno or 0)
    return OutputWriteError(
        f"cannot write: {why} (a full disk or a file size limit); {kept}; free space (or raise the limit) and "
        "run the command again",
        file=str(path),
        resumable=resumable,
    )


def append_whole(fd: int, data: bytes, *, path: str | os.PathLike, kept: str) -> None:
    """Append ``data`` to the file open at ``fd`` (``O_APPEND``) and fsync it; all of it or none of it.

    A write that fails part way (a full disk) is cut back to the file's earlier size, so the file never
    ends in a torn record; the failure is :func:`write_error` (``resumable``: what was there is whole).
    """
    size = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
            os.fsync(fd)
        if is_write_error(e):
            raise write_error(e, path, kept=kept, resumable=True) from e
        raise
