"""The tidy step table and trace table every metric reads (one pass over the traces).

Step table: one row per step in trace order, columns

    trace_id, agent, dataset, question_id, step, pos, kind, turn, query, query_norm,
    visit_id, n_documents, reasoning_type, grounding, search_type, clarity, sufficiency

``turn`` follows spec section 1: a tool call and its observation share turn t
(t counts tool calls); reasoning and answer steps belong to the turn whose
observation they follow (0 before the first observation). Label columns hold
canonical values or None (missing, never a default).

Trace table: one row per trace, columns

    trace_id, agent, dataset, question_id, question, gold_answers, final_answer,
    answered, answer_pos, answer_turn, last_turn, correct, correct_source, n_steps,
    em, f1
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ._ontology import LABEL_FIELDS
from ._normalize import normalize_query
from ._answers import exact_match_score, f1_score_tokens

STEP_COLUMNS = ["trace_id", "agent", "dataset", "question_id", "step", "pos", "kind", "turn", "query",
                "query_norm", "visit_id", "n_documents", *LABEL_FIELDS]
TRACE_COLUMNS = ["trace_id", "agent", "dataset", "question_id", "question", "gold_answers", "final_answer",
                 "answered", "answer_pos", "answer_turn", "last_turn", "correct", "correct_source", "n_steps",
                 "em", "f1"]

_VISIT_TOOLS = ("visit", "open", "browse", "fetch", "read", "click")


def _visit_id(step: dict) -> str | None:
    if step.get("url"):
        return step["url"]
    tool = (step.get("tool") or "").lower()
    if any(t in tool for t in _VISIT_TOOLS) and step.get("query"):
        return step["query"]
    return None


def build_tables(traces: Iterable[dict], labels: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build ``(steps, traces)`` DataFrames from canonical traces.

    Parameters
    ----------
    traces : iterable of dict
        Canonical traces (schemas/trace.schema.json).
    labels : DataFrame, optional
        An annotation set's records (columns ``trace_id, step, field, value``).
        When None, the traces' inline labels are used.

    Returns
    -------
    steps, traces : DataFrame
        See the module docstring for the columns.
    """
    cols: dict[str, list] = {c: [] for c in STEP_COLUMNS}
    trows: dict[str, list] = {c: [] for c in TRACE_COLUMNS}
    use_inline = labels is None
    for tr in traces:
        tid, agent, ds, qid = tr["trace_id"], tr["agent"], tr.get("dataset"), tr.get("question_id")
        n_calls = n_obs = 0
        answer_pos = answer_turn = None
        turn = obs_turn = 0
        steps = tr.get("steps", [])
        for pos, st in enumerate(steps):
            kind = st["kind"]
            if kind == "search":
                n_calls += 1
                turn = max(n_calls, n_obs)
            elif kind == "search_result":
                n_obs += 1
                turn = obs_turn = max(n_calls, n_obs)
            else:
                turn = obs_turn
            if kind == "answer" and answer_pos is None:
                answer_pos, answer_turn = pos, turn
            q = st.get("query")
            cols["trace_id"].append(tid)
            cols["agent"].append(agent)
            cols["dataset"].append(ds)
            cols["question_id"].append(qid)
            cols["step"].append(st["index"])
            cols["pos"].append(pos)
            cols["kind"].append(kind)
            cols["turn"].append(turn)
            cols["query"].append(q)
            cols["query_norm"].append(normalize_query(q) if kind == "search" and isinstance(q, str) else None)
            cols["visit_id"].append(_visit_id(st) if kind == "search" else None)
            cols["n_documents"].append(len(st.get("documents") or ()))
            inline = st.get("labels") or {} if use_inline else {}
            for f in LABEL_FIELDS:
                cols[f].append(inline.get(f))
        correct = tr.get("correct") or {}
        gold = tr.get("gold_answers") or []
        final = tr.get("final_answer")
        em = exact_match_score(final, gold) if final is not None and gold else np.nan
        f1 = f1_score_tokens(final, gold) if final is not None and gold else np.nan
        value = correct.get("value")
        source = correct.get("source") if value is not None else None
        if value is None and final is not None and gold:
            value, source = bool(em), "em"
        trows["trace_id"].append(tid)
        trows["agent"].append(agent)
        trows["dataset"].append(ds)
        trows["question_id"].append(qid)
        trows["question"].append(tr.get("question"))
        trows["gold_answers"].append(list(gold))
        trows["final_answer"].append(final)
        trows["answered"].append(answer_pos is not None)
        trows["answer_pos"].append(np.nan if answer_pos is None else answer_pos)
        trows["answer_turn"].append(np.nan if answer_turn is None else answer_turn)
        trows["last_turn"].append(turn if steps else 0)
        trows["correct"].append(value)
        trows["correct_source"].append(source)
        trows["n_steps"].append(len(steps))
        trows["em"].append(em)
        trows["f1"].append(f1)
    step_df = pd.DataFrame(cols, columns=STEP_COLUMNS)
    step_df["step"] = step_df["step"].astype("int64")
    step_df["pos"] = step_df["pos"].astype("int64")
    step_df["turn"] = step_df["turn"].astype("int64")
    step_df["n_documents"] = step_df["n_documents"].astype("int64")
    trace_df = pd.DataFrame(trows, columns=TRACE_COLUMNS)
    # Correctness is three-valued (True, False, unknown): keep Python objects, never a bool dtype.
    trace_df["correct"] = pd.Series(trows["correct"], dtype=object)
    if labels is not None:
        step_df = attach_labels(step_df, labels)
    return step_df, trace_df


def attach_labels(steps: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Replace the label columns of ``steps`` by the values of an annotation set.

    ``labels`` has one row per (trace_id, step, field) with ``value`` canonical or None.
    Labels for steps that do not exist are ignored here (validation reports them).
    """
    out = steps.drop(columns=[f for f in LABEL_FIELDS if f in steps.columns])
    if len(labels):
        wide = (labels[labels["field"].isin(LABEL_FIELDS)]
                .drop_duplicates(["trace_id", "step", "field"], keep="last")
                .pivot(index=["trace_id", "step"], columns="field", values="value"))
        wide = wide.reindex(columns=list(LABEL_FIELDS)).reset_index()
        out = out.merge(wide, on=["trace_id", "step"], how="left")
    else:
        for f in LABEL_FIELDS:
            out[f] = None
    for f in LABEL_FIELDS:
        out[f] = out[f].astype(object).where(out[f].notna(), None)
    return out[STEP_COLUMNS]
