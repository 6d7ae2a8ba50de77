"""The small SQLite stores seekbench keeps in the user's cache directory (judge completions, embeddings).

One way to place them (``$VARIABLE``, else ``$XDG_CACHE_HOME/seekbench/NAME``,
``~/.cache`` by default) and one way to open them: WAL journal, the schema
created if absent, a connection any one thread at a time may use, and a user
error naming the file and the option to change when it cannot be opened.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Self

from .._errors import OutputWriteError, UserInputError

#: SQLite's primary result codes for a write with no room: SQLITE_IOERR (a write refused by the system,
#: ``ulimit -f`` among them: SQLITE_IOERR_WRITE) and SQLITE_FULL (the disk or quota is full).
_NO_ROOM = (10, 13)


def user_cache_path(env: str, filename: str) -> Path:
    """``$env`` if set, else ``$XDG_CACHE_HOME/seekbench/filename`` (``~/.cache`` when unset).

    >>> user_cache_path("SEEKBENCH_DOCTEST_UNSET", "x.sqlite").name
    'x.sqlite'
    """
    if os.environ.get(env):
        return Path(os.environ[env])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "seekbench" / filename


def open_store(path: Path, schema: str, *, what: str, option: str, durable: bool = False) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) the SQLite file ``path`` with ``schema``.

    Parameters
    ----------
    what : str
        The store's name in messages ("the judge cache").
    option : str
        The command-line option that chooses another file (``--cache``).
    durable : bool
        ``synchronous=FULL``: each commit is on disk before it returns (paid completions).

    Raises
    ------
    UserInputError
        The path is a folder, its parent cannot be made, or the file is not a database.
    """
    if path.is_dir():
        raise UserInputError(f"the {what} path is a directory; give a file path", file=str(path))
    db: sqlite3.Connection | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        if durable:
            db.execute("PRAGMA synchronous=FULL")
        # One transaction: a process killed while creating the tables leaves all of them or none.
        db.executescript(f"BEGIN;\n{schema}\nCOMMIT;")
    except (sqlite3.DatabaseError, OSError) as e:
        if db is not None:
            db.close()  # rolls back a half-made schema and frees the file's lock
        if isinstance(e, sqlite3.DatabaseError):
            raise UserInputError(
                f"cannot open {what}: {e}; pass another {option} or delete the file", file=str(path)
            ) from e
        # a parent that is a file, no permission, a full disk
        raise UserInputError(
            f"cannot create {what} ({e.strerror or e}: {e.filename}); pass another {option}", file=str(path)
        ) from e
    return db


class SQLiteStore:
    """A store in one SQLite file, opened by :func:`open_store`; closed by :meth:`close` or a ``with`` block.

    The connection may be used from any one thread at a time; ``_lock`` serialises the
    subclass's statements when several threads share it.

    Parameters
    ----------
    path : Path
    schema : str
        The ``CREATE ... IF NOT EXISTS`` statements.
    what, option : str
        How messages name the store and the option that chooses another file.
    durable : bool
        Each commit on disk before it returns (see :func:`open_store`).
    """

    def __init__(self, path: Path, schema: str, *, what: str, option: str, durable: bool = False) -> None:
        import threading

        self.path = path
        self._lock = threading.RLock()
        self._db = open_store(path, schema, what=what, option=option, durable=durable)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _writing(self, kept: str) -> Iterator[None]:
        """Statements that write: a commit that finds no room (a full disk, ``ulimit -f``) is rolled back
        by SQLite and becomes :class:`~seekbench._errors.OutputWriteError` (``resumable``: what was
        committed before is whole)."""
        try:
            yield
        except sqlite3.OperationalError as e:
            if getattr(e, "sqlite_errorcode", 0) & 0xFF not in _NO_ROOM:
                raise
            raise OutputWriteError(
                f"cannot write: {e} (a full disk or a file size limit); {kept}; free space (or raise the "
                f"limit) and run the command again",
                file=str(self.path),
                resumable=True,
            ) from e

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
