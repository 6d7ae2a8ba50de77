"""Numeric scores of a step against what it can see (used by the rules judge and as learned features).

Every score is a plain lexical quantity in [0, 1] (shares and flags) or a
small count; :func:`step_scores` returns them under fixed names per step kind
(:data:`SCORE_NAMES`), so the learned judge's feature columns are stable.

Reasoning steps
    ``support``: share of the step's *new* content words (not in the question)
    that occur in earlier observations; ``support_last``: the same against the
    latest observation only; ``n_new``/``n_supported`` the counts behind them;
    ``cue_plan``/``cue_synthesis``/``cue_assessment``: cue phrases found
    (:data:`CUES`); ``states_answer``: the trace's final answer occurs in the text.
Search steps
    ``prev_jaccard``: Jaccard similarity of the query's content words with the
    previous query's; ``support``: share of the query's content words found in
    the question, earlier reasoning or earlier observations; ``question_overlap``;
    ``from_evidence``: share of query words that come from earlier observations
    and are in neither the question nor the previous query.
Observations
    ``top_doc_query``: best single-document coverage of the producing query's
    content words; ``all_docs_query``: coverage by all documents together;
    ``query_entities``: coverage of the query's capitalised words and numbers;
    (with no producing query, the question stands in for it);
    ``question``: coverage of the question's content words; ``answer_in_docs``:
    the trace's final answer occurs in the documents; ``n_docs``.
All kinds
    ``rel_pos`` (position in the trace, 0..1), ``turn``, ``has_prior_obs``.
"""

from __future__ import annotations

from ...traces import normalize_answer
from ._context import StepView
from ._text import content_words, count_cues, coverage, entity_terms, jaccard

#: Cue phrases per reasoning type (matched on word boundaries, case-insensitive).
CUES: dict[str, tuple[str, ...]] = {
    "PlanFormation": (
        "i need to",
        "i will",
        "i'll",
        "let me",
        "let's",
        "i should",
        "we need to",
        "next i",
        "next step",
        "first i",
        "then i",
        "now i need",
        "i must",
        "my plan",
        "search for",
        "look up",
        "to find out",
    ),
    "InformationSynthesis": (
        "based on",
        "according to",
        "therefore",
        "thus",
        "so the answer",
        "the answer is",
        "this means",
        "which means",
        "in summary",
        "combining",
        "we can conclude",
        "indicates that",
        "shows that",
        "confirms",
    ),
    "StateAssessment": (
        "not found",
        "no information",
        "not mention",
        "does not mention",
        "doesn't mention",
        "does not provide",
        "doesn't provide",
        "unclear",
        "seems",
        "it appears",
        "not sure",
        "i don't have",
        "i do not have",
        "i don't know",
        "couldn't find",
        "could not find",
        "not enough",
        "insufficient",
        "still need",
        "still not",
        "confusion",
        "mistake",
        "not directly",
        "no direct",
        "i am not",
        "i'm not",
    ),
}

_COMMON = ("rel_pos", "turn", "has_prior_obs")

#: Score names per step kind, in feature-column order.
SCORE_NAMES: dict[str, tuple[str, ...]] = {
    "reasoning": (
        "support",
        "support_last",
        "n_new",
        "n_supported",
        "cue_plan",
        "cue_synthesis",
        "cue_assessment",
        "states_answer",
        *_COMMON,
    ),
    "search": ("prev_jaccard", "support", "question_overlap", "from_evidence", "is_first", "repeats_earlier", *_COMMON),
    "search_result": (
        "top_doc_query",
        "all_docs_query",
        "query_entities",
        "question",
        "answer_in_docs",
        "n_docs",
        *_COMMON,
    ),
}


def _answer_in(answer: str | None, text: str) -> float:
    norm = normalize_answer(answer) if answer else ""
    if not norm:
        return 0.0
    return float(f" {norm} " in f" {normalize_answer(text)} ")


def step_scores(view: StepView) -> dict[str, float]:
    """Scores of one step, under the names ``SCORE_NAMES[view.kind]``.

    Parameters
    ----------
    view : StepView
        A reasoning, search or search_result step with its context.

    Returns
    -------
    dict of str to float
        Shares and flags in [0, 1], counts as non-negative numbers. Empty for other kinds.

    Examples
    --------
    >>> from seekbench.annotate.offline._context import StepView
    >>> v = StepView("t", 3, 3, "reasoning", 5, 1, "Leo Bennett died in Thames Ditton.", "Where did Leo Bennett die?",
    ...              seen_obs_words={"thames", "ditton", "surrey"}, n_prior_obs=1)
    >>> round(step_scores(v)["support"], 3)  # new words: died, thames, ditton; 2 of 3 seen
    0.667
    """
    if "scores" not in view.cache:
        view.cache["scores"] = _compute(view)
    return dict(view.cache["scores"])


def _compute(view: StepView) -> dict[str, float]:
    common = {
        "rel_pos": view.pos / max(view.n_steps - 1, 1),
        "turn": float(view.turn),
        "has_prior_obs": float(view.n_prior_obs > 0),
    }
    question_words = content_words(view.question)
    if view.kind == "reasoning":
        new = content_words(view.text) - question_words
        supported = new & view.seen_obs_words
        return {
            "support": coverage(new, view.seen_obs_words),
            "support_last": coverage(new, view.last_obs_words),
            "n_new": float(len(new)),
            "n_supported": float(len(supported)),
            "cue_plan": float(count_cues(view.text, CUES["PlanFormation"])),
            "cue_synthesis": float(count_cues(view.text, CUES["InformationSynthesis"])),
            "cue_assessment": float(count_cues(view.text, CUES["StateAssessment"])),
            "states_answer": _answer_in(view.final_answer, view.text),
            **common,
        }
    if view.kind == "search":
        q = content_words(view.query)
        prev = content_words(view.prev_query)
        visible = question_words | view.prior_reasoning_words | view.seen_obs_words
        fresh = q - question_words - prev
        return {
            "prev_jaccard": jaccard(q, prev),
            "support": coverage(q, visible),
            "question_overlap": coverage(q, question_words),
            "from_evidence": (len(fresh & view.seen_obs_words) / len(q)) if q else 0.0,
            "is_first": float(view.is_first_search),
            "repeats_earlier": float(view.repeats_earlier),
            **common,
        }
    if view.kind == "search_result":
        q = content_words(view.query) or question_words
        doc_words = [content_words(f"{d.get('title') or ''} {d.get('text') or ''}") for d in view.documents]
        every = set().union(*doc_words) if doc_words else content_words(view.text)
        best = max((coverage(q, w) for w in doc_words), default=coverage(q, every))
        ents = entity_terms(view.query)
        return {
            "top_doc_query": best,
            "all_docs_query": coverage(q, every),
            "query_entities": coverage(ents, every) if ents else best,
            "question": coverage(question_words, every),
            "answer_in_docs": _answer_in(view.final_answer, view.text),
            "n_docs": float(len(view.documents)),
            **common,
        }
    return {}
