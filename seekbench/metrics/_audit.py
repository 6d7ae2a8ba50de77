"""Per-trace audit: which traces show which process failures, how bad, and each agent's rates.

Every flag has its threshold as a keyword-only option of :func:`trace_audit` (and a CLI flag
of the same name on ``seekbench report`` and ``seekbench explore``), so a reviewer can say
exactly why a trace is flagged. A severity score orders the flagged traces, so the report can
show each agent's few worst traces instead of a list of most of the corpus.
"""

from __future__ import annotations

from typing import Unpack

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._evidence import evidence_by_turn
from ._options import EvidenceKeywords, Recovery, evidence_keywords
from ._recovery_events import recovery_events

#: The flags, in the order ``flags`` lists them.
FLAGS = ("ungrounded", "low_evidence_answer", "not_recovered", "repeated_queries")

AUDIT_COLUMNS = [
    "trace_id",
    "agent",
    "n_steps",
    "n_reasoning_labeled",
    "ungrounded_share",
    "answered",
    "evidence_at_answer",
    "low_evidence_answer",
    "recovery",
    "recovery_turn",
    "not_recovered",
    "n_queries",
    "repeated_queries",
    "correct",
    "flags",
    "score",
]

#: What each flag means, with the option that sets its threshold (for reports and --help).
FLAG_DEFINITIONS = {
    "ungrounded": "at least ungrounded_threshold of the trace's labeled reasoning steps are NotGrounded, "
    "counting only traces with at least min_reasoning_labeled labeled reasoning steps",
    "low_evidence_answer": "answered while the evidence state E was below answer_evidence_below",
    "not_recovered": "did not reach recovery (spec section 4) by turn recovery_horizon (default: at all)",
    "repeated_queries": "at least repeated_queries_threshold queries repeat an earlier query of the trace "
    "(same normalised text)",
}


def _check(
    ungrounded_threshold, min_reasoning_labeled, answer_evidence_below, repeated_queries_threshold, recovery_horizon
) -> None:
    if not 0.0 < float(ungrounded_threshold) <= 1.0:
        raise UserInputError(f"ungrounded_threshold must be in (0, 1], got {ungrounded_threshold!r}")
    if int(min_reasoning_labeled) < 1:
        raise UserInputError(f"min_reasoning_labeled must be >= 1, got {min_reasoning_labeled!r}")
    if answer_evidence_below not in (0, 1, 2):
        raise UserInputError(f"answer_evidence_below must be 0 (flag off), 1 or 2, got {answer_evidence_below!r}")
    if int(repeated_queries_threshold) < 1:
        raise UserInputError(f"repeated_queries_threshold must be >= 1, got {repeated_queries_threshold!r}")
    if recovery_horizon is not None and int(recovery_horizon) < 0:
        raise UserInputError(f"recovery_horizon must be >= 0 or None, got {recovery_horizon!r}")


