"""The hand-written quick check (``_trace_check``) stays the schema's: drift tests and the cases it must refuse.

The check is written by hand for ``trace.schema.json`` (issue 28: no code generated and exec'd), so
nothing makes it follow a schema edit. These tests fail when the schema changes under it: an object
gains or loses a property (named, against the module's tables), or anything else that validates
changes (its fingerprint). Its agreement with jsonschema on mutated traces is in
``test_validate_rules.py`` and ``test_fastschema.py``.
"""

import copy
import hashlib
import json

import pytest

from seekbench._schemas import load_schema, validator
from seekbench.traces._trace_check import KNOWN_PROPERTIES, quick_trace_check

_ANNOTATIONS = {"description", "title", "$comment", "examples", "default"}
BASE = {"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q",
        "steps": [{"index": 0, "kind": "search", "query": "x",
                   "source_ref": {"format": "f", "file": None, "line": 2, "record_id": "r", "path": "$"}}]}


def _objects(schema, pointer="#"):
    """(JSON pointer, property names) of every subschema that lists properties."""
    if isinstance(schema, dict):
        if "properties" in schema:
            yield pointer, frozenset(schema["properties"])
        for key, value in schema.items():
            yield from _objects(value, f"{pointer}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _objects(value, f"{pointer}/{i}")


def _without_annotations(schema):
    if isinstance(schema, dict):
        return {k: _without_annotations(v) for k, v in schema.items() if k not in _ANNOTATIONS}
    if isinstance(schema, list):
        return [_without_annotations(v) for v in schema]
    return schema


def test_every_schema_object_is_known_with_its_properties():
    # A property added to (or removed from) any object of the schema must be added to _trace_check.py.
    assert dict(_objects(load_schema("trace"))) == KNOWN_PROPERTIES


def test_the_schema_is_the_one_the_check_was_written_for():
    # Any change to what the schema validates (a type, a bound, an enum value, required, ...): review
    # seekbench/traces/_trace_check.py against it, then update this fingerprint. Descriptions and titles
    # are left out: editing them changes nothing here.
    text = json.dumps(_without_annotations(load_schema("trace")), sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "dc1414969d396f23"


@pytest.mark.parametrize("where, value", [
    # present nulls where the schema has no null (absent is fine, null is not)
    (("source",), None), (("env",), None), (("inline_labels",), None), (("metadata",), None),
    (("gold_answers",), None), (("steps", 0, "source_ref"), None), (("steps", 0, "labels"), None),
    (("steps", 0, "documents"), None), (("steps", 0, "depends_on"), None), (("steps", 0, "passage_ids"), None),
    (("steps", 0, "source_ref", "format"), None),
    # the usual five-key source reference with one key unknown instead of a known one
    (("steps", 0, "source_ref"), {"format": "f", "file": None, "line": 2, "record_id": "r", "zz": "$"}),
    (("steps", 0, "source_ref", "line"), 0), (("steps", 0, "source_ref", "line"), True),
    (("inline_labels",), {"kind": "human"}),  # rater is required
    (("correct",), {"value": True}), (("correct",), {"source": "em"}),  # both required
    (("steps", 0, "labels"), {"clarity": "Grounded"}),  # a value of another label field
    (("steps", 0, "labels"), {"clarity": ["Clear"]}),  # unhashable: not an error, a refusal
    (("steps", 0, "depends_on"), [0]),  # its own index: not an earlier step
    (("env",), {"final_completeness": 1.5}), (("env",), {"belief": None}), (("env",), {"n_goal_passages": 0}),
])
def test_invalid_values_are_refused(where, value):
    # Each is invalid by the schema or the order rules (hand-derived from trace.schema.json, checked
    # against jsonschema where the schema alone decides).
    tr = copy.deepcopy(BASE)
    parent = tr
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    assert not quick_trace_check(tr)
    if where != ("steps", 0, "depends_on") or value != [0]:
        assert not validator("trace").is_valid(tr)


def test_valid_shapes_are_cleared():
    assert quick_trace_check(BASE)
    tr = copy.deepcopy(BASE)
    tr["steps"][0]["source_ref"] = {"line": None}  # any subset of the source reference's properties
    tr["steps"].append({"index": 3, "kind": "search_result", "depends_on": [0], "completeness": 1,
                        "documents": [{}, {"rank": 1, "score": -2.5}], "passage_ids": ["p"]})
    tr.update(correct=None, env={}, inline_labels={"rater": "r"}, metadata={"x": [1]})
    assert quick_trace_check(tr) and validator("trace").is_valid(tr)
