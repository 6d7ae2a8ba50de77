"""JSON input read as documents: JSONL lines, or one whole-file JSON document (a record or an array).

Shared by the JSON importers: a list (a JSONL line, or the whole file) is split into its items,
each with its own line and a ``$[i]`` path prefix, unless the importer says it is one record.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from ..._errors import UserInputError
from ..._io import NonFiniteNumber, iter_jsonl, loads, nonfinite_error, read_text
from ..._limits import DEFAULT_LIMITS, InputLimitError, ReadLimits
from ._base import ImportedRecord


def import_documents(
    path: str | os.PathLike,
    single: Callable[[list], bool],
    convert: Callable[..., dict[str, Any] | ImportedRecord],
    *,
    limits: ReadLimits | None = None,
    **options: object,
) -> Iterator[ImportedRecord]:
    """Run ``convert(doc, file=, line=, prefix=, **options)`` (a trace or an ImportedRecord) on each
    document of :func:`iter_documents`."""
    for line, doc, prefix in iter_documents(path, single=single, limits=limits):
        try:
            if isinstance(doc, UserInputError):
                raise doc
            out = convert(doc, file=str(path), line=line, prefix=prefix, **options)
            yield out if isinstance(out, ImportedRecord) else ImportedRecord(line, trace=out)
        except UserInputError as e:
            yield ImportedRecord(line, error=e)


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def iter_documents(
    path: str | os.PathLike, *, single: Callable[[list], bool], limits: ReadLimits | None = None
) -> Iterator[tuple[int | None, object, str]]:
    """Yield ``(line, document_or_error, json_path_prefix)`` from JSONL or one whole-file JSON document.

    A list (a JSONL line, or the whole file) is split into its items, with prefix
    ``$[i]`` and each item's own line, unless ``single(list)`` says it is one record.
    A file whose first line is not JSON but which parses as a whole is one document. A line, or a
    whole-file document, longer than ``limits.record_bytes`` raises the limit's error.
    """
    max_bytes = (limits or DEFAULT_LIMITS).record_bytes
    lines = iter_jsonl(path, max_bytes=max_bytes)
    head = next(lines, None)
    if head is None:
        return
    whole = _whole_document(path, max_bytes) if isinstance(head[1], UserInputError) else None
    if whole is not None:
        text, value = whole
        if isinstance(value, UserInputError):
            yield value.line, value, "$"
            return
        start = len(text) - len(text.lstrip())
        base = text.count("\n", 0, start) + 1
        if isinstance(value, list) and not single(value):
            for i, (item, at) in enumerate(zip(value, _item_lines(text, start, len(value)), strict=True)):
                yield base + at, item, f"$[{i}]"
        else:
            yield base, value, "$"
        return
    for line, obj in itertools.chain([head], lines):
        if isinstance(obj, list) and not single(obj):
            for i, item in enumerate(obj):
                yield line, item, f"$[{i}]"
        else:
            yield line, obj, "$"


def _whole_document(path: str | os.PathLike, max_bytes: int) -> tuple[str, object] | None:
    """``(text, value)`` when the file is one JSON document, ``(text, error)`` when it is a broken
    pretty-printed one (first line ``[`` or ``{``), None when it should be read line by line."""
    try:
        text = read_text(path, max_bytes=max_bytes)
    except InputLimitError:
        raise
    except UserInputError:
        return None
    stripped = text.lstrip()
    if stripped[:1] not in ("[", "{"):
        return None
    try:
        return text, loads(text)
    except NonFiniteNumber as e:
        return text, nonfinite_error(e, text, file=str(path), line=None)
    except (ValueError, RecursionError) as e:
        if stripped.split("\n", 1)[0].strip() not in ("[", "{"):
            return None
        if isinstance(e, RecursionError):
            msg, line = "malformed JSON: nested too deeply to read (more than ~1000 levels)", 1
        elif isinstance(e, json.JSONDecodeError):
            msg, line = f"malformed JSON (line {e.lineno}, column {e.colno}): {e.msg}", e.lineno
        else:
            msg, line = f"malformed JSON: {e}", 1
        return text, UserInputError(msg, file=str(path), line=line)


def _item_lines(text: str, start: int, n: int) -> list[int]:
    """Line offsets (from the document's first line) of the n items of a valid top-level JSON array."""
    decoder = json.JSONDecoder()
    pos, out, lines, counted = start + 1, [], 0, start
    for _ in range(n):
        while text[pos] in " \t\r\n,":
            pos += 1
        lines += text.count("\n", counted, pos)  # counted on from the previous item: linear in the text
        counted = pos
        out.append(lines)
        _, pos = decoder.raw_decode(text, pos)
    return out
