"""Format registry and auto-detection."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from types import ModuleType

from ..._errors import UserInputError
from .._io import parse_json_line

#: format name -> private module implementing it. Order is the detection order.
#: Each module defines FORMAT, ``sniff(path, head, first) -> bool`` and
#: ``iter_records(path, **options) -> Iterator[ImportedRecord]``.
FORMATS: dict[str, str] = {
    "canonical": "._canonical",
    "seekbench": "._seekbench",
    "openai_chat": "._openai_chat",
    "atif": "._atif",
    "inspect": "._inspect",
    "otel": "._otel",
    "search_r1": "._search_r1",
    "parquet": "._parquet",
}


_LINE_END = re.compile(r"\r\n|\r|\n")


def importer_for(name: str) -> ModuleType:
    """The importer module for a format name; a user error for an unknown name."""
    if name not in FORMATS:
        raise UserInputError(f"unknown format {name!r}; choose one of: {', '.join(FORMATS)}")
    return importlib.import_module(FORMATS[name], package=__package__)


def available_formats() -> list[str]:
    out = []
    for name, mod in FORMATS.items():
        try:
            importlib.import_module(mod, package=__package__)
        except ModuleNotFoundError:
            continue
        out.append(name)
    return out


def detect_format(path: str | os.PathLike) -> str:
    """Guess the format of ``path`` from its first non-blank line (and first 64 KiB)."""
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
    first: object = None
    # Lines end at \n, \r\n or \r, never at U+2028 and the like (which may sit inside JSON strings).
    first_line = next((ln for ln in _LINE_END.split(head) if ln.strip()), "")
    try:
        first = parse_json_line(first_line, file=str(path), line=1, text_only=False)
    except UserInputError:
        first = None
    if first is None and head.lstrip()[:1] in "[{":
        try:  # a whole-file JSON document (ATIF, OpenAI message lists)
            first = parse_json_line(path.read_text(encoding="utf-8-sig"), file=str(path), line=1)
        except (UserInputError, UnicodeDecodeError):
            first = None
    for name in available_formats():
        if importer_for(name).sniff(str(path), head, first):
            return name
    raise UserInputError(
        f"cannot tell the trace format; pass --format with one of: {', '.join(available_formats())}",
        file=str(path), line=1)
