"""Metrics: evidence state, RQI, ERF, CE, outcome and efficiency (spec sections 2-6), and the per-group summary."""

from ._audit import AUDIT_COLUMNS, trace_audit
from ._bootstrap import bootstrap_ci, bootstrap_statistic_ci, bootstrap_sums, cluster_labels, percentile_interval
from ._ce import CalibrationResult, answer_calibration, calibration_error, evidence_prevalence
from ._decisions import decision_point_table, held_evidence
from ._erf import EvidenceRecoveryFitter
from ._erf_tests import RecoveryComparison, compare_recovery
from ._evidence import evidence_by_turn, observation_evidence, step_evidence
from ._outcome import (OutcomeResult, accuracy_score, duplicate_query_rate, duplicate_visit_rate, outcome_metrics,
                       pass_at_k, pass_at_k_score)
from ._recovery_events import recovery_events
from ._rqi import RQIResult, reasoning_quality, rqi_score
from ._summary import MetricsSummary, summarize

__all__ = [
    "AUDIT_COLUMNS",
    "CalibrationResult",
    "EvidenceRecoveryFitter",
    "MetricsSummary",
    "OutcomeResult",
    "RQIResult",
    "RecoveryComparison",
    "accuracy_score",
    "answer_calibration",
    "bootstrap_ci",
    "bootstrap_statistic_ci",
    "bootstrap_sums",
    "calibration_error",
    "cluster_labels",
    "compare_recovery",
    "decision_point_table",
    "duplicate_query_rate",
    "duplicate_visit_rate",
    "evidence_by_turn",
    "evidence_prevalence",
    "held_evidence",
    "observation_evidence",
    "outcome_metrics",
    "pass_at_k",
    "pass_at_k_score",
    "percentile_interval",
    "reasoning_quality",
    "recovery_events",
    "rqi_score",
    "step_evidence",
    "summarize",
    "trace_audit",
]
