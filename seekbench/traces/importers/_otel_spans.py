"""Spans from OpenTelemetry files: OTLP JSON and span tables (Phoenix span exports), one flat shape.

OTLP JSON is what the OTLP file exporter and collectors write: ``{"resourceSpans": [{"resource":
{"attributes": [...]}, "scopeSpans": [{"scope": {...}, "spans": [...]}]}]}``, one such object per
line or the whole file. A span has ``traceId`` / ``spanId`` / ``parentSpanId`` (hex as the OTLP
JSON encoding says, base64 as protobuf's generic JSON mapping writes bytes, or any other
non-empty string: ids are opaque), ``name``,
``startTimeUnixNano`` (a decimal string), ``attributes`` (``[{key, value: {stringValue |
intValue | doubleValue | boolValue | arrayValue | kvlistValue | bytesValue}}]``) and ``events``.

A span table has one span per row (JSONL, or Parquet from a DataFrame): ``context.trace_id`` and
``context.span_id`` (or a nested ``context`` object), ``parent_id``, ``name``, ``start_time``,
``span_kind``, ``events`` and the attributes, either as ``attributes.<key>`` columns or one
nested ``attributes`` object (Phoenix's span JSON). Nested objects and lists of objects are
flattened to the dotted keys OpenTelemetry carries (``llm.input_messages.0.message.role``).
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..._errors import UserInputError
from ..._limits import ReadLimits, check_row_groups

_HEX = re.compile(r"^[0-9a-fA-F]+$")


def json_value(value: object) -> object:
    """A JSON-encoded attribute decoded (attributes hold only scalars, so structures travel as text).

    A string that is not a JSON array or object, or does not parse, comes back as it was.

    >>> json_value('{"k": [1, 2]}'), json_value("plain"), json_value(3)
    ({'k': [1, 2]}, 'plain', 3)
    """
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@dataclass
class Span:
    """One span, whatever file it came from. ``start`` sorts spans in time (nanoseconds, or text)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float | str
    attrs: dict
    events: list[dict] = field(default_factory=list)
    resource: dict = field(default_factory=dict)
    line: int | None = None


