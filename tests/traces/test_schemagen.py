"""The generated quick schema check: True only for documents jsonschema accepts, True for plain valid JSON.

The quick check (``_schemagen``) runs first in ``validate_trace``; what it is not sure of goes
to the exact compiled check and jsonschema. So the property everything rests on is one-sided:
quick(doc) is True  =>  jsonschema finds no error. These tests hammer it with mutated traces
(type confusions, missing and extra keys, enum values, nested objects, containers of other
Python types, key orders), and check the other side only where it is promised: on documents
made of the exact types a JSON parser produces, without NaN or floats with an integral value,
the two agree both ways (so the quick check really is what clears valid traces).

QUICK is the schema's check alone; FUSED is validate_trace's, the schema plus the step order
rules (indices increasing, depends_on naming earlier steps) in the same generated pass, held to
the same two properties against jsonschema and a plain reference of those rules.
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_mutations import message as _message
from schema_mutations import positions

from seekbench._schemas import load_schema, validator
from seekbench.data import sample_traces_path
from seekbench.traces import _schemagen, _validate
from seekbench.traces._schemagen import Unsupported, generate, quick_validator

SAMPLE = [json.loads(line) for line in sample_traces_path().read_text().splitlines()]
QUICK = quick_validator("trace")
FUSED = _validate.quick_trace_check()
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
    the quick check promises to agree with jsonschema both ways."""
    t = type(obj)
    if t is dict:
        return all(type(k) is str and _plain_json(v) for k, v in obj.items())
    if t is list:
        return all(_plain_json(v) for v in obj)
    if t is float:
        return not math.isnan(obj) and not obj.is_integer()
    return obj is None or t in (str, int, bool)


def _check(tr) -> bool:
    """Whether jsonschema accepts ``tr``, after checking the quick checks against it: the schema's alone
    (QUICK) and validate_trace's, with the step order rules (FUSED)."""
    quick, fused, valid = QUICK(tr), FUSED(tr), _valid(tr)
    ordered = valid and _semantic_error(tr) is None
    assert not quick or valid, "the quick check passed a document jsonschema rejects"
    assert not fused or ordered, "validate_trace's quick check passed an invalid trace"
    if _plain_json(tr):
        assert quick == valid, "the quick check and jsonschema disagree on plain JSON"
        assert fused == ordered, "validate_trace's quick check and the rules disagree on plain JSON"
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


def _message_without_fast_paths(obj) -> str | None:
    """What ``validate_trace`` says with jsonschema alone (the quick and the compiled checks switched off)."""
    saved = _validate.quick_trace_check, _validate.fast_validator
    _validate.quick_trace_check, _validate.fast_validator = (lambda: None), (lambda name: None)
    try:
        return _message(obj)
    finally:
        _validate.quick_trace_check, _validate.fast_validator = saved


def test_trace_schema_generates():
    assert QUICK is not None and FUSED is not None


def test_valid_traces_pass_quick(shared_traces):
    # Two-sided where it matters: every real trace is cleared by the quick check, not by the slow paths.
    for tr in [*SEEDS, *SAMPLE, *shared_traces]:
        assert QUICK(tr) and FUSED(tr) and _valid(tr)


def test_key_order_does_not_matter():
    # Inlined shapes are looked up by name; a new order of the same keys takes the key-tuple path.
    for tr in SEEDS:
        rev = copy.deepcopy(tr)
        rev["steps"] = [dict(reversed(list(s.items()))) for s in rev["steps"]]
        assert QUICK(dict(reversed(list(rev.items())))) is FUSED(dict(reversed(list(rev.items())))) is True


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


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_messages_are_todays_on_mutations(tr):
    # The same verdict and the same one-line error (file, line, trace id, path, wording) as jsonschema alone.
    assert _message(tr) == _message_without_fast_paths(tr)


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
    # Every value of VALUES at this place: the quick checks never pass what jsonschema or the order
    # rules reject, and validate_trace says what jsonschema alone says.
    for value in VALUES:
        tr = copy.deepcopy(FULL)
        parent = tr
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = value
        _check(tr)
        assert _message(tr) == _message_without_fast_paths(tr), value


@pytest.mark.parametrize("value, quick, valid", [
    # the quick check's "not sure" cases: valid, left to the exact check
    (1.0, False, True), (_Kind.ONE, False, True), (INT64, True, True), (INT64 + 1, False, False),
    (True, False, False), (-1, False, False),
])
def test_integer_index(value, quick, valid):
    tr = copy.deepcopy(FULL)
    tr["steps"][1]["index"] = value
    assert (QUICK(tr), _valid(tr)) == (quick, valid)


def test_nan_against_a_bound_is_left_to_the_exact_check():
    # jsonschema lets NaN through minimum/maximum (every comparison is false); the quick check is not sure.
    tr = copy.deepcopy(FULL)
    tr["steps"][0]["completeness"] = math.nan
    assert not QUICK(tr) and _valid(tr)
    assert _message(tr) is None


