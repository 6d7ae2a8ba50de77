"""Reports: the process audit as self-contained HTML, Markdown, PNG figures and CSV tables."""

from ._content import ReportContent, build_content
from ._explorer_data import ExplorerData, explorer_data
from ._explorer_page import ExplorerFiles, render_explorer_page, write_explorer
from ._figures import plot_calibration, plot_erf_curves, plot_evidence_prevalence, plot_rqi_heatmap
from ._write import MANIFEST, ReportFiles, record_written, write_report

__all__ = [
    "ExplorerData",
    "ExplorerFiles",
    "MANIFEST",
    "ReportContent",
    "ReportFiles",
    "build_content",
    "explorer_data",
    "plot_calibration",
    "plot_erf_curves",
    "plot_evidence_prevalence",
    "plot_rqi_heatmap",
    "render_explorer_page",
    "write_explorer",
    "record_written",
    "write_report",
]
