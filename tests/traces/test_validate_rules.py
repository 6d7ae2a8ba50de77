"""validate_trace's checks against the references: jsonschema for the schema and a plain statement of
the order rules, on mutated traces.

The hand-written quick check (``_trace_check``) runs first and only says "valid" or "not sure", so
the property it rests on is one-sided: QUICK(doc) is True => jsonschema finds no error and the
order rules hold. The compiled check (``_fastschema``) decides validity for the rest, so it must
agree with jsonschema both ways, on any Python value (type confusions, missing and extra keys,
enum values, nested objects, containers of other Python types, key orders); and validate_trace
must say, word for word, what it says with jsonschema alone (both fast checks switched off). On
documents made of the exact types a JSON parser produces, without NaN or floats with an integral
value, QUICK agrees with the references both ways (so it really is what clears valid traces).
"""

import collections
import copy
import decimal
import enum
import json
import math
import random
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_mutations import message as _message
from schema_mutations import positions

from seekbench._schemas import validator
from seekbench.data import sample_traces_path
from seekbench.traces import _validate
from seekbench.traces._fastschema import fast_validator
from seekbench.traces._trace_check import quick_trace_check as QUICK

SAMPLE = [json.loads(line) for line in sample_traces_path().read_text().splitlines()]
FAST = fast_validator("trace")
INT64 = 2**63 - 1

# Every property of the trace schema present at least once (sample traces leave env, scores, passage ids out).
FULL = {
    "schema_version": "1.0", "trace_id": "full-1", "agent": "a", "dataset": "d", "question_id": None,
    "question": "q?", "gold_answers": ["x", "y"], "final_answer": None,
    "correct": {"value": None, "source": "judge", "detail": {"why": [1, (2,)]}},
    "source": {"format": "canonical", "file": "f.jsonl", "line": 1, "record_id": None, "path": "$"},
    "env": {"document_id": "doc", "n_goal_passages": 2, "belief": "oracle", "max_steps": 5, "theta": -0.5,
            "embedder": "e", "final_completeness": 0.5, "seed": -3},
    "metadata": {"free": {1, 2}},  # free-form: anything goes inside
    "inline_labels": {"rater": "r", "kind": "judge"},
    "steps": [
        {"index": 0, "kind": "reasoning", "text": "t", "tool": None, "original_kind": "think",
         "labels": {"reasoning_type": "PlanFormation", "grounding": None, "clarity": "Clear"},
         "completeness": 0.25, "self_estimate": None},
        {"index": 1, "kind": "search", "query": "q", "tool": "search", "depends_on": [0],
         "labels": {"search_type": "InitialQuery"}, "source_ref": {"format": "x", "line": None}},
        {"index": 5, "kind": "search_result", "depends_on": [0, 1], "passage_ids": ["p1"],
         "documents": [{"id": "d1", "title": None, "text": "x", "url": "u", "score": 0.5, "rank": 1},
                       {"score": 3, "rank": None}, {}],
         "labels": {"sufficiency": "Insufficient"}},
        {"index": 9, "kind": "answer", "text": "x", "url": None, "depends_on": [5],
         "labels": {"grounding": "Grounded"}},
    ],
}
SEEDS = [FULL, *SAMPLE[:6]]
# The same, with at most 4 steps (jsonschema, the reference, is slow on long traces): for the 20,000 mutations.
SHORT = [{**tr, "steps": tr["steps"][:4]} for tr in SEEDS]


def _valid(obj) -> bool:
    return validator("trace").is_valid(obj)


def _plain_json(obj) -> bool:
    """Only what a JSON parser makes, and no NaN nor float with an integral value: the documents on which
    the quick check promises to agree with the references both ways."""
    t = type(obj)
    if t is dict:
        return all(type(k) is str and _plain_json(v) for k, v in obj.items())
    if t is list:
        return all(_plain_json(v) for v in obj)
    if t is float:
        return not math.isnan(obj) and not obj.is_integer()
    return obj is None or t in (str, int, bool)


def _check(tr) -> bool:
    """Whether jsonschema accepts ``tr``, after checking the fast checks and validate_trace against the
    references: the quick check never passes what they reject (and agrees both ways on plain JSON), the
    compiled one gives the same verdict on the schema, and an error comes exactly when the schema or the
    order rules fail."""
    valid = _valid(tr)
    assert FAST(tr) == valid, "the compiled check and jsonschema disagree"
    ordered = valid and _semantic_error(tr) is None
    quick = QUICK(tr)
    assert not quick or ordered, "the quick check passed a trace the schema or the order rules reject"
    if _plain_json(tr):
        assert quick == ordered, "the quick check and the references disagree on plain JSON"
    assert (_message(tr) is None) == ordered, "validate_trace and the references disagree"
    return valid


def _semantic_error(tr) -> str | None:
    """The rules beyond the schema written out plainly (a reference independent of ``validate_trace``):
    step indices strictly increasing, each depends_on entry the index of an earlier step. The path of
    the first offence, or None."""
    indices = [s["index"] for s in tr["steps"]]
    for pos, step in enumerate(tr["steps"]):
        if pos and indices[pos] <= indices[pos - 1]:
            return f"$.steps[{pos}].index"
        for j, dep in enumerate(step.get("depends_on", [])):
            if dep not in indices[:pos]:
                return f"$.steps[{pos}].depends_on[{j}]"
    return None


