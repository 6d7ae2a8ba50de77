"""Reading JSONL line by line with positions, and writing files atomically."""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO

from ._errors import UserInputError
from ._fast_json import SLOW, fast_loads
from ._limits import DEFAULT_LIMITS, RECORD_BYTES, limit_error
from ._write_errors import is_write_error, write_error


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


class NonFiniteNumber(ValueError):
    """A JSON number too large for a 64-bit float (``1e999``): Python reads it as infinity."""

    def __init__(self, literal: str) -> None:
        self.literal = literal
        super().__init__(f"the number {literal[:40]} is too large for a 64-bit float")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise NonFiniteNumber(literal)
    return value


#: One decoder for every line (``json.loads`` with options builds a new one per call). NaN and
#: Infinity are refused (not JSON), and so are numbers that overflow to infinity (``1e999``): valid
#: JSON, but no trace can hold them (Parquet and JSON output cannot write them back).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def loads(text: str | bytes) -> object:
    """``json.loads`` for input: NaN, Infinity and numbers that overflow a float raise ValueError
    (:class:`NonFiniteNumber` for the last; :func:`nonfinite_path` finds where it is)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return _DECODER.decode(text)


class _Overflow:
    __slots__ = ()


_OVERFLOW = _Overflow()


def nonfinite_path(text: str, prefix: str = "$") -> str:
    """The JSON path of the first number in ``text`` that overflows a float (``$.steps[2].score``),
    or ``prefix`` when there is none; ``text`` is otherwise valid JSON."""

    def mark(literal: str) -> object:
        value = float(literal)
        return _OVERFLOW if math.isinf(value) else value

    def find(value: object, at: str) -> str | None:
        if value is _OVERFLOW:
            return at
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for k, v in items:
            found = find(v, f"{at}[{k}]" if isinstance(k, int) else f"{at}.{k}")
            if found is not None:
                return found
        return None

    try:
        return find(json.loads(text, parse_float=mark), prefix) or prefix
    except (ValueError, RecursionError):
        return prefix


def nonfinite_error(e: NonFiniteNumber, text: str, *, file: str, line: int | None, prefix: str = "$") -> UserInputError:
    """The user error for a number that overflows a float, at its JSON path (and its trace id when the
    record names one)."""
    try:
        top = json.loads(text, parse_float=lambda s: 0.0)
    except (ValueError, RecursionError):
        top = None
    tid = top.get("trace_id") if isinstance(top, dict) and prefix == "$" else None
    return UserInputError(
        f"{e}: seekbench cannot hold it (no infinite numbers in traces); write a finite number; {_ADVICE}",
        file=file,
        line=line,
        trace_id=tid if isinstance(tid, str) else None,
        path=nonfinite_path(text, prefix),
    )


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ADVICE = "fix or remove this line, or pass --skip-invalid"
#: Said of a zip archive (an Inspect AI ``.eval`` log, most likely) read as text.
ZIP_NOT_TEXT = "is a zip archive, not a text file (an Inspect AI .eval log?); import it with --format inspect"


def _has_lone_surrogate(value: object) -> bool:
    """True when a string in ``value`` (keys included) holds an unpaired UTF-16 surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def parse_json_line(text: str, *, file: str, line: int, text_only: bool = True) -> object:
    """Parse one JSON line; NaN and Infinity are refused (they are not JSON), and so are strings
    holding an unpaired surrogate escape (they are not text: no UTF-8 file can hold them) and numbers
    that overflow a float (``1e999``, at their JSON path) unless ``text_only=False`` (format detection
    only looks at the shape)."""
    try:
        if text.startswith("\ufeff"):  # what json.loads says about a str starting with a BOM
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except NonFiniteNumber as e:
        if not text_only:  # the shape is all detection needs; the importer refuses the number
            return json.loads(text, parse_float=lambda _: 0.0)
        raise nonfinite_error(e, text, file=file, line=line) from e
    except RecursionError as e:
        raise UserInputError(
            f"malformed JSON: nested too deeply to read (more than ~1000 levels); {_ADVICE}", file=file, line=line
        ) from e
    except (json.JSONDecodeError, ValueError) as e:
        msg = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
        col = f" (column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        raise UserInputError(f"malformed JSON{col}: {msg}; {_ADVICE}", file=file, line=line) from e
    if text_only and "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None and _has_lone_surrogate(value):
        raise UserInputError(
            "malformed JSON: a string holds an unpaired surrogate escape (\\ud800-\\udfff), "
            f"which is not text; {_ADVICE}",
            file=file,
            line=line,
        )
    return value


