"""One writer per output: an exclusive ``flock`` on ``PATH.lock`` for as long as a run writes ``PATH``.

Two ``annotate`` runs on one output (or one judge cache) each paid for every request the other was
paying for; the second run now stops at once, naming the first one's pid. The lock is the ``flock``
on the open file, not the file's existence: the kernel lets it go when its process ends (a kill, a
crash), so a lock file left behind, or the pid written in it, never blocks a later run. A run removes
its lock file when it ends; a run that finds the file replaced after it locked it locks again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ._errors import UserInputError


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of ``path``: ``PATH.lock`` beside it.

    >>> lock_path("labels.jsonl").name
    'labels.jsonl.lock'
    """
    path = Path(path)
    return path.with_name(path.name + ".lock")


def _holder(fd: int) -> str:
    """The pid the holder wrote in the lock file, as text ("unknown" when it has not written it yet)."""
    with contextlib.suppress(OSError):
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return text
    return "unknown"


@contextlib.contextmanager
def exclusive(path: str | os.PathLike, *, option: str = "-o") -> Iterator[Path]:
    """Hold the lock of ``path`` (see :func:`lock_path`) for the ``with`` block, or raise at once.

    Parameters
    ----------
    path : path
        The output (or cache) the run writes; its folder must exist or be creatable.
    option : str
        The option that chooses another path, named in the error.

    Raises
    ------
    UserInputError
        Another process holds the lock: "PATH is being written by another seekbench run (pid N);
        wait for it or use another OPTION".
    """
    path = Path(path)
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            os.close(fd)
            raise UserInputError(
                f"is being written by another seekbench run (pid {pid}); wait for it or use another {option}",
                file=str(path),
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:  # the holder before us may have removed the file between our open and our lock
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield lock
    finally:
        with contextlib.suppress(OSError):  # unlinked while locked: a waiting opener sees a new inode
            os.unlink(lock)
        os.close(fd)


@contextlib.contextmanager
def exclusive_all(paths: list[tuple[str | os.PathLike, str]]) -> Iterator[None]:
    """Hold the locks of several ``(path, option)`` pairs (the same path once), in the order given."""
    with contextlib.ExitStack() as stack:
        seen: set[Path] = set()
        for path, option in paths:
            key = Path(os.path.abspath(path))
            if key not in seen:
                seen.add(key)
                stack.enter_context(exclusive(path, option=option))
        yield
