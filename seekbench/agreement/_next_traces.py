"""Which unlabeled traces a human should label next, and in what order (issue 30, item 3b).

Each unlabeled trace gets an expected number of disagreements: on each step the judges
labeled (in the planned fields), the chance that the reference label will differ from at
least one judge's. Where the judges differ among themselves that chance is 1; where they
agree on a label b, it is the share of the pilot's items with that same unanimous b on
which the reference said otherwise (Laplace-smoothed). A trace is "high" when its expected
share of disagreements is above the median of all traces, else "low".

``order="stratified"`` (default) ranks so that every top-N is a stratified random sample:
strata are agent x high/low, each filled in proportion to its share of all the traces
(the traces already labeled count), high first on a tie, random (seeded) within a
stratum. The kappa that ``seekbench agree`` computes on the labeled traces then stays an
unbiased picture of the corpus, whatever the agents' shares in the pilot.
``order="disagreement"`` takes the agents in proportion but, within an agent, the traces
with the most expected disagreements first: fastest to find the judges' errors, but kappa
measured on such a pick is biased low. On the 190 SeekBench traces (rules judge,
grounding, pilots of 30 plus the next 40; ``scripts/bench/judge_plan_sim.py``) the mean
kappa was off the all-traces value by +0.002 (stratified), -0.003 (random) and -0.024
(disagreement), with the same spread for stratified and random (sd 0.055, 0.054): the
strata buy representativeness, not a narrower interval. ``order="random"``: a seeded
shuffle.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

import numpy as np
import pandas as pd

from ..labels import AnnotationSet
from ._strata import kind_column

ORDERS = ("stratified", "disagreement", "random")
#: The columns of the ranking.
RANK_COLUMNS = [
    "rank",
    "trace_id",
    "agent",
    "stratum",
    "items",
    "judge_disagreements",
    "expected_disagreements",
    "explorer",
]


def _judge_labels(judges: dict[str, AnnotationSet], strata: list[tuple[str, str]], kinds: dict) -> pd.DataFrame:
    """Wide: one row per (trace_id, step, field, kind) a judge labeled, one column per judge."""
    frames = []
    for name, s in judges.items():
        r = s.records
        r = r[r["value"].notna()][["trace_id", "step", "field", "value"]].copy()
        r["kind"] = kind_column(r, kinds).to_numpy()
        wanted = set(strata)
        r = r[np.array([(f, k) in wanted for f, k in zip(r["field"], r["kind"], strict=True)], dtype=bool)]
        frames.append(r.rename(columns={"value": name}).set_index(["trace_id", "step", "field", "kind"]))
    if not frames:
        return pd.DataFrame(columns=["trace_id", "step", "field", "kind"])
    wide = pd.concat(frames, axis=1).reset_index()
    wide["trace_id"] = wide["trace_id"].astype(str)
    return wide


def _item_chance(wide: pd.DataFrame, judge_names: list[str], reference: AnnotationSet) -> np.ndarray:
    """Per item of ``wide``: the chance the reference differs from at least one judge's label."""
    vals = wide[judge_names].to_numpy(dtype=object)
    present = [[v for v in row if isinstance(v, str)] for row in vals]
    unanimous = [p[0] if p and all(v == p[0] for v in p) else None for p in present]
    ref = reference.records
    ref_map = {
        (str(t), int(s), f): v
        for t, s, f, v in zip(ref["trace_id"], ref["step"], ref["field"], ref["value"], strict=True)
        if v is not None
    }
    keys = list(zip(wide["trace_id"], wide["step"].astype(int), wide["field"], strict=True))
    # the pilot's rate of reference disagreement per (field, kind, unanimous label)
    hits: dict[tuple, list[int]] = {}
    for key, kind, lab in zip(keys, wide["kind"], unanimous, strict=True):
        rv = ref_map.get(key)
        if lab is None or rv is None:
            continue
        h = hits.setdefault((key[2], kind, lab), [0, 0])
        h[0] += rv != lab
        h[1] += 1
    out = np.empty(len(wide))
    for i, (key, kind, lab) in enumerate(zip(keys, wide["kind"], unanimous, strict=True)):
        if lab is None:
            out[i] = 1.0  # the judges differ: the reference differs from one of them
        else:
            d, n = hits.get((key[2], kind, lab), (0, 0))
            out[i] = (d + 1) / (n + 2)
    return out


