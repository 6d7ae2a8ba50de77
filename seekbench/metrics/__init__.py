"""Metrics: evidence state, RQI, ERF, CE, outcome and efficiency (spec sections 2-6), and the per-group summary."""

from ._audit import AUDIT_COLUMNS, FLAG_DEFINITIONS, FLAGS, audit_flag_rates, trace_audit, worst_traces
from ._bootstrap import bootstrap_ci, bootstrap_statistic_ci, bootstrap_sums, cluster_labels, percentile_interval
from ._ce import CalibrationResult, answer_calibration, calibration_error, evidence_prevalence
from ._decisions import decision_point_table, held_evidence
from ._coverage import CoverageResult, RuleMatcher, SkeletonStep, coverage_score, load_skeleton, reference_step_coverage
from ._efficiency import efficiency_table, pass_at_k_by_agent, run_counts
from ._erf import EvidenceRecoveryFitter
from ._erf_bootstrap import recovered_by_ci
from ._erf_tests import RecoveryComparison, compare_recovery
from ._evidence import evidence_by_turn, observation_evidence, step_evidence
from ._options import MetricOptions
from ._evidence_set import (EvidenceSetResult, attribute_groups, effective_evidence_utilization, evidence_set_metrics,
                            evidence_set_summary, information_accuracy, information_compactness, interference_rate,
                            per_question)
from ._outcome import (OutcomeResult, accuracy_score, duplicate_query_rate, duplicate_visit_rate, outcome_metrics,
                       pass_at_k, pass_at_k_score)
from ._recovery_events import recovery_events
from ._rqi import RQIResult, reasoning_quality, rqi_score
from ._summary import MetricsSummary, summarize

__all__ = [
    "AUDIT_COLUMNS",
    "FLAGS",
    "FLAG_DEFINITIONS",
    "CalibrationResult",
    "CoverageResult",
    "EvidenceRecoveryFitter",
    "EvidenceSetResult",
    "MetricOptions",
    "MetricsSummary",
    "OutcomeResult",
    "RQIResult",
    "RecoveryComparison",
    "RuleMatcher",
    "SkeletonStep",
    "accuracy_score",
    "answer_calibration",
    "audit_flag_rates",
    "attribute_groups",
    "bootstrap_ci",
    "bootstrap_statistic_ci",
    "bootstrap_sums",
    "calibration_error",
    "cluster_labels",
    "compare_recovery",
    "coverage_score",
    "decision_point_table",
    "duplicate_query_rate",
    "duplicate_visit_rate",
    "effective_evidence_utilization",
    "efficiency_table",
    "evidence_by_turn",
    "evidence_prevalence",
    "evidence_set_metrics",
    "evidence_set_summary",
    "held_evidence",
    "information_accuracy",
    "information_compactness",
    "interference_rate",
    "load_skeleton",
    "observation_evidence",
    "outcome_metrics",
    "pass_at_k",
    "pass_at_k_by_agent",
    "pass_at_k_score",
    "per_question",
    "percentile_interval",
    "reasoning_quality",
    "recovered_by_ci",
    "recovery_events",
    "reference_step_coverage",
    "rqi_score",
    "run_counts",
    "step_evidence",
    "summarize",
    "trace_audit",
    "worst_traces",
]
