"""The explorer's per-trace data: the compact index row of each trace and its detail record.

Both read the audit table's row of the trace (:func:`seekbench.metrics.trace_audit`); the detail
record adds every step with its turn, E after it, documents and label chips, and the trace's
disagreements (:mod:`._explorer_data` assembles the rest).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from ..metrics import FLAGS, evidence_by_turn, step_evidence

#: How a trace ends, as the index's ``rec`` column numbers it (``meta["recovery"]``).
RECOVERIES = ("recovered", "stopped", "cut_off")
_NO_ANSWER = -1


def clean(value):
    """JSON-safe scalars: NaN and NA become None, numpy scalars Python numbers."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def _step_evidence_after(
    steps: pd.DataFrame, mapping: Literal["sum", "sufficiency_first"], scope: Literal["cumulative", "latest"]
) -> pd.Series:
    """E after each step: E at its turn, except a tool call, which comes before its observation (E of turn - 1)."""
    e = step_evidence(steps, mapping=mapping, scope=scope)
    calls = steps["kind"].eq("search") & steps["turn"].gt(0)
    if calls.any():
        ebt = evidence_by_turn(steps, mapping=mapping, scope=scope)[["trace_id", "turn", "E"]]
        prev = steps.loc[calls, ["trace_id", "turn"]].assign(turn=lambda d: d["turn"] - 1).reset_index()
        prev = prev.merge(ebt, on=["trace_id", "turn"], how="left").set_index("index")["E"]
        e = e.astype(float)
        e.loc[prev.index] = prev.to_numpy(dtype=float)
    return e


def step_turns_and_evidence(
    steps: pd.DataFrame, mapping: Literal["sum", "sufficiency_first"], scope: Literal["cumulative", "latest"]
) -> dict[str, dict]:
    """trace id -> step index -> (turn, E after the step)."""
    e_after = _step_evidence_after(steps, mapping, scope)
    out = {}
    for tid, idx in steps.groupby("trace_id", sort=False).indices.items():
        out[str(tid)] = dict(
            zip(
                steps["step"].to_numpy()[idx].tolist(),
                zip(steps["turn"].to_numpy()[idx].tolist(), e_after.to_numpy()[idx].tolist(), strict=True),
                strict=True,
            )
        )
    return out


def trace_index(
    trace_dicts: Sequence[dict], rows: dict[str, dict], agents: list[str], last_turn: pd.Series, disagreements: dict
) -> dict[str, list]:
    """The index columns (:attr:`ExplorerData.index`), one entry per trace in ``trace_dicts`` order;
    ``rows`` are the audit rows by trace id, ``last_turn`` the traces' last turn by trace id."""
    agent_idx = {a: i for i, a in enumerate(agents)}
    index: dict[str, list] = {
        k: [] for k in ("id", "agent", "q", "correct", "E", "flags", "score", "steps", "turns", "rec", "dis")
    }
    for t in trace_dicts:
        tid = str(t["trace_id"])
        row = rows[tid]
        flags = [f for f in str(row["flags"]).split(",") if f]
        correct = clean(row["correct"])
        e_ans = clean(row["evidence_at_answer"])
        index["id"].append(tid)
        index["agent"].append(agent_idx[str(row["agent"])])
        index["q"].append(t.get("question") or "")
        index["correct"].append(-1 if correct is None else int(bool(correct)))
        index["E"].append(_NO_ANSWER if e_ans is None else int(e_ans))
        index["flags"].append(sum(1 << FLAGS.index(f) for f in flags))
        index["score"].append(round(float(row["score"]), 3))
        index["steps"].append(int(row["n_steps"]))
        index["turns"].append(int(clean(last_turn.get(tid)) or 0))
        index["rec"].append(RECOVERIES.index(row["recovery"]) if row["recovery"] in RECOVERIES else -1)
        index["dis"].append(len(disagreements.get(tid, [])))
    return index


def trace_details(
    trace_dicts: Sequence[dict], rows: dict[str, dict], step_info: dict, chips: dict, disagreements: dict
) -> Iterator[dict]:
    """Each trace's detail record, in ``trace_dicts`` order (see :meth:`ExplorerData.details`)."""
    for t in trace_dicts:
        tid = str(t["trace_id"])
        row = rows[tid]
        info = step_info.get(tid, {})
        yield {
            "id": tid,
            "agent": str(t.get("agent")),
            "question": t.get("question") or "",
            "gold": list(t.get("gold_answers") or []),
            "answer": t.get("final_answer"),
            "correct": clean(row["correct"]),
            "E": clean(row["evidence_at_answer"]),
            "recovery": row["recovery"],
            "recovery_turn": clean(row["recovery_turn"]),
            "flags": [f for f in str(row["flags"]).split(",") if f],
            "score": round(float(row["score"]), 3),
            "ungrounded_share": clean(row["ungrounded_share"]),
            "n_reasoning_labeled": int(row["n_reasoning_labeled"]),
            "repeated_queries": int(row["repeated_queries"]),
            "n_queries": int(row["n_queries"]),
            "steps": [_step_record(st, info, chips, tid) for st in t.get("steps") or []],
            "dis": disagreements.get(tid, []),
        }


def _step_record(st: dict, info: dict, chips: dict, tid: str) -> dict:
    """One step of a detail record: index, kind, turn, E after it, label chips, text and documents."""
    i = int(st["index"])
    turn, e = info.get(i, (None, None))
    e = clean(e)
    s = {
        "i": i,
        "kind": st.get("kind"),
        "turn": clean(turn),
        "E": None if e is None else int(e),
        "chips": chips.get((tid, i), []),
    }
    for key in ("text", "query", "tool", "url"):
        if st.get(key):
            s[key] = st[key]
    if st.get("documents"):
        s["docs"] = [
            {k: d[k] for k in ("rank", "title", "text", "url") if d.get(k) is not None} for d in st["documents"]
        ]
    return s
