"""Importers: one private module per source format, auto-detected."""

from ._base import ImportedRecord
from ._detect import FORMATS, available_formats, detect_format, importer_for
from ._otel_spans import json_value
from ._parquet import write_parquet
from ._summary import ImportSummary
from ._tools import is_search_tool

__all__ = [
    "FORMATS",
    "ImportSummary",
    "ImportedRecord",
    "available_formats",
    "detect_format",
    "importer_for",
    "is_search_tool",
    "json_value",
    "write_parquet",
]
