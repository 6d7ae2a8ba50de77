"""Fixtures for the offline-judge tests: a hand-made trace with hand-derived labels, the sample traces."""

from __future__ import annotations

import copy

import pytest

# One trace written to exercise every heuristic once. The expected labels of the
# rules judge are derived by hand in test_rules.py from the thresholds in
# seekbench/annotate/offline/_rules.py.
HAND_TRACE = {
    "schema_version": "1.0", "trace_id": "hand-1", "agent": "hand", "dataset": "hand", "question_id": "hq1",
    "question": "Which river flows past the town where Leo Bennett died?",
    "final_answer": "River Thames", "gold_answers": ["River Thames"],
    "steps": [
        {"index": 0, "kind": "reasoning", "text": "I need to find out where Leo Bennett died."},
        {"index": 1, "kind": "search", "query": "Leo Bennett place of death"},
        {"index": 2, "kind": "search_result", "depends_on": [1], "documents": [
            {"title": "Leo Bennett", "rank": 1,
             "text": "Leo Bennett died at Thames Ditton, Surrey, in 1971; his place of death is by the river."},
            {"title": "Arnold Bennett", "rank": 2, "text": "Arnold Bennett was a novelist."}]},
        {"index": 3, "kind": "reasoning",
         "text": "Based on the documents, Leo Bennett died at Thames Ditton in Surrey."},
        {"index": 4, "kind": "search", "query": "Thames Ditton river"},
        {"index": 5, "kind": "search_result", "depends_on": [4], "documents": []},
        {"index": 6, "kind": "reasoning", "text": ""},
        {"index": 7, "kind": "search", "query": "Thames Ditton river flows"},
        {"index": 8, "kind": "search", "query": "leo bennett, place of death!"},
        {"index": 9, "kind": "search_result", "depends_on": [8], "documents": [
            {"title": "River Thames", "rank": 1, "text": "The River Thames flows past Thames Ditton."}]},
        {"index": 10, "kind": "reasoning", "text": "It seems the river is not mentioned clearly; I am not sure."},
        {"index": 11, "kind": "answer", "text": "River Thames"},
        {"index": 12, "kind": "other", "text": "bookkeeping"},
    ],
}


@pytest.fixture
def hand_trace() -> dict:
    from seekbench.traces import validate_trace

    trace = copy.deepcopy(HAND_TRACE)
    validate_trace(trace)
    return trace


@pytest.fixture(scope="session")
def sample_traces() -> list[dict]:
    """The project's embedded sample traces (48 traces, 12 questions, one human rater inline)."""
    from seekbench.data import sample_traces_path
    from seekbench.traces import read_traces

    return read_traces(sample_traces_path()).traces


def _strip_time(records: list[dict]) -> list[dict]:
    return [{**r, "provenance": {k: v for k, v in r["provenance"].items() if k != "time"}} for r in records]


@pytest.fixture
def strip_time():
    """Drop ``provenance.time`` (the only field that may differ between two runs) from records."""
    return _strip_time
