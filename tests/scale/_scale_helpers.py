"""Helpers of the scale tests: a small chunk function and a corpus of the sample traces."""

import copy
import json

import pandas as pd

from seekbench.data import sample_traces_path
from seekbench.traces import read_traces

SAMPLE = read_traces(sample_traces_path()).traces


def per_trace(steps: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """A small chunk function: steps of each kind and the trace table's own numbers, per trace."""
    kinds = pd.crosstab(steps["trace_id"], steps["kind"]).reindex(traces["trace_id"], fill_value=0)
    out = traces[["trace_id", "agent", "n_steps", "answer_turn", "last_turn", "em"]].reset_index(drop=True)
    for k in ("search", "search_result", "reasoning", "answer"):
        out[k] = kinds[k].to_numpy() if k in kinds else 0
    return out


def corpus(n_copies: int = 3) -> list[dict]:
    """The sample traces, ``n_copies`` times with fresh ids (a few hundred steps)."""
    return [dict(copy.deepcopy(t), trace_id=f"{t['trace_id']}-{k}") for k in range(n_copies) for t in SAMPLE]


def write_jsonl(path, records) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
