"""Reports: the process audit as self-contained HTML, Markdown, PNG figures and CSV tables."""

from ._content import ReportContent, build_content
from ._figures import plot_calibration, plot_erf_curves, plot_evidence_prevalence, plot_rqi_heatmap
from ._write import MANIFEST, ReportFiles, record_written, write_report

__all__ = [
    "MANIFEST",
    "ReportContent",
    "ReportFiles",
    "build_content",
    "plot_calibration",
    "plot_erf_curves",
    "plot_evidence_prevalence",
    "plot_rqi_heatmap",
    "record_written",
    "write_report",
]
