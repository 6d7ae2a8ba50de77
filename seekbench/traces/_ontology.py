"""The step-label ontology (spec section 1) and the one alias table for legacy spellings."""

from __future__ import annotations

import functools
import re

STEP_KINDS = ("reasoning", "search", "search_result", "answer", "other")

#: field -> allowed values, in canonical spelling.
LABEL_VALUES: dict[str, tuple[str, ...]] = {
    "reasoning_type": ("InformationSynthesis", "PlanFormation", "StateAssessment"),
    "grounding": ("Grounded", "NotGrounded"),
    "search_type": ("InitialQuery", "RefinedQuery", "FollowUpQuery", "RepeatQuery"),
    "clarity": ("Clear", "Unclear"),
    "sufficiency": ("Sufficient", "Insufficient"),
}

#: step kind -> label fields that apply to it.
FIELDS_BY_KIND: dict[str, tuple[str, ...]] = {
    "reasoning": ("reasoning_type", "grounding"),
    "search": ("search_type", "grounding"),
    "search_result": ("clarity", "sufficiency"),
    "answer": (),
    "other": (),
}

LABEL_FIELDS = tuple(LABEL_VALUES)

FIELD_ALIASES: dict[str, str] = {
    "groundness": "grounding",
    "groundedness": "grounding",
    "information_clarity": "clarity",
    "information_quality": "sufficiency",
    "quality": "sufficiency",
    "type": "reasoning_type",
}

KIND_ALIASES: dict[str, str] = {
    "reasoning": "reasoning",
    "think": "reasoning",
    "thought": "reasoning",
    "search": "search",
    "tool_call": "search",
    "search_result": "search_result",
    "observation": "search_result",
    "information": "search_result",
    "tool": "search_result",
    "answer": "answer",
    "correctanswer": "answer",
    "incorrectanswer": "answer",
    "final_answer": "answer",
}


@functools.lru_cache(maxsize=1024)  # a file spells its few step types and labels over and over
def _squash(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).lower()


_VALUE_LOOKUP: dict[str, dict[str, str]] = {
    field: {_squash(v): v for v in values} for field, values in LABEL_VALUES.items()
}
# Legacy and common spellings that do not squash to the canonical one.
_VALUE_LOOKUP["grounding"].update({"ungrounded": "NotGrounded", "notgrounded": "NotGrounded"})


def canonical_field(name: str) -> str | None:
    """Return the canonical label field for ``name`` (case-insensitive), or None if unknown."""
    key = name.strip().lower()
    key = FIELD_ALIASES.get(key, key)
    return key if key in LABEL_VALUES else None


def canonical_value(field: str, value: object) -> str | None:
    """Return the canonical spelling of ``value`` for ``field``, or None if it is outside the ontology.

    >>> canonical_value("grounding", "Not Grounded")
    'NotGrounded'
    """
    if not isinstance(value, str):
        return None
    return _VALUE_LOOKUP[field].get(_squash(value))


def canonical_kind(kind: object) -> str | None:
    """Map a step type as spelled in a source (``CorrectAnswer``, ``think``) to a step kind."""
    if not isinstance(kind, str):
        return None
    return KIND_ALIASES.get(_squash(kind).replace("searchresult", "search_result"))
