"""Analysis: everything a report shows, computed once into one typed, frozen result.

:func:`analyze` runs the metrics, the audit, outcomes, completeness and conformal coverage of
seeking episodes, judge agreement and the trace explorer's data over a set of traces and
returns an :class:`Analysis`; :mod:`seekbench.report` only renders it.
"""

# The type of Analysis.corrected, named here for the report (which reads results, never the metrics package).
from ..metrics import CorrectedMetrics
from ._agreement import agreement_analysis, analyze_agreement, kappa_cost_table
from ._analyze import analyze
from ._audit import analyze_audit
from ._comparison import compare_agents
from ._completeness import analyze_completeness
from ._disagreements import disagreement_examples
from ._episode_conformal import agent_self_conformal, self_estimate_states
from ._explorer_data import AUDIT_OPTION_DEFAULTS, ExplorerData, explorer_data, flag_definitions
from ._headline import HEADLINE_METRICS, HeadlineMetric
from ._judge_eval import (
    CVResult,
    agreement_summary,
    agreement_table,
    cross_validate_learned,
    evaluate_judge,
    format_number,
    grouped_folds,
    kappa_score,
)
from ._judge_records import JudgeRecord, judge_records
from ._judge_train import model_card_markdown, train_learned_model
from ._outcome import analyze_outcome, correctness_sources, panel_table
from ._process import analyze_process
from ._result import (
    ANALYSIS_VERSION,
    AgreementAnalysis,
    Analysis,
    AuditAnalysis,
    Comparison,
    CompletenessAnalysis,
    OutcomeAnalysis,
    ProcessAnalysis,
    Provenance,
)
from ._validation_record import validation_record, validation_result

__all__ = [
    "ANALYSIS_VERSION",
    "AUDIT_OPTION_DEFAULTS",
    "AgreementAnalysis",
    "Analysis",
    "AuditAnalysis",
    "CVResult",
    "Comparison",
    "CompletenessAnalysis",
    "CorrectedMetrics",
    "ExplorerData",
    "HEADLINE_METRICS",
    "HeadlineMetric",
    "JudgeRecord",
    "OutcomeAnalysis",
    "ProcessAnalysis",
    "Provenance",
    "agent_self_conformal",
    "agreement_analysis",
    "agreement_summary",
    "agreement_table",
    "analyze",
    "analyze_agreement",
    "analyze_audit",
    "analyze_completeness",
    "analyze_outcome",
    "analyze_process",
    "compare_agents",
    "correctness_sources",
    "cross_validate_learned",
    "disagreement_examples",
    "evaluate_judge",
    "explorer_data",
    "flag_definitions",
    "format_number",
    "grouped_folds",
    "kappa_cost_table",
    "kappa_score",
    "model_card_markdown",
    "panel_table",
    "self_estimate_states",
    "judge_records",
    "train_learned_model",
    "validation_record",
    "validation_result",
]
