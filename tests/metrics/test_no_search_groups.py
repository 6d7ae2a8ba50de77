"""A group whose agents act and never search has no search metric: n/a with the reason, never 0.

Hand derivation: the one tau2 simulation kept (``sim-a1`` of the fixture ``tau_sim.json``) has no
search step and 6 ``other`` steps (two action calls, their two outputs, two user messages). Without
the rule its E would be 0 at every decision point and it answers, so CE and the overconfident rate
would read 1 and tool calls per trace 0. With a search step (``sim-a2``) in the group, or without any
``other`` step (closed-book), the numbers stay defined.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from seekbench.metrics import summarize
from seekbench.traces import build_tables, read_traces

TAU = Path(__file__).resolve().parents[1] / "fixtures" / "importers" / "shapes" / "tau_sim.json"
REASON = "(no search step: the tools these traces call act, they do not search)"


def _summary(traces: list[dict]):
    steps, table = build_tables(traces)
    return summarize(steps, table, n_boot=0)


def test_an_acting_group_has_no_search_metrics():
    traces = [t for t in read_traces(TAU).traces if t["trace_id"] == "sim-a1"]
    res = _summary(traces)
    (g,) = res.groups
    for key in ("ce", "overconfident", "overcautious", "tool_calls", "searches_before_answer", "recovered_by_8"):
        assert math.isnan(g[key]), key
    assert all(math.isnan(v) for v in g["ce_ci"])
    assert g["accuracy"] == 1.0  # reward 1: the outcome stays defined
    for name in ("CE", "overconfident rate", "ERF", "tool calls per trace"):
        assert any(w.startswith(f"{name} is undefined {REASON}") for w in res.warnings), name


def test_a_group_with_a_search_keeps_its_search_metrics():
    res = _summary(read_traces(TAU).traces)  # sim-a1 acts, sim-a2 searches once
    (g,) = res.groups
    assert g["tool_calls"] == pytest.approx(0.5)  # (0 + 1) search steps over 2 traces
    assert not any(REASON in w for w in res.warnings)


def test_a_closed_book_group_keeps_ce(tmp_path):
    trace = {"schema_version": "1.0", "trace_id": "cb", "agent": "closed", "question": "q?", "final_answer": "x",
             "steps": [{"index": 0, "kind": "reasoning", "text": "I know it."},
                       {"index": 1, "kind": "answer", "text": "x", "depends_on": [0]}]}
    path = tmp_path / "cb.jsonl"
    path.write_text(json.dumps(trace) + "\n")
    (g,) = _summary(read_traces(path).traces).groups
    # One decision point (turn 0) at E = 0 where it answers: overconfident 1, CE 1, no tool call (0, defined).
    assert g["ce"] == 1.0 and g["overconfident"] == 1.0 and g["tool_calls"] == 0.0
