"""Reports: render an :class:`~seekbench.analysis.Analysis` as self-contained HTML, Markdown, PNG figures and CSV
tables, and the trace explorer. Nothing here computes a metric: :func:`seekbench.analysis.analyze` does."""

from ._agent_labels import parse_label_options, short_labels
from ._agreement_report import AgreementReportFiles, write_agreement_report
from ._comparison_figure import plot_comparison
from ._conformal_section import ConformalReportFiles, write_conformal_report
from ._explorer_page import ExplorerFiles, render_explorer_page, write_explorer
from ._figures import plot_calibration, plot_erf_curves, plot_evidence_prevalence, plot_rqi_heatmap
from ._tables import fmt
from ._write import MANIFEST, ReportFiles, record_written, write_report

__all__ = [
    "AgreementReportFiles",
    "ConformalReportFiles",
    "ExplorerFiles",
    "MANIFEST",
    "ReportFiles",
    "fmt",
    "parse_label_options",
    "plot_comparison",
    "plot_calibration",
    "plot_erf_curves",
    "plot_evidence_prevalence",
    "plot_rqi_heatmap",
    "record_written",
    "render_explorer_page",
    "short_labels",
    "write_agreement_report",
    "write_conformal_report",
    "write_explorer",
    "write_report",
]
