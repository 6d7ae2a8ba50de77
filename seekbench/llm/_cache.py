"""The judge cache: every paid completion, kept in SQLite (stdlib ``sqlite3``, WAL journal).

The key is :func:`~seekbench.llm.cache_key`: the SHA-256 of the
model, the prompt version and hash, and the request body (rendered messages
and decoding parameters), and nothing else (not retries, timeouts or
concurrency). A row keeps the raw completion as returned, the parsed labels,
the usage, the cost and the latency. A completion is written (and committed,
``synchronous=FULL``) as soon as it arrives, before anything else is done with
it, so a crash loses nothing that was paid for.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ._sqlite import SQLiteStore, user_cache_path

CACHE_ENV = "SEEKBENCH_CACHE"
#: What a cache write that finds no room leaves (the failed commit is rolled back).
_KEPT = "the completions paid before are kept, and a re-run pays for none of them again"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    trace_id TEXT,
    created TEXT NOT NULL,
    via_batch INTEGER NOT NULL DEFAULT 0,
    raw TEXT NOT NULL,
    content TEXT,
    finish_reason TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    latency_s REAL,
    valid INTEGER,
    labels TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS completions_trace ON completions (judge, trace_id);
CREATE TABLE IF NOT EXISTS endpoint_formats (
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    accepted INTEGER NOT NULL,
    reason TEXT,
    time TEXT NOT NULL,
    PRIMARY KEY (endpoint, model, mode)
);
"""


def default_cache_path() -> Path:
    """``$SEEKBENCH_CACHE``, else ``$XDG_CACHE_HOME/seekbench/judge_cache.sqlite`` (``~/.cache`` by default)."""
    return user_cache_path(CACHE_ENV, "judge_cache.sqlite")


@dataclass(frozen=True)
class CachedCompletion:
    """One cached completion (see the module docstring for the columns)."""

    key: str
    judge: str
    model: str
    prompt_version: str
    trace_id: str | None
    created: str
    via_batch: bool
    raw: str
    content: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float | None
    valid: bool | None = None
    labels: str | None = None
    error: str | None = None


class JudgeCache(SQLiteStore):
    """A SQLite judge cache at ``path`` (created on first use).

    Parameters
    ----------
    path : path, optional
        Default :func:`default_cache_path`.

    Examples
    --------
    The connection may be used from one thread at a time, any thread (the
    annotator writes from a single I/O thread so fsyncs do not stall its event loop).

    >>> with JudgeCache("/tmp/doctest-cache.sqlite") as cache:  # doctest: +SKIP
    ...     cache.stats()["entries"]
    0
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        where = Path(path) if path is not None else default_cache_path()
        super().__init__(where, _SCHEMA, what="the judge cache", option="--cache", durable=True)

    def get(self, key: str) -> CachedCompletion | None:
        """The completion stored under ``key``, or None."""
        with self._lock:
            cur = self._db.execute("SELECT * FROM completions WHERE key = ?", (key,))
            row = cur.fetchone()
            names = [d[0] for d in cur.description]
        if row is None:
            return None
        rec = dict(zip(names, row, strict=True))  # one name per column
        rec["via_batch"] = bool(rec["via_batch"])
        rec["valid"] = None if rec["valid"] is None else bool(rec["valid"])
        return CachedCompletion(**rec)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone() is not None

    def put(self, entry: CachedCompletion) -> None:
        """Store a completion (committed at once); an existing row with the same key is kept."""
        cols = list(CachedCompletion.__dataclass_fields__)
        values = [getattr(entry, c) for c in cols]
        with self._lock, self._writing(_KEPT):
            self._db.execute(
                f"INSERT OR IGNORE INTO completions ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", values
            )

    def set_parsed(self, key: str, *, valid: bool, labels: dict | None, error: str | None) -> None:
        """Record the outcome of checking a cached completion (labels as ``{"step:field": value}``)."""
        text = None if labels is None else json.dumps(labels, sort_keys=True, ensure_ascii=False)
        # Derived data (recomputed from the raw completion on any replay): committed without an fsync.
        # In WAL mode such a commit still survives the process being killed; only power loss may drop it.
        with self._lock, self._writing(_KEPT):
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                self._db.execute(
                    "UPDATE completions SET valid = ?, labels = ?, error = ? WHERE key = ?",
                    (int(valid), text, error, key),
                )
            finally:
                self._db.execute("PRAGMA synchronous=FULL")

    def format_verdicts(self, endpoint: str, model: str) -> dict[str, tuple[bool, str | None]]:
        """What ``endpoint`` answered to each ``response_format`` mode for ``model``: ``mode -> (accepted, why)``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT mode, accepted, reason FROM endpoint_formats WHERE endpoint = ? AND model = ?",
                (endpoint, model),
            ).fetchall()
        return {mode: (bool(ok), why) for mode, ok, why in rows}

    def record_format(self, endpoint: str, model: str, mode: str, *, accepted: bool, reason: str | None) -> None:
        """Remember whether ``endpoint`` accepts ``response_format`` ``mode`` for ``model`` (the last word wins)."""
        from ._completion import utc_now

        with self._lock, self._writing(_KEPT):
            self._db.execute(
                "INSERT OR REPLACE INTO endpoint_formats (endpoint, model, mode, accepted, reason, time) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (endpoint, model, mode, int(accepted), reason, utc_now()),
            )

    def stats(self) -> dict:
        """Entries, tokens and cost in total and per judge, and the file size in bytes."""
        with self._lock:
            return self._stats()

    def _stats(self) -> dict:
        total = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COALESCE(SUM(cost_usd), 0), COALESCE(SUM(valid = 0), 0) FROM completions"
        ).fetchone()
        per = self._db.execute(
            "SELECT judge, model, prompt_version, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), "
            "SUM(cost_usd), COUNT(DISTINCT trace_id) FROM completions GROUP BY judge, model, prompt_version "
            "ORDER BY judge"
        ).fetchall()
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return {
            "path": str(self.path),
            "bytes": size,
            "entries": total[0],
            "prompt_tokens": total[1],
            "completion_tokens": total[2],
            "cost_usd": total[3],
            "rejected_answers": total[4],
            "judges": [
                {
                    "judge": r[0],
                    "model": r[1],
                    "prompt_version": r[2],
                    "entries": r[3],
                    "prompt_tokens": r[4],
                    "completion_tokens": r[5],
                    "cost_usd": r[6],
                    "traces": r[7],
                }
                for r in per
            ],
        }

    def clear(self, *, judge: str | None = None) -> int:
        """Delete every entry (or one judge's); return how many were deleted."""
        with self._lock, self._writing("the entries not yet deleted are kept"):
            return self._clear(judge)

    def _clear(self, judge: str | None) -> int:
        if judge is None:
            n = self._db.execute("DELETE FROM completions").rowcount
        else:
            n = self._db.execute("DELETE FROM completions WHERE judge = ?", (judge,)).rowcount
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._db.execute("VACUUM")
        return n
