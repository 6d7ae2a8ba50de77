"""Labels: annotation sets (step labels apart from the traces) with provenance."""

from ._annotation_set import COLUMNS, AnnotationSet, load_annotations
from ._span_export import SpanExport, span_label_records, write_span_labels
from ._span_import import SpanImport, read_span_labels
from ._span_labels import SpanIndex, span_index

__all__ = [
    "COLUMNS",
    "AnnotationSet",
    "SpanExport",
    "SpanImport",
    "SpanIndex",
    "load_annotations",
    "read_span_labels",
    "span_index",
    "span_label_records",
    "write_span_labels",
]
