"""A quick yes-or-not-sure check of a canonical trace, written by hand for ``trace.schema.json``.

:func:`quick_trace_check` answers True only for a trace the schema accepts *and* whose steps
follow the order rules of :func:`._validate.validate_trace` (indices strictly increasing,
``depends_on`` naming earlier steps). False means "not sure": the caller then runs the exact
check compiled from the schema (:mod:`._fastschema`) and jsonschema, which words the error.
Being one-sided is what makes it cheap:

- it accepts only the exact types a JSON parser produces (``type(v) is str``; ``int`` but not
  ``bool``, nor ``1.0`` for an integer; ``list``; ``dict``) and leaves every rarer spelling of a
  valid value (a str subclass, a float with no fraction, NaN against a bound, a tuple) to the
  exact check, so a value's type is one set lookup;
- it walks only the keys a dict has: per object, a table maps each property to the exact types
  its schema allows (:data:`STEP_TYPES`, ...), so one loop checks that no key is unknown (the
  objects are closed: an unknown key is a ``KeyError``) and that every value has an allowed type;
  the few properties with more to check (bounds, enums, nested objects, the order rules) are
  looked at by name after that.

Steps, their documents and source references are most of a corpus, so they are checked inline in
one loop (a function call per step or document costs about a third more), and a source reference
of the usual shape (all five properties) is read by name; the once-per-trace objects get small
functions. This replaces code that used to be generated from the schema and run with ``exec``
(issue 28). Being hand-written, it can drift from the schema: ``tests/traces/test_trace_check.py``
fails when the schema's objects gain or lose a property (:data:`KNOWN_PROPERTIES` mirrors them) or
when anything else in the schema changes, and the mutation tests hold it to jsonschema's verdict.
When the schema changes, change this module with it.
"""

from __future__ import annotations

INT64_MAX = 2**63 - 1
_NULL = type(None)

# The exact Python types a JSON parser gives for each schema type (see the module docstring).
_STR = frozenset({str})
_STR_OR_NULL = frozenset({str, _NULL})
_INT = frozenset({int})
_INT_OR_NULL = frozenset({int, _NULL})
_NUMBER = frozenset({int, float})
_NUMBER_OR_NULL = frozenset({int, float, _NULL})
_LIST = frozenset({list})
_DICT = frozenset({dict})
_BOOL_OR_NULL = frozenset({bool, _NULL})

# Per object of the schema: property -> allowed exact types. Properties also checked by name below
# are marked "+". Every object is closed (additionalProperties: false) except the free-form
# ``metadata`` and ``correct.detail``.
STEP_TYPES = {
    "index": _INT,  # + 0 <= index <= INT64_MAX, and above the previous step's
    "kind": _STR,  # + enum
    "text": _STR_OR_NULL,
    "tool": _STR_OR_NULL,
    "query": _STR_OR_NULL,
    "url": _STR_OR_NULL,
    "documents": _LIST,  # + items: DOCUMENT_TYPES
    "depends_on": _LIST,  # + items: earlier indices
    "source_ref": _DICT,  # + SOURCE_REF_TYPES
    "original_kind": _STR_OR_NULL,
    "labels": _DICT,  # + LABEL_VALUES
    "passage_ids": _LIST,  # + items: str
    "completeness": _NUMBER_OR_NULL,  # + in [0, 1]
    "self_estimate": _NUMBER_OR_NULL,  # + in [0, 1]
}
SOURCE_REF_TYPES = {
    "format": _STR,
    "file": _STR_OR_NULL,
    "line": _INT_OR_NULL,  # + >= 1
    "record_id": _STR_OR_NULL,
    "path": _STR_OR_NULL,
}
DOCUMENT_TYPES = {
    "id": _STR_OR_NULL,
    "title": _STR_OR_NULL,
    "text": _STR_OR_NULL,
    "url": _STR_OR_NULL,
    "score": _NUMBER_OR_NULL,
    "rank": _INT_OR_NULL,  # + >= 1
}
TRACE_TYPES = {
    "schema_version": _STR,  # + const "1.0"
    "trace_id": _STR,  # + minLength 1
    "agent": _STR,  # + minLength 1
    "dataset": _STR_OR_NULL,
    "question_id": _STR_OR_NULL,
    "question": _STR,
    "gold_answers": _LIST,  # + items: str
    "final_answer": _STR_OR_NULL,
    "correct": frozenset({dict, _NULL}),  # + CORRECT_TYPES when a dict
    "source": _DICT,  # + SOURCE_REF_TYPES
    "env": _DICT,  # + ENV_TYPES
    "metadata": _DICT,  # free-form
    "steps": _LIST,  # + STEP_TYPES, the order rules
    "inline_labels": _DICT,  # + INLINE_LABELS_TYPES
}
TRACE_REQUIRED = frozenset({"schema_version", "trace_id", "agent", "question", "steps"})
CORRECT_TYPES = {"value": _BOOL_OR_NULL, "source": _STR, "detail": _DICT}  # + source: enum
ENV_TYPES = {
    "document_id": _STR,
    "n_goal_passages": _INT,  # + >= 1
    "belief": _STR,  # + enum
    "max_steps": _INT,  # + >= 1
    "theta": _NUMBER,
    "embedder": _STR,
    "final_completeness": _NUMBER,  # + in [0, 1]
    "seed": _INT,
}
INLINE_LABELS_TYPES = {"rater": _STR, "kind": _STR}  # + rater: minLength 1; kind: enum

