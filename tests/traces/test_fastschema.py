"""The compiled schema check agrees with jsonschema, and validation words errors as jsonschema does."""

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_mutations import message as _message
from schema_mutations import positions

from seekbench._schemas import load_schema, validator
from seekbench.data import sample_traces_path
from seekbench.traces import _validate
from seekbench.traces._fastschema import _Compiler, fast_validator
from seekbench.traces._trace_check import quick_trace_check

SAMPLE = [json.loads(line) for line in sample_traces_path().read_text().splitlines()]
FAST = fast_validator("trace")


def _jsonschema_valid(obj) -> bool:
    return validator("trace").is_valid(obj)


def test_trace_schema_compiles():
    assert FAST is not None


def test_valid_traces_pass_fast(shared_traces):
    for tr in [*SAMPLE, *shared_traces[:40]]:
        assert FAST(tr) and _jsonschema_valid(tr)


@pytest.mark.parametrize("value, ok", [
    # the schema caps step indices at int64 (larger ones cannot be tabulated), so 2**70 is refused
    (1, True), (1.0, True), (True, False), (1.5, False), (-1, False), ("1", False), (None, False), (2**62, True),
    (2**70, False),
])
def test_integer_semantics_follow_jsonschema(value, ok):
    # jsonschema: an integer is an int that is not a bool, or a float with no fraction.
    tr = copy.deepcopy(SAMPLE[0])
    tr["steps"][0]["index"] = value
    assert FAST(tr) is ok and _jsonschema_valid(tr) is ok


@pytest.mark.parametrize("value, ok", [
    (0.5, True), (0, True), (1, True), (True, False), (1.5, False), (math.nan, True), (None, True), ("x", False),
])
def test_number_bounds_follow_jsonschema(value, ok):
    # NaN passes minimum/maximum in jsonschema (every comparison with NaN is false).
    tr = copy.deepcopy(SAMPLE[0])
    tr["steps"][0]["completeness"] = value
    assert FAST(tr) is ok and _jsonschema_valid(tr) is ok


@pytest.mark.parametrize("value, ok", [("Grounded", True), (None, True), ("grounded", False), (1, False),
                                       (True, False), (["Grounded"], False)])
def test_enum_semantics_follow_jsonschema(value, ok):
    tr = copy.deepcopy(SAMPLE[0])
    tr["steps"][0]["labels"]["grounding"] = value
    assert FAST(tr) is ok and _jsonschema_valid(tr) is ok


def test_one_of_correct():
    tr = copy.deepcopy(SAMPLE[0])
    for value, ok in [(None, True), ({"value": None, "source": "judge"}, True), ({"value": True}, False),
                      ({}, False), ({"value": 1, "source": "em"}, False), ("yes", False)]:
        tr["correct"] = value
        assert FAST(tr) is ok and _jsonschema_valid(tr) is ok, value


def test_unsupported_keyword_disables_the_fast_path():
    # A schema edit the compiler does not know makes validation slower, never wrong.
    schema = copy.deepcopy(load_schema("trace"))
    schema["properties"]["question"]["pattern"] = "^Q"
    with pytest.raises(Exception, match="pattern"):
        _Compiler(schema).compile(schema)


def test_error_messages_come_from_jsonschema(monkeypatch):
    # The same messages with the fast path as with jsonschema alone.
    bad = copy.deepcopy(SAMPLE[1])
    bad["steps"][2]["kind"] = "browse"
    with_fast = _message(bad)
    monkeypatch.setattr(_validate, "fast_validator", lambda name: None)
    monkeypatch.setattr(_validate, "quick_trace_check", lambda trace: False)
    assert _message(bad) == with_fast
    assert with_fast == (f"f.jsonl:7, trace {bad['trace_id']}, at $.steps[2].kind: 'browse' is not allowed; "
                         "expected one of: reasoning, search, search_result, answer, other")


# -- mutations ------------------------------------------------------------------------------------------------

_VALUES = st.sampled_from([None, True, False, 0, 1, -1, 1.0, 1.5, math.nan, "", "x", "Grounded", "Clear", "search",
                           "1.0", "judge", [], {}, [1], ["a"], {"a": 1}, 2**70])


@st.composite
def _mutated(draw):
    tr = copy.deepcopy(draw(st.sampled_from(SAMPLE)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(positions(tr))[1:]))
        parent = tr
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["set", "delete", "extra"]))
        # a copy: the lists and dicts of _VALUES are shared, and a later mutation may write inside one
        if action == "set" or not isinstance(parent, dict):
            parent[path[-1]] = copy.deepcopy(draw(_VALUES))
        elif action == "delete":
            del parent[path[-1]]
        else:
            parent[draw(st.sampled_from(["zz", "labels", "kind", "index"]))] = copy.deepcopy(draw(_VALUES))
    return tr


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_fast_check_agrees_with_jsonschema_on_mutations(tr):
    valid = _jsonschema_valid(tr)
    assert FAST(tr) == valid
    assert not quick_trace_check(tr) or valid  # the quick check in front: one-sided


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_messages_match_the_jsonschema_path_on_mutations(tr):
    with_fast = _message(tr)
    original = _validate.fast_validator, _validate.quick_trace_check
    _validate.fast_validator, _validate.quick_trace_check = (lambda name: None), (lambda trace: False)
    try:
        assert _message(tr) == with_fast
    finally:
        _validate.fast_validator, _validate.quick_trace_check = original