def _message_with_jsonschema_alone(obj) -> str | None:
    """What ``validate_trace`` says with jsonschema alone (the quick and the compiled checks switched off)."""
    saved = _validate.quick_trace_check, _validate.fast_validator
    _validate.quick_trace_check, _validate.fast_validator = (lambda trace: False), (lambda name: None)
    try:
        return _message(obj)
    finally:
        _validate.quick_trace_check, _validate.fast_validator = saved


def test_valid_traces_pass(shared_traces):
    # Two-sided where speed depends on it: every real trace is cleared by the quick check, not the slow paths.
    for tr in [*SEEDS, *SAMPLE, *shared_traces]:
        assert QUICK(tr) and FAST(tr) and _valid(tr) and _message(tr) is None


def test_key_order_does_not_matter():
    for tr in SEEDS:
        rev = copy.deepcopy(tr)
        rev["steps"] = [dict(reversed(list(s.items()))) for s in rev["steps"]]
        assert QUICK(dict(reversed(list(rev.items())))) and _message(dict(reversed(list(rev.items())))) is None


class _Str(str):
    pass


class _Kind(enum.IntEnum):
    ONE = 1


# Each: a JSON-ish value; the quick check must never pass it where jsonschema would not.
VALUES = [None, True, False, 0, 1, -1, 1.0, 0.0, 1.5, 0.5, -0.5, math.nan, math.inf, -math.inf, INT64, INT64 + 1,
          2**70, -(2**70), "", "x", "1.0", "Grounded", "NotGrounded", "search", "search_result", "human", "judge",
          "em", "oracle", "InitialQuery", [], {}, [1], [0, 1], ["a"], [None], {"a": 1}, {"rater": "r"},
          {"value": True, "source": "em"}, {"index": 0, "kind": "other"}, {"format": "f"},
          # other Python spellings: a JSON parser never makes these, callers of the Python API might
          (1,), ("a",), {1}, frozenset(), collections.OrderedDict(), types.MappingProxyType({}), _Str("x"),
          _Str("search"), _Kind.ONE, b"x", decimal.Decimal("0.5")]


def _fresh(value):
    """A copy of one of VALUES (a mapping proxy cannot be deep-copied, nor changed: shared as is)."""
    return value if type(value) is types.MappingProxyType else copy.deepcopy(value)


def _mutate(tr: dict, rng: random.Random) -> dict:
    """1 to 3 edits: set a value, delete a key, add a key, swap a container's type, reorder a dict."""
    tr = copy.deepcopy(tr)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(list(positions(tr))[1:])
        parent = tr
        for key in path[:-1]:
            parent = parent[key]
        child = parent[path[-1]]
        action = rng.choice(["set", "set", "set", "delete", "extra", "container", "reorder"])
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "extra" and isinstance(parent, dict):
            parent[rng.choice(["zz", "labels", "kind", "index", "text", "rank", "line", "value", "rater"])] = (
                _fresh(rng.choice(VALUES)))
        elif action == "container" and type(child) in (dict, list):
            parent[path[-1]] = rng.choice([tuple, collections.OrderedDict if type(child) is dict else list])(child)
        elif action == "reorder" and type(child) is dict:
            items = list(child.items())
            rng.shuffle(items)
            parent[path[-1]] = dict(items)
        else:
            parent[path[-1]] = _fresh(rng.choice(VALUES))
    return tr


@pytest.mark.slow
def test_twenty_thousand_mutations_agree_with_jsonschema():
    # Seeded, so a failure reproduces; the failing document is in the assertion message.
    rng = random.Random(17)
    n_valid = 0
    for i in range(20_000):
        tr = _mutate(SHORT[i % len(SHORT)], rng)
        try:
            n_valid += _check(tr)
        except AssertionError as e:
            raise AssertionError(f"{e}: {tr!r}") from None
    # both sides exercised: many mutations stay valid (reorders, allowed values), many do not
    assert 2_000 < n_valid < 18_000


@st.composite
def _mutated(draw):
    return _mutate(draw(st.sampled_from(SEEDS)), random.Random(draw(st.integers(0, 2**32))))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_mutated())
def test_messages_are_todays_on_mutations(tr):
    # The same verdict and the same one-line error (file, line, trace id, path, wording) as jsonschema alone.
    assert _message(tr) == _message_with_jsonschema_alone(tr)


