"""Importers: one private module per source format, auto-detected."""

from ._base import ImportedRecord
from ._detect import FORMATS, available_formats, detect_format, importer_for

__all__ = ["FORMATS", "ImportedRecord", "available_formats", "detect_format", "importer_for"]