def iter_jsonl(
    path: str | os.PathLike, *, max_bytes: int = RECORD_BYTES
) -> Iterator[tuple[int, object | UserInputError]]:
    """Yield ``(line_number, parsed_object_or_error)`` for each non-blank line, streaming.

    A bad line yields a :class:`UserInputError` instead of stopping the stream,
    so callers decide whether one bad record ends the run. A line longer than ``max_bytes``
    (``/dev/zero``, a file with no newline) raises the limit's error: nothing after it can be read.
    """
    path = Path(path)
    name = str(path)
    if not path.exists():
        raise UserInputError("file not found", file=name)
    if path.is_dir():
        raise UserInputError("is a directory, expected a file", file=name)
    # A 1 MiB buffer: with the default 8 KiB one, a trace line (7 KiB on average in the 1x corpora)
    # mostly takes a read of its own and a join of two pieces; this way reading the lines costs a third
    # (0.05 against 0.15 CPU s for the 1x release corpus).
    with open(path, "rb", buffering=1 << 20) as fh:
        for lineno, raw in enumerate(bounded_lines(fh, max_bytes, file=name), start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if lineno == 1 and raw.startswith(b"PK\x03\x04"):
                yield lineno, UserInputError(ZIP_NOT_TEXT, file=name)
                return
            value = fast_loads(raw)
            if value is SLOW:
                value = parse_jsonl_bytes(raw, file=name, line=lineno)
            if value is not BLANK:
                yield lineno, value


def bounded_lines(fh: IO[bytes], max_bytes: int, *, file: str) -> Iterator[bytes]:
    """The lines of a binary file, each at most ``max_bytes`` long (newline not counted), else the
    ``record_bytes`` limit's error naming the line: never more than that held in memory."""
    lineno = 0
    while raw := fh.readline(max_bytes + 1):
        lineno += 1
        if len(raw) > max_bytes and not (len(raw) == max_bytes + 1 and raw.endswith(b"\n")):
            raise limit_error("record_bytes", replace(DEFAULT_LIMITS, record_bytes=max_bytes), file=file, line=lineno)
        yield raw


def read_bounded(fh: IO[bytes], max_bytes: int, *, file: str) -> bytes:
    """All of a binary file, or the ``record_bytes`` limit's error once it holds more than ``max_bytes``."""
    data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise limit_error("record_bytes", replace(DEFAULT_LIMITS, record_bytes=max_bytes), file=file)
    return data


#: What :func:`parse_jsonl_bytes` returns for a blank line (not a record).
BLANK = object()


def parse_jsonl_bytes(raw: bytes, *, file: str, line: int) -> object:
    """One line of a JSONL file (bytes, newline included or not) as its value, a :class:`UserInputError`
    saying why it is not one, or :data:`BLANK`. The first line's BOM and zip checks are the caller's."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return UserInputError(f"invalid UTF-8 at byte {e.start}; re-encode the file as UTF-8", file=file, line=line)
    text = text.rstrip("\r\n")
    if not text or text.isspace():
        return BLANK
    if "\x00" in text:
        return UserInputError("NUL byte in line; the file is binary or corrupt", file=file, line=line)
    try:
        return parse_json_line(text, file=file, line=line)
    except UserInputError as e:
        return e


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large batch of acyclic objects is built.

    Parsing JSON makes millions of dicts and lists; each allocation burst triggers a
    collection that walks every live container. JSON values hold no reference cycles, so
    nothing is lost by waiting; the collector's previous state is restored on exit. A speed
    trick that pays (issue 28): ``read_traces`` of the 1x canonical corpus, default install,
    5.8 -> 4.1 CPU s (30%, it keeps every trace: see ``scripts/bench/results/tricks.md``);
    where traces are dropped as they are read (``seekbench metrics``) it buys 0-5%.

    On exit, the objects made meanwhile join the oldest generation unexamined (``gc.freeze`` then
    ``gc.unfreeze``, both public): else the first allocation after ``gc.enable`` starts a young
    collection that walks every one of them, once, for nothing (they are acyclic). That walk cost
    0.23-0.27 of the 2.2-3.0 CPU s of ``read_traces`` of the 1x release corpus (issue 28,
    ``scripts/bench/release_speed.py``).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def read_text(path: str | os.PathLike, *, max_bytes: int = RECORD_BYTES) -> str:
    """Read a whole text file as UTF-8 (BOM tolerated) with user errors for the usual failures; a file
    of more than ``max_bytes`` is one (the whole file is one record: see :mod:`seekbench._limits`)."""
    path = Path(path)
    if not path.exists():
        raise UserInputError("file not found", file=str(path))
    if path.is_dir():
        raise UserInputError("is a directory, expected a file", file=str(path))
    with open(path, "rb") as fh:
        data = read_bounded(fh, max_bytes, file=str(path))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith(b"PK\x03\x04"):
        raise UserInputError(ZIP_NOT_TEXT, file=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise UserInputError(
            f"invalid UTF-8 at byte {e.start}; re-encode the file as UTF-8", file=str(path), line=line
        ) from e


def _json_default(obj: object) -> object:
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def dumps(obj: object) -> str:
    """One-line JSON with NaN written as null (never the non-standard ``NaN`` token)."""
    return json.dumps(_nan_to_none(obj), ensure_ascii=False, default=_json_default, allow_nan=False)


def _nan_to_none(obj: object) -> object:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    if hasattr(obj, "item") and not hasattr(obj, "__len__"):
        return _nan_to_none(obj.item())
    return obj


def check_output(path: str | os.PathLike, *, directory: bool = False, option: str = "-o") -> Path:
    """Refuse, as a user error, an output path seekbench could not write, before any work is done.

    The parent must be an existing, writable directory (a missing one is not guessed at); the path
    itself must be a file (or absent) for a file output, a directory (or absent) for a directory
    output. A directory whose write bits are all off counts as read-only even for root: it was
    marked so on purpose.
    """
    path = Path(path)
    want = "a directory" if directory else "a file"
    if path.is_dir() and not directory:
        raise UserInputError(f"{option} is a directory, expected a file path", file=str(path))
    if path.exists() and not path.is_dir() and directory:
        raise UserInputError(f"{option} is a file, expected a directory (a report folder)", file=str(path))
    parent = path.parent if str(path.parent) else Path(".")
    for up in (parent, *parent.parents):
        if up.exists() and not up.is_dir():
            raise UserInputError(
                f"{option}: {up} is a file, not a directory; give {want} in a directory", file=str(path)
            )
        if up.exists():
            break
    if not parent.exists():
        raise UserInputError(f"{option}: the directory {parent} does not exist; create it first", file=str(path))
    target = path if directory and path.is_dir() else parent
    if not os.access(target, os.W_OK | os.X_OK) or (target.stat().st_mode & 0o222) == 0:
        raise UserInputError(f"{option}: the directory {target} is read-only; choose another place", file=str(path))
    return path


def _umask() -> int:
    """The process umask, read without changing it where the system says it (Linux), else by setting it back."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success fsync it and rename it over ``path``.

    A crash at any point leaves either the old file or the complete new one, never a truncated one.
    A write that fails for want of room (a full disk, ``ulimit -f``) is :func:`write_error`, one line.
    The file gets the mode a plain ``open`` would give it: an existing file's mode, else
    ``0o666 & ~umask`` (the temporary file starts at 0600, which would hide a report from colleagues).
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise UserInputError(f"cannot write here: {e.strerror}", file=str(path)) from e
    try:
        try:
            perm = path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~_umask()
        except OSError:
            perm = 0o666 & ~_umask()
        os.fchmod(fd, perm)
        try:
            with os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding="utf-8", newline="\n") as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as e:  # only a write gives these: the body's reading errors pass unchanged
            if not is_write_error(e):
                raise
            kept = "the earlier file is kept" if path.exists() else "no part of it was written"
            raise write_error(e, path, kept=kept) from e
        try:
            os.replace(tmp, path)
        except OSError as e:
            raise UserInputError(f"cannot write here: {e.strerror}", file=str(path)) from e
        _fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_jsonl(path: str | os.PathLike, records: Iterable[object]) -> int:
    """Write records as JSONL atomically; return how many were written."""
    n = 0
    with atomic_writer(path) as fh:
        for rec in records:
            fh.write(dumps(rec))
            fh.write("\n")
            n += 1
    return n


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically."""
    with atomic_writer(path) as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write a binary file atomically."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)
