"""Metrics: evidence state, RQI, ERF, CE, outcome and efficiency (spec sections 2-6), and the per-group summary."""

import warnings as _warnings

from ._audit import AUDIT_COLUMNS, FLAG_DEFINITIONS, FLAGS, audit_flag_rates, trace_audit, worst_traces
from ._bootstrap import (
    EstimateResult,
    bootstrap_ci,
    bootstrap_statistic_ci,
    bootstrap_statistic_cis,
    bootstrap_sums,
    check_bootstrap_options,
    cluster_labels,
)
from ._ce import CalibrationResult, answer_calibration, calibration_error, evidence_prevalence
from ._decisions import decision_point_table, held_evidence
from ._efficiency import efficiency_table, pass_at_k_by_agent, run_counts
from ._erf import EvidenceRecoveryFitter
from ._erf_bootstrap import erf_at_columns, recovered_by_ci
from ._evidence import evidence_by_turn, evidence_unknown, observation_evidence, step_evidence
from ._evidence_set import (
    EvidenceSetResult,
    attribute_groups,
    effective_evidence_utilization,
    evidence_set_metrics,
    evidence_set_summary,
    information_accuracy,
    information_compactness,
    interference_rate,
    per_question,
)
from ._group_summary import RECOVERED_BY
from ._intervals import far_side_share, monte_carlo_borderline, newcombe_interval, wilson_interval
from ._logrank import RecoveryComparison, compare_recovery
from ._options import MetricOptions
from ._outcome import (
    OutcomeResult,
    accuracy_score,
    duplicate_query_rate,
    duplicate_visit_rate,
    outcome_metrics,
    pass_at_k,
    pass_at_k_score,
)
from ._poisson import AUTO_POISSON_ABOVE
from ._ppi import PPIEstimate, power_tuning, ppi_bootstrap_interval, ppi_difference, ppi_mean
from ._ppi_result import CorrectedMetrics, corrected_metrics
from ._ppi_tables import HOW_TO_SAMPLE, judge_corrected_metrics, labeled_selection
from ._ppi_trace_stats import PPI_METRICS, ppi_trace_values
from ._recovery_events import recovery_events
from ._reference_steps import (
    ReferenceStepCoverageResult,
    RuleMatcher,
    SkeletonStep,
    load_skeleton,
    public_history,
    reference_step_coverage,
    reference_step_coverage_score,
)
from ._resampler import Resampler, percentile_interval
from ._rqi import RQIResult, reasoning_quality, rqi_score
from ._summary import MetricsSummary, summarize, summarize_statistics
from ._trace_stats import TRACE_STATISTICS_COLUMNS, trace_statistics
from ._trace_sums import ce_columns, ce_statistics_columns, erf_columns, rqi_columns, rqi_statistics_columns

__all__ = [
    "AUDIT_COLUMNS",
    "AUTO_POISSON_ABOVE",
    "CalibrationResult",
    "CorrectedMetrics",
    "EstimateResult",
    "EvidenceRecoveryFitter",
    "EvidenceSetResult",
    "FLAGS",
    "FLAG_DEFINITIONS",
    "HOW_TO_SAMPLE",
    "MetricOptions",
    "MetricsSummary",
    "OutcomeResult",
    "PPIEstimate",
    "PPI_METRICS",
    "RECOVERED_BY",
    "RQIResult",
    "RecoveryComparison",
    "ReferenceStepCoverageResult",
    "Resampler",
    "RuleMatcher",
    "SkeletonStep",
    "TRACE_STATISTICS_COLUMNS",
    "accuracy_score",
    "answer_calibration",
    "attribute_groups",
    "audit_flag_rates",
    "bootstrap_ci",
    "bootstrap_statistic_ci",
    "bootstrap_statistic_cis",
    "bootstrap_sums",
    "calibration_error",
    "ce_columns",
    "ce_statistics_columns",
    "check_bootstrap_options",
    "cluster_labels",
    "compare_recovery",
    "corrected_metrics",
    "decision_point_table",
    "duplicate_query_rate",
    "duplicate_visit_rate",
    "effective_evidence_utilization",
    "efficiency_table",
    "erf_at_columns",
    "erf_columns",
    "evidence_by_turn",
    "evidence_prevalence",
    "evidence_set_metrics",
    "evidence_set_summary",
    "evidence_unknown",
    "far_side_share",
    "held_evidence",
    "information_accuracy",
    "information_compactness",
    "interference_rate",
    "judge_corrected_metrics",
    "labeled_selection",
    "load_skeleton",
    "monte_carlo_borderline",
    "newcombe_interval",
    "observation_evidence",
    "outcome_metrics",
    "pass_at_k",
    "pass_at_k_by_agent",
    "pass_at_k_score",
    "per_question",
    "percentile_interval",
    "power_tuning",
    "ppi_bootstrap_interval",
    "ppi_difference",
    "ppi_mean",
    "ppi_trace_values",
    "public_history",
    "reasoning_quality",
    "recovered_by_ci",
    "recovery_events",
    "reference_step_coverage",
    "reference_step_coverage_score",
    "rqi_columns",
    "rqi_score",
    "rqi_statistics_columns",
    "run_counts",
    "step_evidence",
    "summarize",
    "summarize_statistics",
    "trace_audit",
    "trace_statistics",
    "wilson_interval",
    "worst_traces",
]

#: Old names kept working with a FutureWarning: "coverage" alone also names conformal coverage
#: and the coverage judge.
_RENAMED = {"coverage_score": "reference_step_coverage_score", "CoverageResult": "ReferenceStepCoverageResult"}


def __getattr__(name: str):
    if name in _RENAMED:
        new = _RENAMED[name]
        _warnings.warn(
            f"seekbench.metrics.{name} is renamed {new}; the old name will be removed", FutureWarning, stacklevel=2
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
