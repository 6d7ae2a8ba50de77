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

from typing import Unpack

import numpy as np
import pandas as pd

from ._evidence import (
    ANSWER,
    OBSERVATION,
    observation_evidence_of,
    step_kinds,
    trace_evidence_unknown,
    trace_segments,
    turn_grid,
)
from ._options import (
    DECISION_POINTS,
    MAPPING_OPTIONS,
    SCOPE_OPTIONS,
    EvidenceKeywords,
    EvidenceMapping,
    EvidenceOptions,
    EvidenceScope,
    check_option,
    evidence_keywords,
)
from ._segments import Segments
from ._shared import memo


def steps_of(steps: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``steps`` whose trace is in ``traces`` (``steps`` itself when that is all of them)."""
    seg = trace_segments(steps)
    ids = traces["trace_id"].to_numpy()
    if (seg.codes < 0).any():
        return steps[steps["trace_id"].isin(ids)]
    keep = pd.Index(seg.uniques).isin(ids)
    if keep.all():
        return steps
    return steps[keep[seg.codes]]


def held_evidence(
    steps: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum", evidence_scope: EvidenceScope = "cumulative"
) -> pd.Series:
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
    check_option("evidence_mapping", evidence_mapping, MAPPING_OPTIONS)
    check_option("evidence_scope", evidence_scope, SCOPE_OPTIONS)
    e = observation_evidence_of(steps, evidence_mapping)
    seg = trace_segments(steps)
    if evidence_scope == "cumulative":
        held = seg.cummax_small(np.where(np.isnan(e), 0.0, e))
    else:
        held = seg.ffill(e)
        held = np.where(np.isnan(held), 0.0, held)
    return pd.Series(held, index=steps.index).astype(int).rename("E")


def observation_label_counts(
    steps: pd.DataFrame, traces: pd.DataFrame, *, evidence_mapping: EvidenceMapping = "sum"
) -> pd.DataFrame:
    """Per trace: observations and unlabeled observations (E could not be computed).

    Returns a DataFrame indexed by ``trace_id`` (trace table order) with columns
    ``n_obs``, ``n_obs_unlabeled`` and ``all_unlabeled`` (it has observations and none is
    labeled: by spec section 2 its E is unknown and it is left out of every E-based number).
    """
    return memo(
        "observation_label_counts",
        (steps, traces),
        (evidence_mapping,),
        lambda: _label_counts(steps, traces, evidence_mapping),
    ).copy()


def _label_counts(steps: pd.DataFrame, traces: pd.DataFrame, evidence_mapping: EvidenceMapping) -> pd.DataFrame:
    ids = pd.Index(traces["trace_id"])
    obs = step_kinds(steps) == OBSERVATION
    e = observation_evidence_of(steps, evidence_mapping)
    seg = trace_segments(steps)
    pos = pd.Index(seg.uniques).get_indexer(ids)
    found = pos >= 0
    n_obs, n_unl = (
        np.where(found, seg.count(m)[np.maximum(pos, 0)] if seg.n else 0, 0) for m in (obs, obs & np.isnan(e))
    )
    out = pd.DataFrame({"n_obs": n_obs.astype(np.int64), "n_obs_unlabeled": n_unl.astype(np.int64)}, index=ids)
    out["all_unlabeled"] = (out["n_obs"] > 0) & (out["n_obs_unlabeled"] == out["n_obs"])
    return out


def evidence_labeled(counts: pd.DataFrame) -> bool:
    """Whether a group's evidence states can be known: it has no observation, or a labeled one.

    A group whose observations are all unlabeled (e.g. a corpus without labels) has no
    evidence information at all; evidence-dependent numbers are then NaN, never computed
    from the default E = 0. Otherwise unlabeled observations keep the previous state and
    are counted (spec section 2).
    """
    n_obs = int(counts["n_obs"].sum())
    return n_obs == 0 or int(counts["n_obs_unlabeled"].sum()) < n_obs


def turn_points(steps: pd.DataFrame, traces: pd.DataFrame, ev: EvidenceOptions) -> pd.DataFrame:
    """Turn decision points of every trace of ``traces``: columns ``trace_id, t, E, A`` (E under ``ev``).

    Turns 0 .. answer turn, or every turn of a trace without an answer (a trace without
    steps has the single point t = 0, E = 0, A = 0). A trace whose E is unknown (observations,
    none labeled: spec section 2) has no decision point.
    """
    ids = traces["trace_id"].to_numpy()
    grid = turn_grid(steps, mapping=ev["evidence_mapping"], scope=ev["evidence_scope"])
    # Trace j of ``traces``: its grid cells (steps of other traces are ignored), or one point
    # t = 0, E = 0 when it has no steps.
    code = pd.Index(grid.seg.uniques).get_indexer(ids) if grid.seg.n else np.full(len(ids), -1)
    has = code >= 0
    offsets = np.append(grid.offsets, grid.offsets[-1])  # a valid end for every clipped code
    start = np.where(has, offsets[np.maximum(code, 0)], 0)
    size = np.where(has, offsets[np.maximum(code, 0) + 1] - start, 1)
    owner = np.repeat(np.arange(len(ids)), size)
    within = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
    cell = np.repeat(start, size) + within
    real = np.repeat(has, size)
    t = np.where(real, grid.cell_turn[np.where(real, cell, 0)] if len(grid.E) else 0, 0).astype(np.int64)
    e = np.where(real, grid.E[np.where(real, cell, 0)] if len(grid.E) else 0, 0).astype(np.int64)
    answered = traces["answered"].astype(bool).to_numpy()[owner]
    answer_turn = traces["answer_turn"].to_numpy(dtype=float)[owner]
    unknown = has & trace_evidence_unknown(steps, ev["evidence_mapping"])[np.maximum(code, 0)] if grid.seg.n else has
    keep = (~answered | (t <= answer_turn)) & ~unknown[owner]
    a = (answered & (t == answer_turn)).astype(np.int64)
    return pd.DataFrame({"trace_id": ids[owner][keep].astype(object), "t": t[keep], "E": e[keep], "A": a[keep]})


def _rows_of_unknown(steps: pd.DataFrame, mapping: EvidenceMapping) -> np.ndarray:
    """Per step row: its trace's E is unknown (:func:`~seekbench.metrics._evidence.evidence_unknown`)."""
    seg = trace_segments(steps)
    if not seg.n:
        return np.zeros(len(steps), dtype=bool)
    return (seg.codes >= 0) & trace_evidence_unknown(steps, mapping)[np.maximum(seg.codes, 0)]


def step_points(steps: pd.DataFrame, traces: pd.DataFrame, ev: EvidenceOptions) -> pd.DataFrame:
    """Step decision points: every step up to the first answer step; columns ``trace_id, t, E, A``.

    ``t`` is the step's position in its trace; E is :func:`held_evidence`. A trace whose E is
    unknown (observations, none labeled: spec section 2) has no decision point.
    """
    sub = steps_of(steps, traces)
    held = held_evidence(sub, **ev)
    is_ans = (step_kinds(sub) == ANSWER).astype(np.int64)
    answers_before = Segments(sub["trace_id"]).cumsum(is_ans) - is_ans
    keep = (answers_before == 0) & ~_rows_of_unknown(sub, ev["evidence_mapping"])
    out = pd.DataFrame(
        {
            "trace_id": sub["trace_id"].to_numpy(),
            "t": sub["pos"].to_numpy().astype(int),
            "E": held.to_numpy(),
            "A": is_ans,
        }
    )
    return out[keep].reset_index(drop=True)


def decision_point_table(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    decision_points: str = "turn",
    **evidence: Unpack[EvidenceKeywords],
) -> pd.DataFrame:
    """The decision points of every trace of ``traces`` (see the module docstring).

    Parameters
    ----------
    steps, traces : DataFrame
        The step and trace tables of ``build_tables``.
    decision_points : {"turn", "step"}
    **evidence
        ``evidence_mapping`` ({"sum", "sufficiency_first"}) and ``evidence_scope``
        ({"cumulative", "latest"}).

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
    ev = evidence_keywords("decision_point_table", evidence)
    return (turn_points if decision_points == "turn" else step_points)(steps, traces, ev)


def decision_counts(points: pd.DataFrame, trace_ids: pd.Index) -> pd.DataFrame:
    """Per trace: decision points ``n0, n1, n2`` and answers ``a0, a1, a2`` by E (trace order)."""
    idx = pd.Index(trace_ids)
    if not idx.is_unique:
        cols = {}
        for k in range(3):
            g = points[points["E"] == k].groupby("trace_id", sort=False)["A"]
            cols[f"n{k}"] = g.size().reindex(idx, fill_value=0)
            cols[f"a{k}"] = g.sum().reindex(idx, fill_value=0)
        return pd.DataFrame({c: cols[c] for c in ("n0", "n1", "n2", "a0", "a1", "a2")}, index=idx).astype(float)
    code = idx.get_indexer(points["trace_id"])
    e = points["E"].to_numpy()
    a = points["A"].to_numpy(dtype=float)
    out = {}
    for k in range(3):
        rows = (code >= 0) & (e == k)
        out[f"n{k}"] = np.bincount(code[rows], minlength=len(idx)).astype(float)
        out[f"a{k}"] = np.bincount(code[rows], weights=a[rows], minlength=len(idx)).astype(float)
    return pd.DataFrame({c: out[c] for c in ("n0", "n1", "n2", "a0", "a1", "a2")}, index=idx)
