"""Scripted answers to every prompt seekbench ships, so each shipped judge works against the mock server.

The default policy (:data:`default_policy`) reads the fences of the last user
message and answers in the format the prompt asks for:

- ``<<<STEPS_JSON`` (``step_labels_v1``): step labels, by :class:`StepLabeler`;
- ``<<<CANDIDATE_JSON`` (``answer_v1``, ``answer_false_premise_v1``): ``Yes``
  when the candidate, normalised as exact match normalises (spec section 6),
  equals or contains a normalised gold answer, else ``No``;
- ``<<<STATEMENTS_JSON`` (``coverage_v1``): ``{"covered": {id: bool}}``, true
  when every content word of the statement occurs in an observation;
- ``<<<BELIEF_JSON`` after ``Step N of M`` (``seeker_agent_v1``): two queries
  made of belief words, and a self-estimate from a hash of the belief;
- ``<<<BELIEF_JSON`` otherwise (``completeness_estimate_v1``): a completeness
  from a hash of the belief.

A request carrying none of these fences is answered with HTTP 400 naming the
fences the server knows. Every answer is a function of the request alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from ..traces import normalize_answer
from ._protocol import STEPS_BEGIN, PolicyError, StepLabeler, required_user_text

ANSWER_FENCES = ("<<<QUESTION_JSON", "<<<GOLD_ANSWERS_JSON", "<<<CANDIDATE_JSON")
STATEMENTS_BEGIN, HISTORY_BEGIN, BELIEF_BEGIN = "<<<STATEMENTS_JSON", "<<<HISTORY_JSON", "<<<BELIEF_JSON"
KNOWN_FENCES = (STEPS_BEGIN, "<<<CANDIDATE_JSON", STATEMENTS_BEGIN, BELIEF_BEGIN)
_STEP_LINE = re.compile(r"^Step \d+ of \d+\.", re.MULTILINE)
_WORD = re.compile(r"[^\W\d_]{4,}")


def fenced_json(text: str, begin: str) -> Any:
    """The JSON value between the line ``begin`` and its closing line (``NAME>>>``)."""
    end = begin[3:] + ">>>"
    lines = text.split("\n")
    try:
        i = next(n for n, line in enumerate(lines) if line.strip() == begin)
        j = next(n for n in range(i + 1, len(lines)) if lines[n].strip() == end)
    except StopIteration:
        raise PolicyError(f"seekbench mock server: no {begin} ... {end} block in the last user message") from None
    try:
        return json.loads("\n".join(lines[i + 1 : j]))
    except json.JSONDecodeError as e:
        raise PolicyError(f"seekbench mock server: the {begin} block is not valid JSON: {e}") from e


def _fraction(text: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}\x1f{text}".encode()).digest()
    return round(int.from_bytes(digest[:4], "big") / 2**32, 3)


def grade_answer(text: str) -> str:
    """``Yes`` when the normalised candidate equals or contains a normalised gold answer, else ``No``."""
    candidate = normalize_answer(str(fenced_json(text, "<<<CANDIDATE_JSON")))
    gold = fenced_json(text, "<<<GOLD_ANSWERS_JSON")
    golds = [normalize_answer(str(g)) for g in (gold if isinstance(gold, list) else [gold])]
    hit = any(g and (g == candidate or f" {g} " in f" {candidate} ") for g in golds)
    return "Yes" if hit else "No"


def mark_coverage(text: str) -> str:
    """``{"covered": {id: bool}}``: a statement is covered when an observation holds all its content words."""
    statements = fenced_json(text, STATEMENTS_BEGIN)
    history = fenced_json(text, HISTORY_BEGIN)
    seen = [
        set(_WORD.findall(str(h.get("text", "")).lower()))
        for h in history
        if isinstance(h, Mapping) and h.get("kind") == "observation"
    ]
    covered = {}
    for s in statements:
        words = set(_WORD.findall(str(s.get("statement", "")).lower()))
        covered[str(s.get("id"))] = bool(words) and any(words <= obs for obs in seen)
    return json.dumps({"covered": covered})


def seek(text: str) -> str:
    """Two queries of belief words not yet queried, and a self-estimate from a hash of the belief."""
    belief = str(fenced_json(text, BELIEF_BEGIN))
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(belief)))
    found = re.search(r"Step (\d+)", text)
    if found is None:
        raise ValueError("a seek prompt names its step as 'Step N'")
    step = int(found.group(1))
    picks = words[(step - 1) * 6 : (step - 1) * 6 + 6] or words[:6] or ["overview"]
    queries = [" ".join(picks[:3]), " ".join(picks[3:]) or picks[0]]
    return json.dumps(
        {
            "reasoning": "scripted by the seekbench mock server",
            "queries": queries,
            "self_estimate": _fraction(belief, "seek"),
        }
    )


def estimate_completeness(text: str) -> str:
    """``{"completeness": x, "reasoning": ...}`` with x from a hash of the belief."""
    belief = fenced_json(text, BELIEF_BEGIN)
    return json.dumps(
        {
            "completeness": _fraction(json.dumps(belief), "completeness"),
            "reasoning": "scripted by the seekbench mock server",
        }
    )


class ShippedPrompts:
    """The default policy: answer whichever shipped prompt the request carries (see the module docstring).

    Parameters
    ----------
    steps : StepLabeler, optional
        Labels step-label prompts (default ``StepLabeler()``).
    """

    def __init__(self, steps: StepLabeler | None = None) -> None:
        self.steps = steps if steps is not None else StepLabeler()

    def __repr__(self) -> str:
        return f"ShippedPrompts(steps={self.steps!r})"

    def __call__(self, request: Mapping[str, Any]) -> str:
        text = required_user_text(request)
        fences = {line.strip() for line in text.split("\n") if line.strip().startswith("<<<")}
        if STEPS_BEGIN in fences:
            return self.steps(request)
        if "<<<CANDIDATE_JSON" in fences:
            return grade_answer(text)
        if STATEMENTS_BEGIN in fences:
            return mark_coverage(text)
        if BELIEF_BEGIN in fences:
            return seek(text) if _STEP_LINE.search(text) else estimate_completeness(text)
        raise PolicyError(
            "seekbench mock server: the last user message carries none of the fences of seekbench's "
            f"prompts ({', '.join(KNOWN_FENCES)}); pass a policy for other prompts"
        )


default_policy = ShippedPrompts()