# The enums (the nullable ones hold None too).
STEP_KINDS = frozenset({"reasoning", "search", "search_result", "answer", "other"})
CORRECT_SOURCES = frozenset({"em", "judge", "panel", "human", "source_data"})
BELIEFS = frozenset({"trajectory", "deduplicated", "oracle"})
RATER_KINDS = frozenset({"human", "judge", "rule"})
LABEL_VALUES = {
    "reasoning_type": frozenset({"InformationSynthesis", "PlanFormation", "StateAssessment", None}),
    "grounding": frozenset({"Grounded", "NotGrounded", None}),
    "search_type": frozenset({"InitialQuery", "RefinedQuery", "FollowUpQuery", "RepeatQuery", None}),
    "clarity": frozenset({"Clear", "Unclear", None}),
    "sufficiency": frozenset({"Sufficient", "Insufficient", None}),
}

#: The properties this module knows, per object of the schema (JSON pointer): the drift test's mirror.
KNOWN_PROPERTIES: dict[str, frozenset[str]] = {
    "#": frozenset(TRACE_TYPES),
    "#/properties/correct/oneOf/1": frozenset(CORRECT_TYPES),
    "#/properties/env": frozenset(ENV_TYPES),
    "#/properties/inline_labels": frozenset(INLINE_LABELS_TYPES),
    "#/$defs/source_ref": frozenset(SOURCE_REF_TYPES),
    "#/$defs/document": frozenset(DOCUMENT_TYPES),
    "#/$defs/step": frozenset(STEP_TYPES),
    "#/$defs/step/properties/labels": frozenset(LABEL_VALUES),
}


def _typed(obj: dict, types: dict[str, frozenset]) -> bool:
    """Every key of ``obj`` known and its value of an allowed exact type (raises KeyError on an unknown key)."""
    for key, value in obj.items():
        if type(value) not in types[key]:
            return False
    return True


def _str_list(values: list) -> bool:
    for v in values:
        if type(v) is not str:
            return False
    return True


def _unit(v: object) -> bool:
    """A number in [0, 1] (or null when the type allows it: checked before). NaN compares False."""
    return v is None or 0 <= v <= 1  # type: ignore[operator]


def _source_ref_ok(ref: dict) -> bool:
    """``#/$defs/source_ref`` (all optional; ``line`` an integer >= 1 or null)."""
    line = ref.get("line")
    return _typed(ref, SOURCE_REF_TYPES) and (line is None or line >= 1)


