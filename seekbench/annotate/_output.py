"""The output annotation set, written as traces complete and safe against a crash at any moment.

Each finished trace is appended as one block of records (one ``write``, then
``flush`` and ``fsync``); every record carries ``provenance.trace_records``,
the size of its block. On resume the file is checked: a partial trailing
line (a crash mid-write) is cut off, and so is a trailing block with fewer
records than it announces. Traces with a complete block are done, except
those whose block records a failed request or one never sent (the run was
stopped by an unreachable endpoint or the budget): nothing was paid for
them, so they are tried again (their paid completions come from the cache).
A label left unscored for good (an answer still invalid after the repairs,
an explicit null, a prompt too long for the judge) counts as done: asking
again would give the same answer. At the end of a run the file is rewritten atomically in
input order, keeping the last block of each trace.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

from .._errors import OutputWriteError, SeekbenchWarning, UserInputError
from .._io import atomic_writer, dumps
from .._write_errors import append_whole
from ._job import RETRIED
from ._summary import AnnotateSummary


def _blocks(records: list[tuple[int, dict]]) -> list[tuple[int, list[dict]]]:
    """Split ``(byte_offset, record)`` pairs into runs of the same trace id: ``(start_offset, records)``."""
    out: list[tuple[int, list[dict]]] = []
    for offset, rec in records:
        if out and out[-1][1][0]["trace_id"] == rec["trace_id"] and len(out[-1][1]) < _announced(out[-1][1][0]):
            out[-1][1].append(rec)
        else:
            out.append((offset, [rec]))
    return out


#: What a failed append leaves (see :func:`seekbench._write_errors.append_whole`).
_KEPT = "the labels of the traces finished before are kept, and a re-run resumes from them"


def _os_error(e: OSError) -> str:
    return f"{e.strerror or e}: {e.filename}" if e.filename else str(e.strerror or e)


def _announced(rec: dict) -> int:
    n = (rec.get("provenance") or {}).get("trace_records")
    return n if isinstance(n, int) and n > 0 else 1


class AnnotationOutput:
    """The output file of an annotation run (JSONL annotation set).

    Parameters
    ----------
    path : path
    rater : str
        The rater every record must carry; a file holding another rater's
        labels is refused rather than mixed.
    """

    def __init__(self, path: str | os.PathLike, *, rater: str) -> None:
        self.path = Path(path)
        self.rater = rater
        self._fd: int | None = None
        #: An append failed for want of room: the file holds the whole blocks before it, not reordered.
        self.write_failed = False

    def recover(self) -> dict[str, str]:
        """Repair the tail after a crash and return ``trace_id -> "done" | "retry"`` for the traces present."""
        if not self.path.exists():
            return {}
        if self.path.is_dir():
            raise UserInputError("the output path is a directory; give a file path", file=str(self.path))
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        records: list[tuple[int, dict]] = []
        pos = 0
        for lineno, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
            offset, pos = pos, pos + len(raw) + 1
            if not raw.strip():
                continue
            rec = self._check(raw, lineno)
            records.append((offset, rec))
        blocks = _blocks(records)
        if blocks and len(blocks[-1][1]) < _announced(blocks[-1][1][0]):
            end = blocks[-1][0]
            blocks.pop()
        if end < len(data):
            torn = data.rfind(b"\n") + 1 < len(data)
            what = "its last line was cut off mid-record" if torn else "its last trace's records were incomplete"
            warnings.warn(
                f"{self.path}: {what} (a run stopped while writing it: a full disk, a kill); removed, and that "
                "trace is labeled again",
                SeekbenchWarning,
                stacklevel=2,
            )
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())
        state: dict[str, str] = {}
        for _, block in blocks:
            if len(block) < _announced(block[0]):
                state.setdefault(block[0]["trace_id"], "retry")
                continue
            failed = any(str(r.get("unscored_reason") or "").startswith(RETRIED) for r in block)
            state[block[0]["trace_id"]] = "retry" if failed else "done"
        return state

    def _check(self, raw: bytes, lineno: int) -> dict:
        file = str(self.path)
        try:
            rec = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise UserInputError(
                f"the existing output is not JSONL ({e}); it is not an annotation set this "
                "command wrote: choose another -o",
                file=file,
                line=lineno,
            ) from e
        if not isinstance(rec, dict) or "trace_id" not in rec or "rater" not in rec:
            raise UserInputError(
                "the existing output is not an annotation set; choose another -o", file=file, line=lineno
            )
        if rec["rater"] != self.rater:
            raise UserInputError(
                f"the existing output holds labels of rater {rec['rater']!r}, not "
                f"{self.rater!r}; choose another -o (or --rater)",
                file=file,
                line=lineno,
            )
        return rec

    def append(self, records: list[dict]) -> None:
        """Append one trace's block durably (single write, flush, fsync)."""
        if not records:
            return
        if self._fd is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as e:  # a parent that is a file, no permission
                raise UserInputError(
                    f"cannot write the output ({_os_error(e)}); choose another -o", file=str(self.path)
                ) from e
        data = "".join(dumps(r) + "\n" for r in records).encode("utf-8")
        try:
            append_whole(self._fd, data, path=self.path, kept=_KEPT)
        except OutputWriteError:
            self.write_failed = True
            raise

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def finalize(self, order: Iterable[str]) -> int:
        """Rewrite the file atomically in ``order`` (then any other traces), last block per trace wins.

        Returns the number of records written.
        """
        self.close()
        if not self.path.exists() or self.write_failed:  # no room to rewrite it; as appended, it is valid
            return 0
        records = [(0, json.loads(line)) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]
        last: dict[str, list[dict]] = {}
        for _, block in _blocks(records):
            if len(block) == _announced(block[0]):
                last[block[0]["trace_id"]] = block
        ordered = [t for t in order if t in last]
        ordered += [t for t in last if t not in set(ordered)]
        n = 0
        try:
            with atomic_writer(self.path) as fh:
                for tid in ordered:
                    for rec in last[tid]:
                        fh.write(dumps(rec) + "\n")
                        n += 1
        except OutputWriteError as e:  # no room for the ordered copy: the appended file stays, valid
            kept = e.message.replace("the earlier file is kept", _KEPT)
            raise OutputWriteError(kept, file=e.file, resumable=True) from e
        return n


def start_run(
    output: str | os.PathLike, traces: list[dict], *, rater: str, judge: str, mode: str, budget_usd: float | None = None
) -> tuple[AnnotationOutput, list[dict], AnnotateSummary]:
    """Open the output (repairing a crashed tail), the traces still to do, and the run's summary."""
    out = AnnotationOutput(output, rater=rater)
    state = out.recover()
    todo = [t for t in traces if state.get(str(t["trace_id"])) != "done"]
    summary = AnnotateSummary(
        judge=judge,
        output=str(output),
        mode=mode,
        n_traces=len(traces),
        already_done=len(traces) - len(todo),
        budget_usd=budget_usd,
    )
    return out, todo, summary
