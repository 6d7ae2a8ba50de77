"""The on-disk embedding cache: one SQLite file, rows keyed by (model key, SHA-256 of the text).

Vectors are stored as float32 bytes. Each batch of new vectors is written
in one transaction, so a crash leaves either the whole batch or none of it
(SQLite's atomic commit; WAL journal). Nothing else is stored (no text).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..llm import SQLiteStore, user_cache_path

EMBED_CACHE_ENV = "SEEKBENCH_EMBED_CACHE"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
);
"""


def default_embed_cache_path() -> Path:
    """``$SEEKBENCH_EMBED_CACHE``, else ``$XDG_CACHE_HOME/seekbench/embeddings.sqlite`` (``~/.cache`` by default)."""
    return user_cache_path(EMBED_CACHE_ENV, "embeddings.sqlite")


def text_sha256(text: str) -> str:
    """SHA-256 of the UTF-8 text (the cache key's text part)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache(SQLiteStore):
    """Embeddings on disk, keyed by model key and text hash.

    Parameters
    ----------
    path : path, optional
        Default :func:`default_embed_cache_path`.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> c = EmbeddingCache(os.path.join(tempfile.mkdtemp(), "e.sqlite"))
    >>> c.put_many("m", ["a"], np.array([[1.0, 0.0]]))
    >>> c.get_many("m", ["a", "b"])["a"].tolist()
    [1.0, 0.0]
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        where = Path(path) if path is not None else default_embed_cache_path()
        super().__init__(where, _SCHEMA, what="the embedding cache", option="--embed-cache")

    def get_many(self, model: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors of ``texts`` under ``model`` (texts not cached are absent from the result)."""
        by_sha: dict[str, list[str]] = {}
        for t in texts:
            by_sha.setdefault(text_sha256(t), []).append(t)
        out: dict[str, np.ndarray] = {}
        shas = list(by_sha)
        for i in range(0, len(shas), 500):
            chunk = shas[i : i + 500]
            rows = self._db.execute(
                f"SELECT text_sha256, dim, vector FROM embeddings WHERE model = ? AND text_sha256 IN "
                f"({','.join('?' * len(chunk))})",
                [model, *chunk],
            ).fetchall()
            for sha, dim, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.size == dim:
                    for t in by_sha[sha]:
                        out[t] = vec
        return out

    def put_many(self, model: str, texts: Iterable[str], vectors: np.ndarray) -> None:
        """Store vectors (rows of ``vectors``, in the order of ``texts``) in one transaction."""
        rows = [
            (model, text_sha256(t), int(v.size), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, np.asarray(vectors), strict=True)
        ]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def count(self, model: str | None = None) -> int:
        """How many vectors are stored (for one model key, or in total)."""
        if model is None:
            return self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0]
