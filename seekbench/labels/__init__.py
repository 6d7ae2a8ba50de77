"""Labels: annotation sets (step labels apart from the traces) with provenance."""

from ._annotation_set import COLUMNS, AnnotationSet, load_annotations

__all__ = ["COLUMNS", "AnnotationSet", "load_annotations"]