def trace_disagreements(
    reference: AnnotationSet,
    judges: dict[str, AnnotationSet],
    traces: list[dict],
    strata: list[tuple[str, str]],
    kinds: dict,
) -> pd.DataFrame:
    """Per trace (in ``traces`` order): agent, judged items, items where judges differ, expected
    disagreements with the reference, and whether it is labeled by the reference already."""
    wide = _judge_labels(judges, strata, kinds)
    names = list(judges)
    per = pd.DataFrame({"trace_id": [str(t["trace_id"]) for t in traces]})
    per["agent"] = [str(t.get("agent") or "unknown") for t in traces]
    if len(wide):
        chance = _item_chance(wide, names, reference)
        vals = wide[names].to_numpy(dtype=object)
        differ = [len({v for v in row if isinstance(v, str)}) > 1 for row in vals]
        agg = (
            pd.DataFrame({"trace_id": wide["trace_id"], "chance": chance, "differ": differ})
            .groupby("trace_id")
            .agg(items=("chance", "size"), judge_disagreements=("differ", "sum"), expected=("chance", "sum"))
        )
    else:
        agg = pd.DataFrame(columns=["items", "judge_disagreements", "expected"])
    per = per.join(agg, on="trace_id")
    per["items"] = per["items"].fillna(0).astype(int)
    per["judge_disagreements"] = per["judge_disagreements"].fillna(0).astype(int)
    per["expected_disagreements"] = per["expected"].fillna(0.0).astype(float)
    rate = np.where(per["items"] > 0, per["expected_disagreements"] / per["items"].clip(lower=1), np.nan)
    median = np.nanmedian(rate) if np.isfinite(rate).any() else np.nan
    per["level"] = np.where(np.isfinite(rate) & (rate > median), "high", "low")
    labeled = set(reference.records["trace_id"].astype(str))
    per["labeled"] = per["trace_id"].isin(labeled)
    return per.drop(columns="expected")


def _proportional(per: pd.DataFrame, key: str, queues: dict[str, list[str]], first: set[str]) -> list[str]:
    """Draw from the strata's queues, each time the stratum furthest below its share of all traces
    (``per[key]`` names each trace's stratum; the traces labeled already count); on a tie a
    stratum in ``first``, then by name."""
    share = per.groupby(key).size() / len(per)
    have = per[per["labeled"]].groupby(key).size().reindex(share.index, fill_value=0).astype(float)
    total = float(have.sum())
    out: list[str] = []
    while any(queues.values()):
        # the largest deficit below the stratum's share, then a stratum in ``first``, then by name
        best_key = min(
            (h for h, q in queues.items() if q),
            key=lambda h: (-(share[h] * (total + 1) - have[h]), h not in first, h),
        )
        out.append(queues[best_key].pop(0))
        have[best_key] += 1
        total += 1
    return out


def rank_traces(
    per: pd.DataFrame,
    *,
    order: Literal["stratified", "disagreement", "random"] = "stratified",
    seed: int | None = 0,
    explorer: str = "explorer.html",
) -> pd.DataFrame:
    """The unlabeled traces of :func:`trace_disagreements`'s table, ranked (see the module)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    rng = np.random.default_rng(seed)
    per = per.assign(stratum=per["agent"] + " / " + per["level"])
    cand = per[~per["labeled"]].sort_values("trace_id").reset_index(drop=True)
    cand = cand.assign(shuffle=rng.permutation(len(cand)))
    if order == "random":
        ids = cand.sort_values("shuffle")["trace_id"].tolist()
    else:
        key = "stratum" if order == "stratified" else "agent"
        if order == "stratified":  # random within a stratum: the pick stays representative
            cand = cand.sort_values("shuffle")
        else:
            cand = cand.sort_values(["expected_disagreements", "shuffle"], ascending=[False, True])
        queues = {h: cand.loc[cand[key] == h, "trace_id"].tolist() for h in per[key].unique()}
        first = {h for h in queues if h.endswith(" / high")}
        ids = _proportional(per, key, queues, first)
    by_id = cand.set_index("trace_id")
    out = by_id.loc[ids].reset_index()
    out["rank"] = np.arange(1, len(out) + 1)
    out["explorer"] = [f"{explorer}#trace={quote(t, safe='')}" for t in out["trace_id"]]
    return out[RANK_COLUMNS].reset_index(drop=True)