WHERE = [
    ("schema_version",), ("trace_id",), ("dataset",), ("gold_answers",), ("gold_answers", 0), ("correct",),
    ("correct", "value"), ("correct", "source"), ("correct", "detail"), ("source",), ("source", "line"),
    ("env",), ("env", "n_goal_passages"), ("env", "belief"), ("env", "theta"), ("env", "final_completeness"),
    ("env", "seed"), ("metadata",), ("inline_labels",), ("inline_labels", "rater"), ("steps",), ("steps", 0),
    ("steps", 1, "index"), ("steps", 0, "kind"), ("steps", 0, "labels"), ("steps", 0, "labels", "grounding"),
    ("steps", 0, "completeness"), ("steps", 1, "depends_on"), ("steps", 1, "depends_on", 0),
    ("steps", 1, "source_ref"), ("steps", 1, "source_ref", "line"), ("steps", 2, "documents"),
    ("steps", 2, "documents", 0), ("steps", 2, "documents", 0, "rank"), ("steps", 2, "documents", 1, "score"),
    ("steps", 2, "passage_ids", 0), ("zz",), ("steps", 0, "zz"), ("steps", 2, "documents", 2, "zz"),
]


@pytest.mark.parametrize("where", WHERE, ids=lambda p: ".".join(map(str, p)))
def test_type_confusions(where):
    # Every value of VALUES at this place: the compiled check agrees with jsonschema, and validate_trace
    # says what jsonschema alone says.
    for value in VALUES:
        tr = copy.deepcopy(FULL)
        parent = tr
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = value
        _check(tr)
        assert _message(tr) == _message_with_jsonschema_alone(tr), value


@pytest.mark.parametrize("value, quick, valid", [
    # the quick check's "not sure" cases: valid, left to the exact check
    (1.0, False, True), (_Kind.ONE, False, True), (INT64, True, True), (INT64 + 1, False, False),
    (True, False, False), (-1, False, False),
])
def test_integer_index(value, quick, valid):
    # jsonschema: an integer is an int that is not a bool (an int enum is one), or a float with no fraction.
    tr = copy.deepcopy(FULL)
    tr["steps"][-1]["index"] = value  # the last step: order rules hold for any int above 5
    assert QUICK(tr) is quick and FAST(tr) is valid and _valid(tr) is valid


def test_nan_against_a_bound_passes_as_in_jsonschema():
    # jsonschema lets NaN through minimum/maximum (every comparison with NaN is false).
    tr = copy.deepcopy(FULL)
    tr["steps"][0]["completeness"] = math.nan
    assert FAST(tr) and _valid(tr) and not QUICK(tr)  # the quick check is not sure: left to the exact one
    assert _message(tr) is None


def test_semantic_checks_stay():
    # Beyond the schema: indices strictly increasing, depends_on naming earlier steps only.
    tr = copy.deepcopy(FULL)
    tr["steps"][2]["index"] = 1
    assert FAST(tr) and not QUICK(tr) and _message(tr) == (
        "f.jsonl:7, trace full-1, at $.steps[2].index: step index 1 is not greater than the previous one (1); "
        "steps must be in order")
    tr = copy.deepcopy(FULL)
    tr["steps"][3]["depends_on"] = [5, 9]  # its own index: not an earlier step
    assert FAST(tr) and not QUICK(tr) and _message(tr) == (
        "f.jsonl:7, trace full-1, at $.steps[3].depends_on[1]: depends_on names step 9, which is not an "
        "earlier step of this trace")


@pytest.mark.parametrize("steps, ok, quick", [
    ([{"index": 0, "kind": "other"}, {"index": 1, "kind": "search", "depends_on": [0]}], True, True),
    ([{"index": 0, "kind": "other"}, {"index": 1, "kind": "search", "depends_on": [1]}], False, False),
    ([{"index": 0, "kind": "other"}, {"index": 2, "kind": "search", "depends_on": [0, 1]}], False, False),
    ([{"index": 0, "kind": "other"}, {"index": 0, "kind": "search", "depends_on": []}], False, False),
    ([{"index": 3, "kind": "search", "depends_on": []}, {"index": 2, "kind": "search", "depends_on": []}], False,
     False),
    # valid (0.0 is an integer to JSON Schema), but not what a parser makes of "0": the quick check is not sure
    ([{"index": 0, "kind": "other"}, {"index": 4, "kind": "search", "depends_on": [0.0]}], True, False),
    # True == 1 in Python, and 1 is an earlier index; JSON Schema's integer excludes booleans
    ([{"index": 1, "kind": "other"}, {"index": 4, "kind": "search", "depends_on": [True]}], False, False),
])
def test_order_rules(steps, ok, quick):
    # Hand-derived: an index must exceed the one before; depends_on may name only earlier steps' indices.
    tr = {"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": steps}
    assert (_message(tr) is None) is ok
    assert QUICK(tr) is quick


@st.composite
def _reindexed(draw):
    """FULL with random step indices and depends_on lists: valid or not by the semantic rules only."""
    tr = copy.deepcopy(FULL)
    for step in tr["steps"]:
        step["index"] = draw(st.integers(0, 12))
        step["depends_on"] = draw(st.lists(st.integers(0, 12), max_size=3))
    return tr


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_reindexed())
def test_semantic_errors_name_the_first_culprit(tr):
    _check(tr)
    message, path = _message(tr), _semantic_error(tr)
    assert (message is None) == (path is None)
    if path is not None:
        assert message is not None and f"at {path}:" in message
