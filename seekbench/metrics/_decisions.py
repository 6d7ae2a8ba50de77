"""Decision points of the answer decision (spec section 5) and which traces have evidence labels.

A decision point is a moment where the agent either answers or goes on; at each one we
record the evidence state E it holds (spec section 2) and A = 1 if it answers there.

- ``decision_points="turn"`` (default): turns t = 0 .. the answer turn (all turns of a
  trace that never answers). E at turn t is E_{i,t} from
  :func:`~seekbench.metrics._evidence.evidence_by_turn`: the evidence held after turn t's
  observation, when the agent decides whether to answer or call a tool again.
- ``decision_points="step"``: every step up to and including the first answer step, the
  answer step being the one with A = 1. The E held at a step is the state after every
  observation at or before it in the trace (the reading of the ERF's ``time="step"``):
  for reasoning, answer and ``other`` steps this is E at their turn (their turn's
  observation precedes them); a search step at turn t holds E_{t-1} (its observation has
  not arrived); a search_result step holds the state including its own observation (the
  moment it has arrived, before the agent's next step).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._evidence import (
    _MAPPINGS,
    _SCOPES,
    EvidenceMapping,
    EvidenceScope,
    check_option,
    evidence_by_turn,
    observation_evidence,
)

DECISION_POINTS = ("turn", "step")


def _obs_evidence(steps: pd.DataFrame, mapping: EvidenceMapping) -> pd.Series:
    """E of each step's own observation (NaN for non-observations and unlabeled ones)."""
    is_obs = steps["kind"] == "search_result"
    e = pd.Series(np.nan, index=steps.index)
    if is_obs.any():
        e[is_obs] = observation_evidence(steps.loc[is_obs, "clarity"], steps.loc[is_obs, "sufficiency"],
                                         mapping=mapping)
    return e


def held_evidence(steps: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum",
                  evidence_scope: EvidenceScope = "cumulative") -> pd.Series:
    """E held at each step: from the observations at or before it in its trace.

    ``cumulative``: max E over those observations; ``latest``: E of the last labeled one.
    0 before any labeled observation. Steps must be in trace order (as ``build_tables``
    gives them). Returns an int Series aligned to ``steps.index``; for reasoning and
    answer steps it equals :func:`~seekbench.metrics._evidence.step_evidence`.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["x"] * 5, "kind": ["search", "search_result", "search",
    ...                       "search_result", "answer"], "clarity": [None, "Clear", None, "Unclear", None],
    ...                       "sufficiency": [None, "Sufficient", None, "Insufficient", None]})
    >>> held_evidence(steps).tolist(), held_evidence(steps, evidence_scope="latest").tolist()
    ([0, 2, 2, 2, 2], [0, 2, 2, 0, 0])
    """
    check_option("evidence_mapping", evidence_mapping, _MAPPINGS)
    check_option("evidence_scope", evidence_scope, _SCOPES)
    e = _obs_evidence(steps, evidence_mapping)
    tid = steps["trace_id"]
    if evidence_scope == "cumulative":
        held = e.fillna(0.0).groupby(tid, sort=False).cummax()
    else:
        held = e.groupby(tid, sort=False).ffill().fillna(0.0)
    return held.astype(int).rename("E")


def evidence_coverage(steps: pd.DataFrame, traces: pd.DataFrame, *,
                      evidence_mapping: EvidenceMapping = "sum") -> pd.DataFrame:
    """Per trace: observations and unlabeled observations (E could not be computed).

    Returns a DataFrame indexed by ``trace_id`` (trace table order) with columns
    ``n_obs``, ``n_obs_unlabeled`` and ``all_unlabeled`` (it has observations and none is
    labeled: by spec section 2 its E stays 0 throughout).
    """
    ids = pd.Index(traces["trace_id"])
    obs = steps["kind"] == "search_result"
    e = _obs_evidence(steps, evidence_mapping)
    frame = pd.DataFrame({"trace_id": steps["trace_id"], "obs": obs.astype(int),
                          "unl": (obs & e.isna()).astype(int)})
    agg = frame.groupby("trace_id", sort=False)[["obs", "unl"]].sum().reindex(ids, fill_value=0)
    out = pd.DataFrame({"n_obs": agg["obs"].to_numpy(), "n_obs_unlabeled": agg["unl"].to_numpy()}, index=ids)
    out["all_unlabeled"] = (out["n_obs"] > 0) & (out["n_obs_unlabeled"] == out["n_obs"])
    return out


def evidence_labeled(coverage: pd.DataFrame) -> bool:
    """Whether a group's evidence states can be known: it has no observation, or a labeled one.

    A group whose observations are all unlabeled (e.g. a corpus without labels) has no
    evidence information at all; evidence-dependent numbers are then NaN, never computed
    from the default E = 0. Otherwise unlabeled observations keep the previous state and
    are counted (spec section 2).
    """
    n_obs = int(coverage["n_obs"].sum())
    return n_obs == 0 or int(coverage["n_obs_unlabeled"].sum()) < n_obs


