"""The ``rules`` judge: deterministic lexical heuristics, no training, no model.

Each field is decided from the scores of :mod:`._scores` with fixed thresholds
(:data:`THRESHOLDS`). The thresholds were set by hand when the heuristics were
written, from what the labels mean (spec section 1), and were *not* fitted to
any labeled data; the agreement they reach with human labels is measured by
``seekbench judge evaluate`` and reported as it comes out.

reasoning_type
    Count the cue phrases of each type in the text (:data:`._scores.CUES`:
    "I need to", "Let me" -> PlanFormation; "Based on", "According to" ->
    InformationSynthesis; "not found", "unclear", "seems" -> StateAssessment).
    The type with most cues wins; ties go to StateAssessment, then
    PlanFormation, then InformationSynthesis. With no cue at all: PlanFormation
    before the first observation (nothing to assess or synthesise yet),
    StateAssessment after it (basis ``no-cue-position``).
grounding (reasoning)
    Grounded when at least half of the step's new content words (words not in
    the question) occur in earlier observations, and at least two of them do.
    Before any observation a reasoning step cannot be grounded in evidence:
    NotGrounded (basis ``no-evidence-yet``).
grounding (search)
    Grounded when at least half of the query's content words come from the
    question, earlier reasoning or earlier observations.
search_type
    InitialQuery / RepeatQuery by rule (see :mod:`._judge`). Otherwise
    RefinedQuery when the query's content words overlap the previous query's
    with Jaccard similarity >= 0.3 (the same need, reworded), else
    FollowUpQuery (a new need).
clarity
    Clear when one document covers at least 60% of the producing query's
    content words (a document squarely about what was asked).
sufficiency
    Sufficient when the trace's final answer occurs in the documents, or when
    one document covers at least 80% of the query's content words and all of
    its capitalised words and numbers; else Insufficient.

Empty steps (no reasoning text, no query, an observation with no documents and
no text) are unscored with the reason, never labeled.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._context import StepView
from ._judge import Decision, OfflineJudge
from ._scores import step_scores

#: Fixed thresholds of the rules judge (set a priori; see the module docstring).
THRESHOLDS: dict[str, float] = {
    "reasoning_grounding_support": 0.5,
    "reasoning_grounding_min_words": 2,
    "search_grounding_support": 0.5,
    "refined_prev_jaccard": 0.3,
    "clear_top_doc_query": 0.6,
    "sufficient_top_doc_query": 0.8,
}

#: Tie-break order among reasoning types with the same number of cues.
_TYPE_PRECEDENCE = ("StateAssessment", "PlanFormation", "InformationSynthesis")
_CUE_SCORE = {"PlanFormation": "cue_plan", "InformationSynthesis": "cue_synthesis", "StateAssessment": "cue_assessment"}

_EMPTY_REASON = {
    "reasoning": "reasoning step has no text",
    "search": "search step has no query",
    "search_result": "observation has no documents and no text",
}


def reasoning_type_rule(scores: dict[str, float]) -> Decision:
    """Cue-phrase vote for the reasoning type (see the module docstring)."""
    counts = {t: scores[_CUE_SCORE[t]] for t in _TYPE_PRECEDENCE}
    best = max(counts.values())
    if best <= 0:
        if scores["has_prior_obs"]:
            return Decision("StateAssessment", basis="no-cue-position")
        return Decision("PlanFormation", basis="no-cue-position")
    winner = next(t for t in _TYPE_PRECEDENCE if counts[t] == best)
    return Decision(winner, basis="cue-phrases")


def reasoning_grounding_rule(scores: dict[str, float]) -> Decision:
    """Grounded when the step's new words are mostly found in earlier observations."""
    if not scores["has_prior_obs"]:
        return Decision("NotGrounded", basis="no-evidence-yet")
    ok = (
        scores["support"] >= THRESHOLDS["reasoning_grounding_support"]
        and scores["n_supported"] >= THRESHOLDS["reasoning_grounding_min_words"]
    )
    return Decision("Grounded" if ok else "NotGrounded", basis="evidence-overlap")


def search_grounding_rule(scores: dict[str, float]) -> Decision:
    """Grounded when most query words come from the question or earlier visible text."""
    ok = scores["support"] >= THRESHOLDS["search_grounding_support"]
    return Decision("Grounded" if ok else "NotGrounded", basis="query-support")


def search_type_rule(scores: dict[str, float]) -> Decision:
    """RefinedQuery versus FollowUpQuery by overlap with the previous query."""
    refined = scores["prev_jaccard"] >= THRESHOLDS["refined_prev_jaccard"]
    return Decision("RefinedQuery" if refined else "FollowUpQuery", basis="previous-query-overlap")


def clarity_rule(scores: dict[str, float]) -> Decision:
    """Clear when one document covers most of the query."""
    clear = scores["top_doc_query"] >= THRESHOLDS["clear_top_doc_query"]
    return Decision("Clear" if clear else "Unclear", basis="query-coverage")


def sufficiency_rule(scores: dict[str, float]) -> Decision:
    """Sufficient when the final answer is in the documents or one document covers the whole query."""
    if scores["answer_in_docs"]:
        return Decision("Sufficient", basis="answer-in-documents")
    full = scores["top_doc_query"] >= THRESHOLDS["sufficient_top_doc_query"] and scores["query_entities"] >= 1.0
    return Decision("Sufficient" if full else "Insufficient", basis="query-coverage")


_RULES = {
    ("reasoning", "reasoning_type"): reasoning_type_rule,
    ("reasoning", "grounding"): reasoning_grounding_rule,
    ("search", "grounding"): search_grounding_rule,
    ("search", "search_type"): search_type_rule,
    ("search_result", "clarity"): clarity_rule,
    ("search_result", "sufficiency"): sufficiency_rule,
}


class RulesJudge(OfflineJudge):
    """Deterministic heuristics over each step and the documents it can see.

    Parameters
    ----------
    name : str, default "rules"
    version : str, default "1"

    Examples
    --------
    >>> trace = {"trace_id": "t", "question": "Where did Leo Bennett die?", "steps": [
    ...     {"index": 0, "kind": "reasoning", "text": "I need to find where Leo Bennett died."},
    ...     {"index": 1, "kind": "search", "query": "Leo Bennett death"}]}
    >>> [(r["field"], r["value"]) for r in RulesJudge().label_traces([trace], rater="rules")]
    [('reasoning_type', 'PlanFormation'), ('grounding', 'NotGrounded'), ('search_type', 'InitialQuery'), \
('grounding', 'Grounded')]
    """

    kind = "rules"

    def __init__(self, name: str = "rules", *, version: str = "1") -> None:
        super().__init__(name, version=version)

    def _decide(self, kind: str, field: str, views: Sequence[StepView]) -> list[Decision]:
        rule = _RULES.get((kind, field))
        out = []
        for view in views:
            if rule is None:
                out.append(Decision(None, reason=f"the rules judge has no heuristic for {field} on {kind} steps"))
            elif view.is_empty:
                out.append(Decision(None, reason=_EMPTY_REASON[kind]))
            else:
                out.append(rule(step_scores(view)))
        return out