def trace_audit(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    recovery: Recovery = "evidence_or_correct",
    ungrounded_threshold: float = 0.75,
    min_reasoning_labeled: int = 3,
    answer_evidence_below: int = 1,
    repeated_queries_threshold: int = 2,
    recovery_horizon: int | None = None,
    **evidence: Unpack[EvidenceKeywords],
) -> pd.DataFrame:
    """One row per trace with the process failures a reviewer looks for, and a severity score.

    Flags (each threshold is an option; see ``FLAG_DEFINITIONS``):

    - ``ungrounded``: u >= ``ungrounded_threshold`` and n_r >= ``min_reasoning_labeled``, where
      u is the share of the trace's n_r labeled reasoning steps that are NotGrounded (spec
      section 3: u = 1 - RQI_i). One or two labels are too few to call a whole trace ungrounded.
    - ``low_evidence_answer``: answered with E_answer < ``answer_evidence_below`` (spec section 2;
      the default 1 flags answers given with no clear or sufficient observation at all; 2 flags
      every answer before full evidence, the CE "overconfident" reading; 0 turns the flag off).
    - ``not_recovered``: the recovery outcome (spec section 4) is not ``recovered``, or it is
      at a turn later than ``recovery_horizon`` when one is given.
    - ``repeated_queries``: r >= ``repeated_queries_threshold``, r the number of queries whose
      normalised text equals an earlier query of the trace.

    Severity score (orders the "worst traces"; 0 exactly when no flag is raised)::

        score = [ungrounded] * u
              + [low_evidence_answer] * (2 - E_answer) / 2
              + [not_recovered] * 1
              + [repeated_queries] * r / n_queries

    Each term is in (0, 1], so the score is in [0, 4]: the more failures, and the worse each
    one, the higher.

    Parameters
    ----------
    steps, traces : DataFrame
        The tables of :func:`seekbench.traces.build_tables` (labels attached).
    recovery : str
        As in :func:`recovery_events`.
    ungrounded_threshold : float in (0, 1], default 0.75
    min_reasoning_labeled : int >= 1, default 3
    answer_evidence_below : {0, 1, 2}, default 1
    repeated_queries_threshold : int >= 1, default 2
    recovery_horizon : int >= 0 or None, default None
    **evidence
        ``evidence_mapping`` (default "sum") and ``evidence_scope`` (default "cumulative"),
        as in :func:`evidence_by_turn`.

    Returns
    -------
    DataFrame
        ``AUDIT_COLUMNS``: ``ungrounded_share`` is NaN when no reasoning step is labeled,
        ``evidence_at_answer`` NaN when the trace did not answer, ``recovery_turn`` NaN unless
        recovered; ``flags`` is a comma-separated list of the raised flags ("" when none).

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> trace = {"trace_id": "t", "agent": "a", "question": "q", "gold_answers": ["x"], "final_answer": "y",
    ...          "steps": [{"index": 0, "kind": "reasoning", "text": "guess", "labels": {"grounding": "NotGrounded"}},
    ...                    {"index": 1, "kind": "answer", "text": "y"}]}
    >>> steps, traces = build_tables([trace])
    >>> row = trace_audit(steps, traces, min_reasoning_labeled=1).iloc[0]
    >>> row["flags"], float(row["score"])  # u = 1, E_answer = 0 (term 1), wrong answer: not recovered
    ('ungrounded,low_evidence_answer,not_recovered', 3.0)
    """
    _check(
        ungrounded_threshold, min_reasoning_labeled, answer_evidence_below, repeated_queries_threshold, recovery_horizon
    )
    ev = evidence_keywords("trace_audit", evidence)
    reasoning = steps[steps["kind"] == "reasoning"]
    labeled = reasoning[reasoning["grounding"].notna()]
    ung = (
        labeled.assign(ng=labeled["grounding"].eq("NotGrounded"))
        .groupby("trace_id", sort=False)["ng"]
        .agg(["mean", "size"])
    )
    searches = steps[(steps["kind"] == "search") & steps["query_norm"].notna()]
    repeats = searches.duplicated(["trace_id", "query_norm"]).groupby(searches["trace_id"], sort=False).sum()
    n_queries = searches.groupby("trace_id", sort=False).size()
    ebt = evidence_by_turn(steps, mapping=ev["evidence_mapping"], scope=ev["evidence_scope"])
    at_answer = (
        traces[["trace_id", "answer_turn"]]
        .dropna()
        .merge(
            ebt.rename(columns={"turn": "answer_turn"})[["trace_id", "answer_turn", "E"]],
            on=["trace_id", "answer_turn"],
            how="left",
        )
        .set_index("trace_id")["E"]
    )
    events = recovery_events(steps, traces, recovery=recovery, **ev).set_index("trace_id")
    out = pd.DataFrame(
        {
            "trace_id": traces["trace_id"],
            "agent": traces["agent"],
            "n_steps": traces["n_steps"],
            "answered": traces["answered"].astype(bool),
            "correct": traces["correct"],
        }
    )
    tid = out["trace_id"]
    out["n_reasoning_labeled"] = tid.map(ung["size"]).fillna(0).astype(int)
    out["ungrounded_share"] = tid.map(ung["mean"]).astype(float)
    out["evidence_at_answer"] = tid.map(at_answer).astype(float).where(out["answered"])
    out["recovery"] = tid.map(events["event"])
    out["recovery_turn"] = tid.map(events["duration"]).astype(float).where(out["recovery"] == "recovered")
    out["n_queries"] = tid.map(n_queries).fillna(0).astype(int)
    out["repeated_queries"] = tid.map(repeats).fillna(0).astype(int)

    ung_flag = (out["ungrounded_share"] >= ungrounded_threshold) & (out["n_reasoning_labeled"] >= min_reasoning_labeled)
    out["low_evidence_answer"] = out["answered"] & (out["evidence_at_answer"] < answer_evidence_below)
    late = out["recovery_turn"] > recovery_horizon if recovery_horizon is not None else False
    out["not_recovered"] = (out["recovery"] != "recovered") | late
    rep_flag = out["repeated_queries"] >= repeated_queries_threshold
    raised = pd.DataFrame(
        {
            "ungrounded": ung_flag,
            "low_evidence_answer": out["low_evidence_answer"],
            "not_recovered": out["not_recovered"],
            "repeated_queries": rep_flag,
        }
    )
    severity = pd.DataFrame(
        {
            "ungrounded": out["ungrounded_share"].fillna(0.0),
            "low_evidence_answer": (2.0 - out["evidence_at_answer"].fillna(2.0)) / 2.0,
            "not_recovered": 1.0,
            "repeated_queries": out["repeated_queries"] / out["n_queries"].where(out["n_queries"] > 0, 1),
        }
    )
    out["score"] = (severity.where(raised.to_numpy(), 0.0)).sum(axis=1).astype(float)
    names = np.array(FLAGS, dtype=object)
    mask = raised[list(FLAGS)].to_numpy(dtype=bool)
    out["flags"] = [",".join(names[m]) for m in mask]
    return out[AUDIT_COLUMNS].reset_index(drop=True)


