"""Traces: the canonical format, importers, validation and the step/trace tables."""

from .._io import atomic_writer, iter_jsonl, write_jsonl, write_text
from .._limits import DEFAULT_LIMITS, ReadLimits
from ._answers import exact_match_score, f1_score_tokens
from ._chunks import iter_fragment_tables
from ._evidence_record import (
    EVIDENCE_COLUMNS,
    EVIDENCE_SET_KEY,
    evidence_set_of,
    evidence_set_table,
    is_false_premise,
    normalize_judgment,
)
from ._fragment_log import FragmentLog
from ._fragments import Fragment, expand_inputs, is_url, iter_fragments, plan_fragments, url_format
from ._normalize import normalize_answer, normalize_query
from ._ontology import FIELDS_BY_KIND, LABEL_FIELDS, LABEL_VALUES, STEP_KINDS, canonical_field, canonical_value
from ._read import (
    ReadResult,
    duplicate_id_error,
    format_not_found_error,
    importer_options,
    iter_traces,
    read_tables,
    read_traces,
    valid_traces,
)
from ._streams import is_stream, spool_stream, stream_label
from ._tables import STEP_COLUMNS, TRACE_COLUMNS, attach_labels, build_tables
from ._validate import json_path, validate_trace
from .importers import available_formats, detect_format

__all__ = [
    "DEFAULT_LIMITS",
    "ReadLimits",
    "is_stream",
    "spool_stream",
    "stream_label",
    "EVIDENCE_COLUMNS",
    "EVIDENCE_SET_KEY",
    "FIELDS_BY_KIND",
    "Fragment",
    "FragmentLog",
    "LABEL_FIELDS",
    "LABEL_VALUES",
    "ReadResult",
    "duplicate_id_error",
    "format_not_found_error",
    "STEP_COLUMNS",
    "STEP_KINDS",
    "TRACE_COLUMNS",
    "atomic_writer",
    "attach_labels",
    "available_formats",
    "build_tables",
    "canonical_field",
    "canonical_value",
    "detect_format",
    "evidence_set_of",
    "evidence_set_table",
    "exact_match_score",
    "expand_inputs",
    "f1_score_tokens",
    "importer_options",
    "is_false_premise",
    "is_url",
    "iter_fragment_tables",
    "iter_jsonl",
    "iter_traces",
    "json_path",
    "normalize_answer",
    "normalize_judgment",
    "normalize_query",
    "iter_fragments",
    "plan_fragments",
    "read_tables",
    "read_traces",
    "url_format",
    "valid_traces",
    "validate_trace",
    "write_jsonl",
    "write_text",
]
