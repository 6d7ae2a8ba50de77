"""Format registry and auto-detection."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from types import ModuleType

from ..._errors import UserInputError
from ..._io import bounded_lines, parse_json_line, read_text
from ..._limits import DEFAULT_LIMITS, InputLimitError, ReadLimits

#: format name -> private module implementing it. Order is the detection order.
#: Each module defines FORMAT, ``sniff(path, head, first) -> bool`` and
#: ``iter_records(path, **options) -> Iterator[ImportedRecord]``.
FORMATS: dict[str, str] = {
    "canonical": "._canonical",
    "seekbench": "._seekbench",
    "langfuse": "._langfuse",
    "langsmith": "._langsmith",
    "swe_agent": "._swe_traj",
    "mini_swe_agent": "._mini_swe",
    "tau2": "._tau2",
    "smolagents": "._smolagents",
    "openai_chat": "._openai_chat",
    "atif": "._atif",
    "inspect": "._inspect",
    "otel": "._otel",
    "search_r1": "._search_r1",
    "parquet": "._parquet",
}


#: Importers never detected, chosen by an option: ``mapped`` reads records as a ``--map`` file says.
OPTION_FORMATS: dict[str, str] = {"mapped": "._mapped"}

_LINE_END = re.compile(r"\r\n|\r|\n")


def importer_for(name: str) -> ModuleType:
    """The importer module for a format name; a user error for an unknown name."""
    if name in OPTION_FORMATS:
        return importlib.import_module(OPTION_FORMATS[name], package=__package__)
    if name not in FORMATS:
        raise UserInputError(f"unknown format {name!r}; choose one of: {', '.join(FORMATS)}")
    return importlib.import_module(FORMATS[name], package=__package__)


def format_of(path: str | os.PathLike, format: str | None, *, skip_invalid: bool, options: dict) -> str:
    """The importer for ``path``: ``mapped`` with a mapping file (``mapping``), else ``format``, else detected."""
    if options.get("mapping") is not None:
        if format not in (None, "mapped"):
            raise UserInputError(
                f"--map and --format {format} together: a mapping file says how to read the records itself; "
                "drop --format"
            )
        return "mapped"
    return format or detect_format(path, skip_invalid=skip_invalid, limits=options.get("limits"))


def available_formats() -> list[str]:
    out = []
    for name, mod in FORMATS.items():
        try:
            importlib.import_module(mod, package=__package__)
        except ModuleNotFoundError:
            continue
        out.append(name)
    return out


def detect_format(path: str | os.PathLike, *, skip_invalid: bool = False, limits: ReadLimits | None = None) -> str:
    """Guess the format of ``path`` from its first record, read whole up to ``limits.record_bytes``.

    The first record is the first non-blank line when it is JSON, else the whole file when that
    is one JSON document (ATIF, message lists, arrays of records); text files are told apart by
    their first 64 KiB. With ``skip_invalid`` a first line that is not JSON is passed over and the
    first line that is decides, so one bad line does not lose the valid records after it.
    """
    path = Path(path)
    if not path.exists():
        raise UserInputError("file not found", file=str(path))
    if path.is_dir():
        raise UserInputError("is a directory, expected a file", file=str(path))
    with open(path, "rb") as fh:
        raw = fh.read(1 << 16)
    if raw.startswith(b"PAR1"):  # Parquet magic bytes: binary, never read as text
        return "otel" if importer_for("otel").sniff(str(path), "PAR1", None) else "parquet"  # span tables
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    head = raw.decode("utf-8", errors="replace")
    if not head.strip():
        raise UserInputError("file is empty; expected traces (one JSON object per line)", file=str(path))
    first, line = _first_record(
        path, head, skip_invalid=skip_invalid, max_bytes=(limits or DEFAULT_LIMITS).record_bytes
    )
    for name, mod in FORMATS.items():  # imported in turn: most files are told by the first ones
        try:
            importer = importlib.import_module(mod, package=__package__)
        except ModuleNotFoundError:  # as available_formats: an importer whose dependency is missing
            continue
        if importer.sniff(str(path), head, first):
            return name
    raise UserInputError(
        f"cannot tell the trace format; pass --format with one of: {', '.join(available_formats())}",
        file=str(path),
        line=line,
    )


def _first_record(path: Path, head: str, *, skip_invalid: bool, max_bytes: int) -> tuple[object, int]:
    """``(value, line)`` of the first record: a JSON line, the whole-file document, or None for text."""
    if head.lstrip()[:1] not in ("[", "{"):
        return None, 1
    lines = _json_lines(path, max_bytes)
    line, first = next(lines, (1, None))
    if first is not None:
        return first, line
    try:  # a whole-file JSON document (ATIF, OpenAI message lists, arrays of records)
        text = read_text(path, max_bytes=max_bytes)
    except InputLimitError:
        raise
    except UserInputError:
        text = None
    try:
        if text is not None:
            return parse_json_line(text, file=str(path), line=1), 1
    except UserInputError:
        pass
    if skip_invalid:  # the first line that is JSON decides; bad lines before it are skipped later
        return next(((v, n) for n, v in lines if v is not None), (None, line))
    return None, line


def _json_lines(path: Path, max_bytes: int):
    """``(line, value or None)`` for each non-blank line, each read whole (a 10 MB record is one line)
    up to ``max_bytes`` (past it, the limit's error)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(bounded_lines(fh, max_bytes, file=str(path)), start=1):
            text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
            # Lines end at \n, \r\n or \r, never at U+2028 and the like (which may sit inside JSON strings).
            for part in _LINE_END.split(text):
                if part.strip():
                    try:
                        yield lineno, parse_json_line(part, file=str(path), line=lineno, text_only=False)
                    except UserInputError:
                        yield lineno, None
