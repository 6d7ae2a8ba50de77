"""The per-trace audit as the report shows it: flags, per-agent flag rates, each agent's worst traces."""

from __future__ import annotations

from typing import Literal

import pandas as pd

from ..metrics import FLAGS, audit_flag_rates, trace_audit, worst_traces
from ._explorer_data import AUDIT_OPTION_DEFAULTS, flag_definitions
from ._result import AuditAnalysis


def analyze_audit(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    audit_options: dict | None = None,
    worst_n: int = 5,
    evidence_mapping: Literal["sum", "sufficiency_first"] = "sum",
    evidence_scope: Literal["cumulative", "latest"] = "cumulative",
    recovery: Literal["evidence_or_correct", "evidence"] = "evidence_or_correct",
) -> AuditAnalysis:
    """:func:`seekbench.metrics.trace_audit` with its rates and the ``worst_n`` worst traces per agent."""
    audit = trace_audit(
        steps,
        traces,
        evidence_mapping=evidence_mapping,
        evidence_scope=evidence_scope,
        recovery=recovery,
        **(audit_options or {}),
    )
    return AuditAnalysis(
        table=audit,
        rates=audit_flag_rates(audit),
        worst=worst_traces(audit, worst_n),
        worst_n=worst_n,
        options={**AUDIT_OPTION_DEFAULTS, **(audit_options or {})},
        flags=tuple(FLAGS),
        flag_definitions=flag_definitions(audit_options),
        n_flagged=int((audit["flags"] != "").sum()),
        n_multi_flagged=int((audit["flags"].str.count(",") >= 1).sum()),
    )