def _steps_ok(steps: list) -> bool:
    """Each step a ``#/$defs/step``, and the order rules in the same pass: each index above the
    previous one, each ``depends_on`` entry an index already seen (so an earlier step's). Raises
    KeyError on an unknown key or a missing required one."""
    previous = -1
    seen: dict[int, None] = {}  # the indices so far (``seen[i] = None`` is cheaper than set.add)
    for step in steps:
        if type(step) is not dict:
            return False
        for key, value in step.items():  # _typed(step, STEP_TYPES), inline
            if type(value) not in STEP_TYPES[key]:
                return False
        index = step["index"]  # required, as is kind
        if not previous < index <= INT64_MAX or step["kind"] not in STEP_KINDS:  # previous >= -1
            return False
        if "source_ref" in step:
            ref = step["source_ref"]
            if len(ref) == 5:
                # The usual shape, all five properties: a closed object of five properties and a dict of
                # five keys whose five lookups succeed have the same keys (a KeyError means one is unknown),
                # so the values are read by name, without a loop.
                line = ref["line"]
                if not (
                    type(ref["format"]) is str
                    and type(ref["file"]) in _STR_OR_NULL
                    and (line is None or (type(line) is int and line >= 1))
                    and type(ref["record_id"]) in _STR_OR_NULL
                    and type(ref["path"]) in _STR_OR_NULL
                ):
                    return False
            elif not _source_ref_ok(ref):
                return False
        if "labels" in step:
            for key, value in step["labels"].items():
                # type first: ``in`` needs a hashable value, and the enums hold only str and None
                if (value is not None and type(value) is not str) or value not in LABEL_VALUES[key]:
                    return False
        if "documents" in step:
            for doc in step["documents"]:
                if type(doc) is not dict:
                    return False
                for key, value in doc.items():
                    if type(value) not in DOCUMENT_TYPES[key]:
                        return False
                rank = doc.get("rank")
                if rank is not None and rank < 1:
                    return False
        if "depends_on" in step:
            for dep in step["depends_on"]:
                # seen holds only ints in [0, INT64_MAX], so membership checks the item's bounds too;
                # type first, since True == 1 would be found in seen.
                if type(dep) is not int or dep not in seen:
                    return False
        # Rare ones (seeking-environment steps): asked with `in`, which costs less than a get.
        if "passage_ids" in step and not _str_list(step["passage_ids"]):
            return False
        if ("completeness" in step and not _unit(step["completeness"])) or (
            "self_estimate" in step and not _unit(step["self_estimate"])
        ):
            return False
        seen[index] = None
        previous = index
    return True


def _correct_ok(correct: dict | None) -> bool:
    """``correct``: null, or ``{value, source, detail?}`` (the two ``oneOf`` branches have different
    JSON types, so at most one can hold)."""
    if correct is None:
        return True
    return _typed(correct, CORRECT_TYPES) and "value" in correct and correct.get("source") in CORRECT_SOURCES


def _env_ok(env: dict) -> bool:
    """``env``: all optional; two counts >= 1, an enum, a completeness in [0, 1]."""
    if not _typed(env, ENV_TYPES):
        return False
    get = env.get
    return (
        get("n_goal_passages", 1) >= 1
        and get("max_steps", 1) >= 1
        and get("belief", "oracle") in BELIEFS
        and 0 <= get("final_completeness", 0) <= 1
    )


def _inline_labels_ok(inline: dict) -> bool:
    """``inline_labels``: a non-empty ``rater`` (required: a missing one is a KeyError), an optional ``kind``."""
    return (
        _typed(inline, INLINE_LABELS_TYPES) and len(inline["rater"]) >= 1 and inline.get("kind", "human") in RATER_KINDS
    )


def quick_trace_check(trace: object) -> bool:
    """True only for a trace that ``trace.schema.json`` accepts and whose steps are in order; False
    when not sure (the caller then asks the exact checks, which also word the error).

    Examples
    --------
    >>> quick_trace_check({"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": []})
    True
    >>> quick_trace_check({"schema_version": "1.0", "trace_id": "", "agent": "a", "question": "q", "steps": []})
    False
    """
    if type(trace) is not dict:
        return False
    try:
        if not _typed(trace, TRACE_TYPES):
            return False
        if not trace.keys() >= TRACE_REQUIRED:
            return False
        if trace["schema_version"] != "1.0" or not trace["trace_id"] or not trace["agent"]:  # minLength 1
            return False
        get = trace.get
        return (
            _str_list(get("gold_answers", ()))
            and _correct_ok(get("correct"))
            and ("source" not in trace or _source_ref_ok(trace["source"]))
            and ("env" not in trace or _env_ok(trace["env"]))
            and ("inline_labels" not in trace or _inline_labels_ok(trace["inline_labels"]))
            and _steps_ok(trace["steps"])
        )
    except KeyError:  # an unknown key of a closed object, or a missing required one
        return False