def turn_points(steps: pd.DataFrame, traces: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum",
                evidence_scope: EvidenceScope = "cumulative") -> pd.DataFrame:
    """Turn decision points of every trace of ``traces``: columns ``trace_id, t, E, A``.

    Turns 0 .. answer turn, or every turn of a trace without an answer (a trace without
    steps has the single point t = 0, E = 0, A = 0).
    """
    ids = traces["trace_id"].to_numpy()
    sub = steps[steps["trace_id"].isin(ids)]
    ebt = evidence_by_turn(sub, mapping=evidence_mapping, scope=evidence_scope)[["trace_id", "turn", "E"]]
    missing = np.setdiff1d(ids, ebt["trace_id"].unique())
    if len(missing):
        ebt = pd.concat([ebt, pd.DataFrame({"trace_id": missing, "turn": 0, "E": 0})], ignore_index=True)
    info = traces[["trace_id", "answered", "answer_turn"]]
    dp = ebt.merge(info, on="trace_id", how="inner")
    answered = dp["answered"].astype(bool)
    dp = dp[~answered | (dp["turn"] <= dp["answer_turn"])]
    a = (dp["answered"].astype(bool) & (dp["turn"] == dp["answer_turn"])).astype(int)
    out = pd.DataFrame({"trace_id": dp["trace_id"].to_numpy(), "t": dp["turn"].to_numpy().astype(int),
                        "E": dp["E"].to_numpy().astype(int), "A": a.to_numpy()})
    order = pd.Index(ids).get_indexer(out["trace_id"])
    return out.iloc[np.lexsort((out["t"].to_numpy(), order))].reset_index(drop=True)


def step_points(steps: pd.DataFrame, traces: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum",
                evidence_scope: EvidenceScope = "cumulative") -> pd.DataFrame:
    """Step decision points: every step up to the first answer step; columns ``trace_id, t, E, A``.

    ``t`` is the step's position in its trace; E is :func:`held_evidence`.
    """
    sub = steps[steps["trace_id"].isin(traces["trace_id"].to_numpy())]
    held = held_evidence(sub, evidence_mapping=evidence_mapping, evidence_scope=evidence_scope)
    is_ans = (sub["kind"] == "answer").astype(int)
    answers_before = is_ans.groupby(sub["trace_id"], sort=False).cumsum() - is_ans
    keep = answers_before == 0
    out = pd.DataFrame({"trace_id": sub["trace_id"], "t": sub["pos"].astype(int), "E": held, "A": is_ans})[keep]
    return out.reset_index(drop=True)


def decision_point_table(steps: pd.DataFrame, traces: pd.DataFrame, *, decision_points: str = "turn",
                         evidence_mapping: EvidenceMapping = "sum",
                         evidence_scope: EvidenceScope = "cumulative") -> pd.DataFrame:
    """The decision points of every trace of ``traces`` (see the module docstring).

    Parameters
    ----------
    steps, traces : DataFrame
        The step and trace tables of ``build_tables``.
    decision_points : {"turn", "step"}
    evidence_mapping : {"sum", "sufficiency_first"}
    evidence_scope : {"cumulative", "latest"}

    Returns
    -------
    DataFrame with columns ``trace_id``, ``t`` (turn, or step position), ``E`` (0..2),
    ``A`` (1 at the answering point, else 0).

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["x"] * 3, "pos": [0, 1, 2], "turn": [1, 1, 1],
    ...                       "kind": ["search", "search_result", "answer"],
    ...                       "clarity": [None, "Clear", None], "sufficiency": [None, "Sufficient", None]})
    >>> traces = pd.DataFrame({"trace_id": ["x"], "answered": [True], "answer_turn": [1.0]})
    >>> decision_point_table(steps, traces)[["t", "E", "A"]].values.tolist()
    [[0, 0, 0], [1, 2, 1]]
    """
    check_option("decision_points", decision_points, DECISION_POINTS)
    fn = turn_points if decision_points == "turn" else step_points
    return fn(steps, traces, evidence_mapping=evidence_mapping, evidence_scope=evidence_scope)


def decision_counts(points: pd.DataFrame, trace_ids: pd.Index) -> pd.DataFrame:
    """Per trace: decision points ``n0, n1, n2`` and answers ``a0, a1, a2`` by E (trace order)."""
    idx = pd.Index(trace_ids)
    cols = {}
    for k in range(3):
        at_k = points[points["E"] == k]
        g = at_k.groupby("trace_id", sort=False)["A"]
        cols[f"n{k}"] = g.size().reindex(idx, fill_value=0)
        cols[f"a{k}"] = g.sum().reindex(idx, fill_value=0)
    return pd.DataFrame({c: cols[c] for c in ("n0", "n1", "n2", "a0", "a1", "a2")}, index=idx).astype(float)
