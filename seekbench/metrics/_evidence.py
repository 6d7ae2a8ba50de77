"""Evidence state E (spec section 2): per observation, per turn, and held at each step."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .._errors import UserInputError

EvidenceMapping = Literal["sum", "sufficiency_first"]
EvidenceScope = Literal["cumulative", "latest"]
_MAPPINGS = ("sum", "sufficiency_first")
_SCOPES = ("cumulative", "latest")


def check_option(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """The one error wording for an unknown option value (no silent fallback)."""
    if value not in allowed:
        raise UserInputError(f"unknown {name} {value!r}; choose one of: {', '.join(allowed)}")


def observation_evidence(clarity: pd.Series, sufficiency: pd.Series, *,
                         mapping: EvidenceMapping = "sum") -> pd.Series:
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
    check_option("evidence_mapping", mapping, _MAPPINGS)
    c = clarity.map({"Clear": 1.0, "Unclear": 0.0}).astype(float)
    q = sufficiency.map({"Sufficient": 1.0, "Insufficient": 0.0}).astype(float)
    if mapping == "sum":
        return c + q
    e = pd.Series(np.where(q == 0.0, 0.0, np.where(q == 1.0, 1.0 + c, np.nan)), index=clarity.index)
    return e


def evidence_by_turn(steps: pd.DataFrame, *, mapping: EvidenceMapping = "sum",
                     scope: EvidenceScope = "cumulative") -> pd.DataFrame:
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
    check_option("evidence_scope", scope, _SCOPES)
    obs = steps.loc[steps["kind"] == "search_result", ["trace_id", "turn"]].copy()
    obs["e"] = observation_evidence(steps.loc[obs.index, "clarity"], steps.loc[obs.index, "sufficiency"],
                                    mapping=mapping)
    obs["unlabeled"] = obs["e"].isna()
    per_turn = obs.groupby(["trace_id", "turn"], sort=False).agg(
        e_obs=("e", "last" if scope == "latest" else "max"), unlabeled_obs=("unlabeled", "sum"))
    last = steps.groupby("trace_id", sort=False)["turn"].max()
    grid = pd.DataFrame({"trace_id": np.repeat(last.index.to_numpy(), last.to_numpy() + 1),
                         "turn": np.concatenate([np.arange(n + 1) for n in last.to_numpy()])
                         if len(last) else np.array([], dtype=int)})
    grid = grid.merge(per_turn.reset_index(), on=["trace_id", "turn"], how="left")
    grid["unlabeled_obs"] = grid["unlabeled_obs"].fillna(0).astype(int)
    g = grid.groupby("trace_id", sort=False)["e_obs"]
    if scope == "cumulative":
        e = grid["e_obs"].fillna(0.0).groupby(grid["trace_id"], sort=False).cummax()
    else:
        e = g.ffill().fillna(0.0)
    grid["E"] = e.astype(int)
    return grid[["trace_id", "turn", "E", "e_obs", "unlabeled_obs"]]


def step_evidence(steps: pd.DataFrame, *, mapping: EvidenceMapping = "sum",
                  scope: EvidenceScope = "cumulative") -> pd.Series:
    """E held at each step: E_{i,t} at the step's turn t (aligned to ``steps.index``).

    For reasoning and answer steps, which follow turn t's observation, this is the state
    the agent holds when it reasons or answers.
    """
    ebt = evidence_by_turn(steps, mapping=mapping, scope=scope)
    merged = steps[["trace_id", "turn"]].merge(ebt[["trace_id", "turn", "E"]], on=["trace_id", "turn"], how="left")
    return pd.Series(merged["E"].to_numpy(), index=steps.index, name="E")