def audit_flag_rates(audit: pd.DataFrame, *, by: str = "agent") -> pd.DataFrame:
    """Per group (default: per agent), the share of its traces that raise each flag.

    rate_f(g) = (traces of g with flag f) / (traces of g); ``flagged`` is the share with at
    least one flag and ``mean_score`` the mean severity score (see :func:`trace_audit`).

    Returns
    -------
    DataFrame
        One row per group in order of first appearance: ``by, n_traces, flagged, <each flag>,
        mean_score``; shares in [0, 1].

    Examples
    --------
    >>> audit = pd.DataFrame({"agent": ["a", "a", "b"], "flags": ["ungrounded", "", "ungrounded,not_recovered"],
    ...                       "score": [1.0, 0.0, 2.0]})
    >>> audit_flag_rates(audit)[["agent", "n_traces", "flagged", "ungrounded", "not_recovered"]].values.tolist()
    [['a', 2, 0.5, 0.5, 0.0], ['b', 1, 1.0, 1.0, 1.0]]
    """
    parts = audit["flags"].fillna("").str.split(",")
    cols = {f: parts.map(lambda p, f=f: f in p) for f in FLAGS}
    frame = pd.DataFrame(
        {by: audit[by], "flagged": audit["flags"].fillna("") != "", **cols, "mean_score": audit["score"]}
    )
    g = frame.groupby(by, sort=False)
    out = g[["flagged", *FLAGS, "mean_score"]].mean().astype(float)
    out.insert(0, "n_traces", g.size())
    return out.reset_index()


def worst_traces(audit: pd.DataFrame, n: int = 5, *, by: str | None = "agent") -> pd.DataFrame:
    """The ``n`` flagged traces with the highest severity score, per group (or overall with ``by=None``).

    Ties in score keep the audit's trace order. Unflagged traces (score 0) are never listed, so a
    group may have fewer than ``n`` rows.

    Examples
    --------
    >>> audit = pd.DataFrame({"trace_id": ["x", "y", "z"], "agent": ["a", "a", "a"], "score": [1.0, 2.5, 0.0]})
    >>> worst_traces(audit, 5)["trace_id"].tolist()
    ['y', 'x']
    """
    if int(n) < 0:
        raise UserInputError(f"n must be >= 0, got {n!r}")
    flagged = audit[audit["score"] > 0].sort_values("score", ascending=False, kind="stable")
    if by is None:
        return flagged.head(n).reset_index(drop=True)
    group_order = {g: i for i, g in enumerate(pd.unique(audit[by]))}
    flagged = flagged.assign(_g=flagged[by].map(group_order)).sort_values("_g", kind="stable")
    return flagged.groupby(by, sort=False).head(n).drop(columns="_g").reset_index(drop=True)
