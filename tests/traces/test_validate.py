"""Schema and semantic validation of canonical traces."""

import copy

import pytest

from seekbench import UserInputError
from seekbench.traces import validate_trace

GOOD = {"schema_version": "1.0", "trace_id": "t1", "agent": "a", "question": "q", "steps": [
    {"index": 0, "kind": "reasoning", "text": "think"},
    {"index": 1, "kind": "search", "query": "q", "depends_on": [0]},
    {"index": 2, "kind": "search_result", "documents": [{"title": "T", "text": "x", "rank": 1}]},
    {"index": 3, "kind": "answer", "text": "x"}]}


def _err(trace) -> str:
    with pytest.raises(UserInputError) as e:
        validate_trace(trace, file="f.jsonl", line=3)
    return str(e.value)


def test_valid():
    validate_trace(GOOD)


def test_unknown_kind():
    t = copy.deepcopy(GOOD)
    t["steps"][1]["kind"] = "browse"
    assert _err(t) == ("f.jsonl:3, trace t1, at $.steps[1].kind: 'browse' is not allowed; expected one of: "
                       "reasoning, search, search_result, answer, other")


def test_wrong_type():
    t = copy.deepcopy(GOOD)
    t["steps"][0]["index"] = "0"
    assert _err(t) == "f.jsonl:3, trace t1, at $.steps[0].index: must be integer, got str"


def test_missing_field():
    t = copy.deepcopy(GOOD)
    del t["agent"]
    assert _err(t) == "f.jsonl:3, trace t1, at $: 'agent' is required"


def test_out_of_order():
    t = copy.deepcopy(GOOD)
    t["steps"][2]["index"] = 1
    assert "at $.steps[2].index: step index 1 is not greater than the previous one (1)" in _err(t)


def test_dangling_reference():
    t = copy.deepcopy(GOOD)
    t["steps"][1]["depends_on"] = [7]
    assert "at $.steps[1].depends_on[0]: depends_on names step 7" in _err(t)


def test_label_outside_enum():
    t = copy.deepcopy(GOOD)
    t["steps"][0]["labels"] = {"grounding": "Maybe"}
    assert "at $.steps[0].labels.grounding: 'Maybe' is not allowed" in _err(t)