def test_semantic_checks_stay():
    # Beyond the schema: indices strictly increasing, depends_on naming earlier steps only.
    tr = copy.deepcopy(FULL)
    tr["steps"][2]["index"] = 1
    assert QUICK(tr) and not FUSED(tr) and _message(tr) == (
        "f.jsonl:7, trace full-1, at $.steps[2].index: step index 1 is not greater than the previous one (1); "
        "steps must be in order")
    tr = copy.deepcopy(FULL)
    tr["steps"][3]["depends_on"] = [5, 9]  # its own index: not an earlier step
    assert QUICK(tr) and not FUSED(tr) and _message(tr) == (
        "f.jsonl:7, trace full-1, at $.steps[3].depends_on[1]: depends_on names step 9, which is not an "
        "earlier step of this trace")


def test_order_rules_hold_on_steps_checked_through_the_cache():
    # The code of a trace inlines the step shapes of the first trace with its keys; steps of other shapes
    # are checked through the key-tuple cache, and the order rules must hold there too.
    quick = _validate.quick_trace_check.__wrapped__()  # a fresh one, with its own caches
    base = {"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q",
            "steps": [{"index": 0, "kind": "other"}]}
    assert quick(base)
    first = {"index": 0, "kind": "other"}
    for steps, ok in [
        ([first, {"index": 1, "kind": "search", "depends_on": [0]}], True),
        ([first, {"index": 1, "kind": "search", "depends_on": [1]}], False),
        ([first, {"index": 2, "kind": "search", "depends_on": [0, 1]}], False),
        ([first, {"index": 0, "kind": "search", "depends_on": []}], False),
        ([{"index": 3, "kind": "search", "depends_on": []}, {"index": 2, "kind": "search", "depends_on": []}], False),
    ]:
        tr = {**base, "steps": steps}
        assert quick(tr) is ok and (_message(tr) is None) is ok


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


def test_key_tuples_past_the_bound_go_to_the_exact_check(monkeypatch):
    # Past MAX_KEY_TUPLES new key orders answer "not sure"; validation still accepts them (exact path).
    monkeypatch.setattr(_schemagen, "MAX_KEY_TUPLES", 2)
    quick = _validate.quick_trace_check.__wrapped__()  # a fresh one, with its own caches
    orders = [dict(reversed(list(FULL.items()))), dict(sorted(FULL.items())), FULL]
    assert [quick(tr) for tr in orders] == [True, True, False]
    monkeypatch.setattr(_validate, "quick_trace_check", lambda: quick)
    assert all(_message(tr) is None for tr in orders)


@pytest.mark.parametrize("edit", [
    lambda s: s["properties"]["question"].update(pattern="^Q"),  # an unknown keyword
    lambda s: s["properties"]["correct"]["oneOf"].append({"type": "object"}),  # branches that may overlap
    lambda s: s["properties"]["gold_answers"].update(type=["array", "null"]),  # a container mixed with null
    lambda s: s["properties"]["question"].update(minLength=1, type=None) or s["properties"]["question"].pop("type"),
    lambda s: s["$defs"]["step"]["properties"].update(next={"$ref": "#/$defs/step"}),  # recursion
])
def test_what_it_cannot_generate_it_refuses(edit):
    # Refusing (None from quick_validator) makes validation slower, never wrong.
    schema = copy.deepcopy(load_schema("trace"))
    edit(schema)
    with pytest.raises(Unsupported):
        generate(schema)


def test_code_nested_too_deep_for_python_is_refused_or_not_sure():
    # 30 nested arrays: more loops in one function than Python compiles (its limit is 20 nested blocks).
    deep: dict = {"type": "string"}
    for _ in range(30):
        deep = {"type": "array", "items": deep}
    with pytest.raises(Unsupported):
        generate(deep)
    # The same depth under an object met at run time: its code is compiled then, and answers "not sure".
    quick = generate({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": deep}}}})
    doc: object = "x"
    for _ in range(30):
        doc = [doc]
    assert quick({"a": {"b": doc}}) is False
    assert quick({"a": {}}) is True


def test_judge_output_schema_is_sound():
    # The generator is generic: another shipped schema, checked the same one-sided way on mutations.
    schema = load_schema("judge_output")
    quick, exact = generate(schema), validator("judge_output")
    assert quick({"labels": [{"step": 0, "grounding": "Grounded"}, {"step": 2, "clarity": None}]})
    rng = random.Random(3)
    n_valid = 0
    for _ in range(2_000):
        label = {"step": rng.choice([0, 3, rng.choice(VALUES)])}
        label[rng.choice(["grounding", "clarity", "reasoning_type", "search_type", "sufficiency", "zz"])] = (
            rng.choice([None, "Clear", "Sufficient", "PlanFormation", "Grounded", rng.choice(VALUES)]))
        doc = rng.choice([{"labels": [label]}, {"labels": [{"step": 1}, label]}, label])
        assert not quick(doc) or exact.is_valid(doc), doc
        n_valid += exact.is_valid(doc)
    assert n_valid > 100