def is_otlp(obj: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(obj, dict) and isinstance(obj.get("resourceSpans"), list)


def is_span_row(obj: object) -> TypeGuard[dict[str, Any]]:
    """True for one row of a span table (Phoenix span JSON, or a flattened span DataFrame row)."""
    if not isinstance(obj, dict):
        return False
    ctx = obj.get("context")
    return (isinstance(ctx, dict) and "span_id" in ctx and "trace_id" in ctx) or (
        "context.span_id" in obj and "context.trace_id" in obj
    )


def span_table_columns(names: list[str]) -> bool:
    """True for the columns of a span table stored as Parquet."""
    return "context.span_id" in names and "context.trace_id" in names


def span_id(value: object, *, size: int, what: str, file: str, line: int | None) -> str:
    """A trace or span id: hex as OTLP JSON writes it (lowercased), base64 of ``size`` bytes as
    protobuf's JSON mapping writes bytes (turned into hex), any other non-empty string as it is.

    Ids are opaque strings: Phoenix span tables, collectors and hand-written exports carry ids
    such as ``span-1`` or UUIDs, and only equality matters (a parent id names its parent). Hex and
    base64 are normalised so the two encodings of one file agree; nothing else is changed.

    >>> [span_id(v, size=8, what="spanId", file="f", line=1) for v in ("AAAAAAAAAAE=", "tool-7")]
    ['0000000000000001', 'tool-7']
    """
    if isinstance(value, str) and len(value) == 2 * size and _HEX.match(value):
        return value.lower()
    if isinstance(value, str) and value.strip():
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size:
            return raw.hex()
        if _HEX.match(value):  # a shorter hex id (some exporters drop leading zeros)
            return value.lower().rjust(2 * size, "0")
        return value
    got = "nothing" if value is None else "an empty string" if isinstance(value, str) else repr(value)
    raise UserInputError(
        f"{what} must be a non-empty string id (hex, base64 or any text), got {got}"[:200],
        file=file,
        line=line,
        path=what,
    )


def otlp_value(v: object) -> object:
    """The Python value of an OTLP JSON ``AnyValue``."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [otlp_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return {kv.get("key"): otlp_value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values", [])}
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def otlp_attributes(items: Iterable[object] | None) -> dict:
    out: dict = {}
    for kv in items or []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            flatten(kv["key"], otlp_value(kv.get("value")), out)
    return out


def flatten(prefix: str, value: object, out: dict) -> None:
    """Dotted keys for nested objects and lists of objects; lists of scalars stay lists."""
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            flatten(f"{prefix}.{i}", v, out)
    elif hasattr(value, "tolist"):  # numpy arrays from a Parquet table
        flatten(prefix, value.tolist(), out)
    else:
        out[prefix] = value


def _nanos(value: object) -> float | str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        if value.isdigit():
            return float(value)
        try:  # ISO 8601 text (span tables)
            t = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            if t.tzinfo is None:
                t = t.replace(tzinfo=_dt.UTC)
            return t.timestamp() * 1e9
        except ValueError:
            return value
    if isinstance(value, _dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=_dt.UTC)).timestamp() * 1e9
    if hasattr(value, "value") and hasattr(value, "tz_localize"):  # pandas Timestamp
        return float(value.value)
    return 0.0


def spans_from_otlp(doc: dict, *, file: str, line: int | None) -> list[Span]:
    out = []
    for rs in doc.get("resourceSpans") or []:
        if not isinstance(rs, dict):
            raise UserInputError("resourceSpans items must be objects", file=file, line=line, path="$.resourceSpans")
        resource = otlp_attributes((rs.get("resource") or {}).get("attributes"))
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
            for sp in (ss or {}).get("spans") or []:
                if not isinstance(sp, dict):
                    raise UserInputError("spans must be objects", file=file, line=line, path="$..spans")
                parent = sp.get("parentSpanId") or None
                events = [
                    {
                        "name": e.get("name"),
                        "time": _nanos(e.get("timeUnixNano")),
                        "attrs": otlp_attributes(e.get("attributes")),
                    }
                    for e in sp.get("events") or []
                    if isinstance(e, dict)
                ]
                out.append(
                    Span(
                        trace_id=span_id(sp.get("traceId"), size=16, what="traceId", file=file, line=line),
                        span_id=span_id(sp.get("spanId"), size=8, what="spanId", file=file, line=line),
                        parent_id=None
                        if parent is None
                        else span_id(parent, size=8, what="parentSpanId", file=file, line=line),
                        name=str(sp.get("name") or ""),
                        start=_nanos(sp.get("startTimeUnixNano")),
                        attrs=otlp_attributes(sp.get("attributes")),
                        events=events,
                        resource=resource,
                        line=line,
                    )
                )
    return out


def span_from_row(row: dict, *, file: str, line: int | None) -> Span:
    """A span from one row of a span table (flattened ``attributes.*`` columns or nested objects)."""
    ctx = row.get("context")
    ctx = ctx if isinstance(ctx, dict) else {}
    attrs: dict = {}
    nested = json_value(row.get("attributes"))
    if isinstance(nested, dict):
        flatten("", nested, attrs)
    for key, value in row.items():
        if key.startswith("attributes.") and value is not None and not _is_nan(value):
            flatten(key[len("attributes.") :], value, attrs)
    kind = row.get("span_kind")
    if isinstance(kind, str) and "openinference.span.kind" not in attrs and kind.upper() != "UNKNOWN":
        attrs["openinference.span.kind"] = kind.upper()
    parent = row.get("parent_id")
    parent = None if parent is None or _is_nan(parent) or parent == "" else parent
    events = []
    raw_events = row.get("events")
    if raw_events is not None and hasattr(raw_events, "tolist"):
        raw_events = raw_events.tolist()
    for e in raw_events if isinstance(raw_events, list) else []:
        if isinstance(e, dict):
            ea: dict = {}
            flatten("", e.get("attributes") or {}, ea)
            events.append({"name": e.get("name"), "time": _nanos(e.get("timestamp")), "attrs": ea})
    return Span(
        trace_id=span_id(
            ctx.get("trace_id", row.get("context.trace_id")), size=16, what="context.trace_id", file=file, line=line
        ),
        span_id=span_id(
            ctx.get("span_id", row.get("context.span_id")), size=8, what="context.span_id", file=file, line=line
        ),
        parent_id=None if parent is None else span_id(parent, size=8, what="parent_id", file=file, line=line),
        name=str(row.get("name") or ""),
        start=_nanos(row.get("start_time")),
        attrs=attrs,
        events=events,
        line=line,
    )


def _is_nan(value: object) -> bool:
    return isinstance(value, float) and value != value


def read_spans(
    path: str | os.PathLike, *, limits: ReadLimits | None = None
) -> Iterator[tuple[int | None, list[Span] | UserInputError]]:
    """``(line, spans or error)`` per record: an OTLP object, a span-table row, or a Parquet row,
    each within ``limits`` (:mod:`seekbench._limits`)."""
    from ._parquet import is_parquet

    file = str(path)
    if is_parquet(path):
        yield from _parquet_rows(path, limits)
        return
    from ._openai_chat import iter_documents

    for line, doc, prefix in iter_documents(path, single=lambda _: False, limits=limits):
        if isinstance(doc, UserInputError):
            yield line, doc
            continue
        try:
            if is_otlp(doc):
                yield line, spans_from_otlp(doc, file=file, line=line)
            elif is_span_row(doc):
                yield line, [span_from_row(doc, file=file, line=line)]
            else:
                raise UserInputError(
                    "neither OTLP JSON (resourceSpans) nor a span row (context.span_id)",
                    file=file,
                    line=line,
                    path=prefix,
                )
        except UserInputError as e:
            yield line, e
        except (TypeError, ValueError, AttributeError, OverflowError) as e:  # a field of the wrong JSON type
            yield line, malformed(e, file=file, line=line)


def _parquet_rows(
    path: str | os.PathLike, limits: ReadLimits | None
) -> Iterator[tuple[int, list[Span] | UserInputError]]:
    import pyarrow.parquet as pq

    file = str(path)
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid / OSError on a corrupt file
        raise UserInputError(f"unreadable Parquet file ({str(e).splitlines()[0][:200]})", file=file) from e
    check_row_groups(pf.metadata, limits, file=file)
    if not span_table_columns(pf.schema_arrow.names):
        raise UserInputError("not a span table: no context.span_id and context.trace_id columns", file=file)
    line = 0
    for batch in pf.iter_batches(batch_size=4096):
        for row in batch.to_pylist():
            line += 1
            try:
                yield line, [span_from_row(row, file=file, line=line)]
            except UserInputError as e:
                yield line, e
            except (TypeError, ValueError, AttributeError, OverflowError) as e:
                yield line, malformed(e, file=file, line=line)


def malformed(e: Exception, *, file: str, line: int | None, trace_id: str | None = None) -> UserInputError:
    """The user error for a span record whose fields have the wrong JSON types."""
    detail = str(e).splitlines()[0][:160] if str(e).strip() else type(e).__name__
    return UserInputError(
        f"malformed span record: a field has the wrong type ({detail}); fix or remove it, or pass --skip-invalid",
        file=file,
        line=line,
        trace_id=trace_id,
    )


def first_is_spans(first: object) -> bool:
    """Detection: a first record that is OTLP JSON or a span-table row."""
    return (
        is_otlp(first)
        or is_span_row(first)
        or (isinstance(first, list) and bool(first) and all(is_otlp(x) or is_span_row(x) for x in first[:3]))
    )
