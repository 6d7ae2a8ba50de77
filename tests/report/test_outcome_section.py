"""The outcome section: efficiency beside outcomes, panel disagreement and evidence sets when present."""

import pandas as pd

from seekbench.analysis import analyze_outcome, panel_table
from seekbench.answers import judge_answers
from seekbench.data import sample_traces_path
from seekbench.report._outcome_section import outcome_section
from seekbench.traces import build_tables, read_traces


def test_section_on_the_sample():
    traces = read_traces(sample_traces_path()).traces
    steps, table = build_tables(traces)
    html, md, tables = outcome_section(analyze_outcome(steps, table, traces))
    assert set(tables) == {"outcome_efficiency", "correctness_sources"}
    assert "<h2>Outcomes and efficiency</h2>" in html and "## Outcomes and efficiency" in md
    assert "Pass@k (k > 1) is undefined" in md
    assert tables["correctness_sources"]["human"].sum() == 48


def test_section_with_panel_votes_and_evidence_sets():
    traces = read_traces(sample_traces_path()).traces[:4]
    for i, t in enumerate(traces):
        t["metadata"]["evidence_set"] = {"evidence": ["e"], "sources": ["s"], "judgments": {"1": i % 2 == 0}}
    judged = judge_answers(traces, ["em"], overwrite="all").traces
    steps, table = build_tables(judged)
    html, md, tables = outcome_section(analyze_outcome(steps, table, judged))
    assert {"answer_panel", "evidence_set"} <= set(tables)
    assert "Evidence sets" in html and "Answer-judge panel" in md
    p = panel_table([{"agent": "a", "correct": {"value": True, "source": "panel", "detail": {
        "votes": [{"judge": "A", "value": True}, {"judge": "B", "value": False}, {"judge": "C", "value": True}],
        "disagreement": True, "tiebreak_asked": True}}},
        {"agent": "a", "correct": {"value": False, "source": "panel", "detail": {
            "votes": [{"judge": "A", "value": False}, {"judge": "B", "value": False}], "disagreement": False,
            "tiebreak_asked": False}}}])
    row = p.iloc[0]
    assert (row["compared"], row["disagreements"], row["disagreement_rate"], row["tiebreaks"]) == (2, 1, 0.5, 1)
    assert row["yes share A"] == 0.5 and row["yes share C"] == 1.0


def test_no_traces():
    assert analyze_outcome(pd.DataFrame(), pd.DataFrame(), []) is None
    assert outcome_section(None) is None
