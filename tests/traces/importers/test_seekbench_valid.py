"""The seekbench importer's traces are valid by construction: what it vouches for, jsonschema accepts.

The reader does not validate the traces of the SeekBench release format again (see the module
docstring of ``seekbench.traces.importers._seekbench``): the importer vouches for a converted
trace (``ImportedRecord.valid``) after checking only what its construction does not ensure. Here
fuzzed release records (mostly well-formed, with any JSON value anywhere) are converted, and the
importer's word is held to the full check: jsonschema on ``trace.schema.json`` and the step order
rules of ``validate_trace``. It must vouch exactly for the traces those accept, so a converter
change that lets an invalid trace through (or a schema change the converter does not follow)
fails here.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from seekbench import UserInputError
from seekbench._schemas import validator
from seekbench.traces import read_traces, validate_trace
from seekbench.traces.importers._seekbench import _Spellings, _valid_as_built, convert, iter_records

_TEXT = st.text(max_size=6) | st.sampled_from(["", " ", "x", "1"])
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT
#: Any JSON value (what a parser can give): the odd value put anywhere.
_JSON = st.recursive(
    _SCALARS, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_TEXT, kids, max_size=3), max_leaves=6
)


def _mostly(good):
    """A value of ``good``, or once in 16 draws any JSON value."""
    return st.integers(0, 15).flatmap(lambda i: _JSON if i == 0 else good)


_STEP_TYPES = [
    "reasoning",
    "search",
    "search_result",
    "CorrectAnswer",
    "IncorrectAnswer",
    "think",
    "Tool Call",
    "observation",
    "plan",
]
#: Spellings of the labels of each field, a wrong one last ("Sorta": outside every field's ontology).
_LABELS = {
    "reasoning_type": ["PlanFormation", "state assessment", "InformationSynthesis"],
    "search_type": ["InitialQuery", "refined_query", "FollowUpQuery", "RepeatQuery"],
    "grounding": ["Grounded", "Not Grounded", "ungrounded"],
    "clarity": ["Clear", "Unclear"],
    "sufficiency": ["Sufficient", "Insufficient"],
}
_ATTRIBUTES = {
    "groundness": "grounding",
    "grounding": "grounding",
    "information_clarity": "clarity",
    "information_quality": "sufficiency",
    "clarity": "clarity",
    "quality": "sufficiency",
    "type": "reasoning_type",
    "mood": "clarity",
}


def _label(field: str) -> st.SearchStrategy:
    return _mostly(st.sampled_from([*_LABELS[field], "Sorta"]) | st.none())


def _attributes() -> st.SearchStrategy:
    pair = st.sampled_from(sorted(_ATTRIBUTES)).flatmap(lambda a: st.tuples(st.just(a), _label(_ATTRIBUTES[a])))
    return st.lists(pair, max_size=3).map(dict)


_INDEX = st.integers(-2, 12) | st.sampled_from([2**63 - 1, 2**63])


def _entries(d: dict, required: tuple[str, ...] = ()) -> st.SearchStrategy[dict]:
    """The ``required`` keys and some of the others of ``d`` (a dict of strategies), each drawn."""
    return st.fixed_dictionaries(
        {k: d[k] for k in required}, optional={k: v for k, v in d.items() if k not in required}
    )


_DOCUMENT = _mostly(
    _TEXT
    | _entries(
        {
            "id": _mostly(_TEXT | st.integers() | st.none()),
            "title": _mostly(_TEXT | st.none()),
            "content": _mostly(_TEXT | st.none()),
            "text": _mostly(_TEXT),
            "score": _mostly(st.floats(-2, 2) | st.integers(-2, 2)),
            "url": _mostly(_TEXT),
        }
    )
)
_STEP = st.sampled_from(_STEP_TYPES).flatmap(
    lambda kind: _mostly(
        _entries(
            {
                "type": _mostly(st.just(kind)),
                "step_index": _mostly(_INDEX),
                "content": _mostly(_TEXT | st.none()),
                "query": _mostly(_TEXT | st.none()),
                "documents": _mostly(st.lists(_DOCUMENT, max_size=3)),
                "trace_dependency": _mostly(
                    _entries({"dependent_on": _mostly(st.none() | _INDEX | st.lists(_INDEX, max_size=3))})
                ),
                "annotation": _mostly(
                    _entries(
                        {
                            "type": _label("search_type" if kind == "search" else "reasoning_type"),
                            "attributes": _mostly(_attributes()),
                        }
                    )
                ),
            },
            required=("type",),
        )
    )
)
_RECORD = _entries(
    {
        "id": _mostly(st.sampled_from([0, 7, "", "t1"]) | _TEXT),
        "model": _mostly(_TEXT),
        "agent": _mostly(_TEXT),
        "question": _mostly(_TEXT),
        "dataset": _mostly(_TEXT | st.none()),
        "ground_truth": _mostly(_TEXT | st.lists(_TEXT, max_size=2)),
        "gold_answers": _mostly(st.lists(_TEXT, max_size=2)),
        "question_id": _JSON,
        "final_answer": _JSON,
        "is_correct": _mostly(st.booleans() | st.none()),
        "reward": _JSON,
        "extra": _JSON,
    },
    required=("model", "question"),
).flatmap(lambda rec: st.lists(_STEP, max_size=5).map(lambda steps: {**rec, "trace": steps}))


def _accepted(trace: dict) -> bool:
    """jsonschema and the order rules, each asked on its own."""
    if any(True for _ in validator("trace").iter_errors(trace)):
        return False
    try:
        validate_trace(trace)
    except UserInputError:
        return False
    return True


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(rec=_RECORD, rater=st.sampled_from(["raters", ""]), line=st.sampled_from([1, 7, 0, None]))
def test_it_vouches_for_exactly_the_traces_jsonschema_and_the_order_rules_accept(rec, rater, line):
    try:
        trace = convert(rec, file="fuzz.jsonl", line=line, rater=rater, names=_Spellings())
    except UserInputError:
        assume(False)  # a record the converter refuses never reaches validation
    vouched = _valid_as_built(trace)
    event(f"vouched for: {vouched}")
    assert vouched == _accepted(trace)


def _record(**over) -> dict:
    rec = {
        "id": 7,
        "model": "m",
        "question": "q?",
        "ground_truth": ["x"],
        "is_correct": True,
        "trace": [
            {
                "type": "reasoning",
                "content": "plan",
                "step_index": 0,
                "annotation": {"type": "PlanFormation", "attributes": {"groundness": "Not Grounded"}},
            },
            {
                "type": "search",
                "query": "x?",
                "step_index": 1,
                "trace_dependency": {"dependent_on": 0},
                "annotation": {"type": "InitialQuery", "attributes": {}},
            },
            {
                "type": "search_result",
                "documents": [{"title": "t", "content": "c"}],
                "step_index": 2,
                "annotation": {"attributes": {"information_clarity": "Clear", "information_quality": "Sufficient"}},
            },
            {"type": "CorrectAnswer", "content": "x", "step_index": 3},
        ],
    }
    return {**rec, **over}


def test_a_release_record_is_vouched_for_and_not_validated_again(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(_record()) + "\n")
    (rec,) = iter_records(path)
    assert rec.error is None and rec.valid
    assert _accepted(rec.trace)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        # The wording is validate_trace's, as before the importer vouched for traces: the reader asks it.
        ({"id": ""}, "run.jsonl:1, trace , at $.trace_id: '' should be non-empty"),
        ({"model": ""}, "run.jsonl:1, trace 7, at $.agent: '' should be non-empty"),
        (
            {"trace": [{"type": "think", "step_index": 1}, {"type": "think", "step_index": 1}]},
            "run.jsonl:1, trace 7, at $.steps[1].index: step index 1 is not greater than the previous one (1); "
            "steps must be in order",
        ),
        (
            {"trace": [{"type": "think", "step_index": 0, "trace_dependency": {"dependent_on": [0]}}]},
            "run.jsonl:1, trace 7, at $.steps[0].depends_on[0]: depends_on names step 0, which is not an earlier "
            "step of this trace",
        ),
        (
            {"trace": [{"type": "think", "step_index": 2**63}]},
            "run.jsonl:1, trace 7, at $.steps[0].index: 9223372036854775808 is greater than the maximum of "
            "9223372036854775807",
        ),
    ],
    ids=["empty id", "empty agent", "indices out of order", "depends on itself", "index past 64 bits"],
)
def test_a_trace_it_does_not_vouch_for_is_validated_with_the_usual_words(tmp_path, over, message):
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(_record(**over)) + "\n")
    (rec,) = iter_records(path)
    assert rec.error is None and not rec.valid
    with pytest.raises(UserInputError) as e:
        read_traces(path)
    assert e.value.one_line() == message.replace("run.jsonl", str(path))
