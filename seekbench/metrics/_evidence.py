"""Evidence state E (spec section 2): per observation, per turn, and held at each step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._options import MAPPING_OPTIONS, SCOPE_OPTIONS, EvidenceMapping, EvidenceScope, check_option
from ._segments import Segments
from ._shared import memo


def observation_evidence(clarity: pd.Series, sufficiency: pd.Series, *, mapping: EvidenceMapping = "sum") -> pd.Series:
    """E of single observations from their clarity and sufficiency labels.

    ``mapping="sum"`` (default, Def. 3.1): E = C + Q with C = 1 if Clear, Q = 1 if Sufficient.
    ``mapping="sufficiency_first"`` (released code): E = 2 if Sufficient and Clear, 1 if
    Sufficient and Unclear, 0 if Insufficient (clarity then not needed).

    Returns a float Series in {0, 1, 2}, NaN where the labels needed are missing.

    Examples
    --------
    >>> observation_evidence(pd.Series(["Clear", "Unclear"]), pd.Series(["Insufficient", "Sufficient"])).tolist()
    [1.0, 1.0]
    >>> observation_evidence(pd.Series(["Clear", "Unclear"]), pd.Series(["Insufficient", "Sufficient"]),
    ...                      mapping="sufficiency_first").tolist()
    [0.0, 1.0]
    """
    check_option("evidence_mapping", mapping, MAPPING_OPTIONS)
    c = clarity.map({"Clear": 1.0, "Unclear": 0.0}).astype(float)
    q = sufficiency.map({"Sufficient": 1.0, "Insufficient": 0.0}).astype(float)
    if mapping == "sum":
        return c + q
    e = pd.Series(np.where(q == 0.0, 0.0, np.where(q == 1.0, 1.0 + c, np.nan)), index=clarity.index)
    return e


@dataclass
class TurnGrid:
    """E_{i,t} on the grid of every trace i and turn t = 0 .. last turn of i, as arrays.

    Cells are ordered by trace (first appearance in the step table) then turn; trace k's
    cells are ``offsets[k]:offsets[k + 1]``. ``step_cell`` is each step row's cell (-1 for
    a row without trace id).
    """

    seg: Segments
    offsets: np.ndarray
    step_cell: np.ndarray
    cell_trace: np.ndarray
    cell_turn: np.ndarray
    e_obs: np.ndarray
    unlabeled: np.ndarray
    E: np.ndarray

    def first_turn_at(self, k: int) -> np.ndarray:
        """Per trace: the first turn with E = k (NaN if never)."""
        hit = np.flatnonzero(self.E == k)
        out = np.full(self.seg.n, np.nan)
        found, first = np.unique(self.cell_trace[hit], return_index=True)
        out[found] = self.cell_turn[hit[first]]
        return out


#: Codes of :func:`step_kinds` (-1: a kind outside the ontology).
REASONING, SEARCH, OBSERVATION, ANSWER, OTHER = range(5)
_KINDS = ("reasoning", "search", "search_result", "answer", "other")


def step_kinds(steps: pd.DataFrame) -> np.ndarray:
    """Each step's kind as a small integer (:data:`REASONING` .. :data:`OTHER`), shared within ``shared_work``.

    One hash pass over the ``kind`` strings instead of one string comparison per use.
    """
    return memo("step_kinds", (steps,), (), lambda: pd.Categorical(steps["kind"], categories=_KINDS).codes)


def observation_evidence_of(steps: pd.DataFrame, mapping: EvidenceMapping) -> np.ndarray:
    """E of each step's own observation (NaN for other steps and unlabeled observations), shared
    within ``shared_work``; the caller must not modify it."""
    return memo("obs_evidence", (steps,), (mapping,), lambda: _obs_evidence(steps, mapping))


def _obs_evidence(steps: pd.DataFrame, mapping: EvidenceMapping) -> np.ndarray:
    is_obs = step_kinds(steps) == OBSERVATION
    e = np.full(len(steps), np.nan)
    if is_obs.any():
        e[is_obs] = observation_evidence(
            steps["clarity"][is_obs], steps["sufficiency"][is_obs], mapping=mapping
        ).to_numpy(dtype=float)
    return e


def evidence_unknown(n_obs: np.ndarray, n_obs_unlabeled: np.ndarray) -> np.ndarray:
    """Per trace: its E is unknown (spec section 2), it has observations and none of them is labeled.

    Such a trace is left out of every E-based number (E at the answer, CE, ERF, the overconfident
    and overcautious rates, RQI by evidence state) and counted, per agent, as "E unknown: no
    labeled observation". A trace without any observation is not unknown: its E is 0 throughout.

    Examples
    --------
    >>> evidence_unknown(np.array([0, 2, 2]), np.array([0, 1, 2])).tolist()
    [False, False, True]
    """
    n_obs = np.asarray(n_obs, dtype=float)
    return (n_obs > 0) & (np.asarray(n_obs_unlabeled, dtype=float) == n_obs)


def trace_evidence_unknown(steps: pd.DataFrame, mapping: EvidenceMapping) -> np.ndarray:
    """:func:`evidence_unknown` of each trace of ``steps`` (in :func:`trace_segments` order), shared
    within ``shared_work``; the caller must not modify it."""
    return memo("evidence_unknown", (steps,), (mapping,), lambda: _trace_unknown(steps, mapping))


def _trace_unknown(steps: pd.DataFrame, mapping: EvidenceMapping) -> np.ndarray:
    seg = trace_segments(steps)
    if not seg.n:
        return np.zeros(0, dtype=bool)
    obs = step_kinds(steps) == OBSERVATION
    e = observation_evidence_of(steps, mapping)
    return evidence_unknown(seg.count(obs), seg.count(obs & np.isnan(e)))


def trace_segments(steps: pd.DataFrame) -> Segments:
    """The traces of a step table as :class:`Segments` (shared within ``shared_work``)."""
    return memo("segments", (steps,), (), lambda: Segments(steps["trace_id"]))


def turn_grid(
    steps: pd.DataFrame, *, mapping: EvidenceMapping = "sum", scope: EvidenceScope = "cumulative"
) -> TurnGrid:
    """The arrays behind :func:`evidence_by_turn` (one pass of numpy, no pandas groupby)."""
    check_option("evidence_scope", scope, SCOPE_OPTIONS)
    check_option("evidence_mapping", mapping, MAPPING_OPTIONS)
    return memo("turn_grid", (steps,), (mapping, scope), lambda: _turn_grid(steps, mapping, scope))


def _turn_grid(steps: pd.DataFrame, mapping: EvidenceMapping, scope: EvidenceScope) -> TurnGrid:
    seg = trace_segments(steps)
    turn = steps["turn"].to_numpy().astype(np.int64)
    last = seg.max_int(turn)
    sizes = np.where(last >= 0, last + 1, 0)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n_cells = int(offsets[-1])
    cell_trace = np.repeat(np.arange(seg.n, dtype=np.int64), sizes)
    cell_turn = np.arange(n_cells, dtype=np.int64) - offsets[:-1][cell_trace] if n_cells else np.zeros(0, np.int64)
    step_cell = (
        np.where(seg.codes >= 0, offsets[:-1][np.maximum(seg.codes, 0)] + turn, -1)
        if seg.n
        else np.full(len(steps), -1, dtype=np.int64)
    )

    is_obs = (step_kinds(steps) == OBSERVATION) & (seg.codes >= 0)
    rows = np.flatnonzero(is_obs)
    e = observation_evidence_of(steps, mapping)[rows]
    cells = step_cell[rows]
    unlabeled = np.bincount(cells, weights=np.isnan(e), minlength=n_cells).astype(np.int64)
    e_obs = np.full(n_cells, np.nan)
    labeled = ~np.isnan(e)
    if scope == "cumulative":
        np.fmax.at(e_obs, cells[labeled], e[labeled])  # max over the turn's labeled observations
    else:  # the turn's last labeled observation in row order
        c, v = cells[labeled], e[labeled]
        order = np.lexsort((np.arange(len(c)), c))
        c, v = c[order], v[order]
        is_last = np.r_[c[1:] != c[:-1], True] if len(c) else np.zeros(0, bool)
        e_obs[c[is_last]] = v[is_last]
    cell_seg = Segments.from_codes(cell_trace, seg.n)
    if scope == "cumulative":
        held = cell_seg.cummax_small(np.where(np.isnan(e_obs), 0.0, e_obs))
    else:
        held = cell_seg.ffill(e_obs)
        held = np.where(np.isnan(held), 0.0, held)
    return TurnGrid(seg, offsets, step_cell, cell_trace, cell_turn, e_obs, unlabeled, held.astype(np.int64))


def evidence_by_turn(
    steps: pd.DataFrame, *, mapping: EvidenceMapping = "sum", scope: EvidenceScope = "cumulative"
) -> pd.DataFrame:
    """E_{i,t} for every trace i and turn t = 0 .. last turn of the trace.

    ``scope="cumulative"`` (default): max of E over observations up to turn t.
    ``scope="latest"``: E of turn t's own observation. Before the first observation E = 0;
    an observation with missing labels keeps the previous state.

    Returns
    -------
    DataFrame with columns ``trace_id, turn, E`` (int 0..2), ``e_obs`` (E of the turn's own
    observation, NaN if none or unlabeled) and ``unlabeled_obs`` (observations at the turn
    whose E could not be computed).
    """
    grid = turn_grid(steps, mapping=mapping, scope=scope)
    return pd.DataFrame(
        {
            "trace_id": grid.seg.uniques[grid.cell_trace],
            "turn": grid.cell_turn,
            "E": grid.E,
            "e_obs": grid.e_obs,
            "unlabeled_obs": grid.unlabeled,
        }
    )


def step_evidence(
    steps: pd.DataFrame, *, mapping: EvidenceMapping = "sum", scope: EvidenceScope = "cumulative"
) -> pd.Series:
    """E held at each step: E_{i,t} at the step's turn t (aligned to ``steps.index``).

    For reasoning and answer steps, which follow turn t's observation, this is the state
    the agent holds when it reasons or answers.
    """
    grid = turn_grid(steps, mapping=mapping, scope=scope)
    cell = grid.step_cell
    if (cell >= 0).all():
        values = grid.E[cell]
    else:
        values = np.where(cell >= 0, grid.E[np.maximum(cell, 0)] if len(grid.E) else 0, np.nan)
    return pd.Series(values, index=steps.index, name="E")
