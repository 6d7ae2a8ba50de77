"""Per-trace audit table: which traces show which process failures (for the report)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._evidence import EvidenceMapping, EvidenceScope, evidence_by_turn
from ._recovery_events import recovery_events

AUDIT_COLUMNS = ["trace_id", "agent", "n_steps", "n_reasoning_labeled", "ungrounded_share", "answered",
                 "evidence_at_answer", "answered_below_2", "recovery", "never_recovered", "repeated_queries",
                 "correct", "flags"]


def trace_audit(steps: pd.DataFrame, traces: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum",
                evidence_scope: EvidenceScope = "cumulative", recovery: str = "evidence_or_correct",
                ungrounded_threshold: float = 0.5) -> pd.DataFrame:
    """One row per trace with the process failures a reviewer looks for.

    Columns: share of labeled reasoning steps that are NotGrounded (NaN when none is
    labeled), E at the answer turn and whether the answer came with E < 2, the
    recovery outcome (spec section 4) and whether the trace never recovered, the number
    of repeated queries (normalised text equal to an earlier query), and ``flags``, a
    comma-separated list of the failures present (empty when none).
    """
    reasoning = steps[steps["kind"] == "reasoning"]
    labeled = reasoning[reasoning["grounding"].notna()]
    ung = (labeled.assign(ng=labeled["grounding"].eq("NotGrounded"))
           .groupby("trace_id", sort=False)["ng"].agg(["mean", "size"]))
    searches = steps[(steps["kind"] == "search") & steps["query_norm"].notna()]
    repeats = searches.duplicated(["trace_id", "query_norm"]).groupby(searches["trace_id"], sort=False).sum()
    ebt = evidence_by_turn(steps, mapping=evidence_mapping, scope=evidence_scope)
    at_answer = traces[["trace_id", "answer_turn"]].dropna().merge(
        ebt.rename(columns={"turn": "answer_turn"})[["trace_id", "answer_turn", "E"]],
        on=["trace_id", "answer_turn"], how="left").set_index("trace_id")["E"]
    events = recovery_events(steps, traces, recovery=recovery, evidence_mapping=evidence_mapping,
                             evidence_scope=evidence_scope).set_index("trace_id")["event"]
    out = pd.DataFrame({"trace_id": traces["trace_id"], "agent": traces["agent"], "n_steps": traces["n_steps"],
                        "answered": traces["answered"].astype(bool), "correct": traces["correct"]})
    tid = out["trace_id"]
    out["n_reasoning_labeled"] = tid.map(ung["size"]).fillna(0).astype(int)
    out["ungrounded_share"] = tid.map(ung["mean"]).astype(float)
    out["evidence_at_answer"] = tid.map(at_answer).astype(float)
    out["answered_below_2"] = out["answered"] & (out["evidence_at_answer"] < 2)
    out["recovery"] = tid.map(events)
    out["never_recovered"] = out["recovery"] != "recovered"
    out["repeated_queries"] = tid.map(repeats).fillna(0).astype(int)
    flags = []
    for ug, below, never, rep in zip(out["ungrounded_share"], out["answered_below_2"], out["never_recovered"],
                                     out["repeated_queries"]):
        f = []
        if not np.isnan(ug) and ug >= ungrounded_threshold:
            f.append("ungrounded")
        if below:
            f.append("answered_E<2")
        if never:
            f.append("never_recovered")
        if rep:
            f.append("repeated_queries")
        flags.append(",".join(f))
    out["flags"] = flags
    return out[AUDIT_COLUMNS]
