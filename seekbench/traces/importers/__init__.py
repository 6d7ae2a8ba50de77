"""Importers: one private module per source format, auto-detected."""

from ._base import ImportedRecord
from ._detect import FORMATS, available_formats, detect_format, format_of, importer_for
from ._explain_map import mapping_lines
from ._mapping import Mapping, load_mapping
from ._otel_spans import json_value
from ._parquet import write_parquet
from ._summary import ImportSummary
from ._tools import is_search_tool

__all__ = [
    "FORMATS",
    "ImportSummary",
    "ImportedRecord",
    "Mapping",
    "available_formats",
    "detect_format",
    "format_of",
    "importer_for",
    "is_search_tool",
    "json_value",
    "load_mapping",
    "mapping_lines",
    "write_parquet",
]
