"""Traces: the canonical format, importers, validation and the step/trace tables."""

from ._answers import exact_match_score, f1_score_tokens
from ._io import atomic_writer, iter_jsonl, write_jsonl, write_text
from ._normalize import normalize_answer, normalize_query
from ._ontology import FIELDS_BY_KIND, LABEL_FIELDS, LABEL_VALUES, STEP_KINDS, canonical_field, canonical_value
from ._read import ReadResult, iter_traces, read_traces
from ._tables import STEP_COLUMNS, TRACE_COLUMNS, attach_labels, build_tables
from ._validate import validate_trace
from .importers import available_formats, detect_format

__all__ = [
    "FIELDS_BY_KIND",
    "LABEL_FIELDS",
    "LABEL_VALUES",
    "STEP_COLUMNS",
    "STEP_KINDS",
    "TRACE_COLUMNS",
    "ReadResult",
    "atomic_writer",
    "attach_labels",
    "available_formats",
    "build_tables",
    "canonical_field",
    "canonical_value",
    "detect_format",
    "exact_match_score",
    "f1_score_tokens",
    "iter_jsonl",
    "iter_traces",
    "normalize_answer",
    "normalize_query",
    "read_traces",
    "validate_trace",
    "write_jsonl",
    "write_text",
]
