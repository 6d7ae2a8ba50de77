"""Evidence-detail scores of a reasoning step: how closely it follows the documents it has seen.

:mod:`._scores` measures a step's words against all earlier observations pooled; these
scores look at single documents, numbers, names and the step's distance from the latest
observation, because a grounded step usually restates one passage it has just read, while an
ungrounded one mixes the question's words with the model's own knowledge.

``doc_max_new`` / ``doc_max_all``
    Best single-document coverage (over every earlier document) of the step's new content
    words (not in the question), and of all its content words.
``last_doc_max_new``
    The same for the documents of the latest observation only.
``support_all``
    Coverage of all the step's content words by the earlier observations pooled.
``num_share`` / ``has_nums``
    Share of the step's numbers found in the earlier observations' text (-1 when the step
    has no number), and whether it has any.
``ent_share``
    Coverage of the step's capitalised words and numbers not in the question by the earlier
    observations (0 when there are none).
``log_len``
    log(1 + number of word tokens).
``steps_since_obs``
    Steps since the latest observation (-1 when none).
``answer_seen``
    The trace's final answer occurs in the earlier observations' text.
``has_prior_search`` / ``n_prior_obs``
    A search came before the step; the number of earlier observations.
"""

from __future__ import annotations

import math
import re

from ...traces import normalize_answer
from ._context import StepView
from ._text import content_words, coverage, entity_terms, tokens

#: Score names, in feature-column order (appended to the reasoning scores of :mod:`._scores`).
EVIDENCE_SCORE_NAMES: tuple[str, ...] = (
    "has_prior_search",
    "doc_max_new",
    "doc_max_all",
    "last_doc_max_new",
    "support_all",
    "num_share",
    "has_nums",
    "ent_share",
    "log_len",
    "steps_since_obs",
    "answer_seen",
    "n_prior_obs",
)

_NUMBER = re.compile(r"\d[\d,.]*")


def evidence_scores(view: StepView) -> dict[str, float]:
    """The scores of :data:`EVIDENCE_SCORE_NAMES` for a reasoning step (see the module docstring).

    Examples
    --------
    >>> v = StepView("t", 3, 3, "reasoning", 5, 1, "Leo Bennett died in 1971 in Thames Ditton.",
    ...              "Where did Leo Bennett die?", seen_doc_words=[{"thames", "ditton"}, {"1971", "died"}],
    ...              seen_obs_text="... died in 1971 ...", n_prior_obs=1, n_prior_searches=1)
    >>> sc = evidence_scores(v)  # new words: died, 1971, thames, ditton; each document holds 2 of 4
    >>> sc["doc_max_new"], sc["num_share"], sc["ent_share"]
    (0.5, 1.0, 0.0)
    """
    words = content_words(view.text)
    new = words - content_words(view.question)
    numbers = set(_NUMBER.findall(view.text))
    names = entity_terms(view.text) - entity_terms(view.question)
    answer = normalize_answer(view.final_answer) if view.final_answer else ""
    return {
        "has_prior_search": float(view.n_prior_searches > 0),
        "doc_max_new": max((coverage(new, d) for d in view.seen_doc_words), default=0.0),
        "doc_max_all": max((coverage(words, d) for d in view.seen_doc_words), default=0.0),
        "last_doc_max_new": max((coverage(new, d) for d in view.last_doc_words), default=0.0),
        "support_all": coverage(words, view.seen_obs_words),
        "num_share": sum(n in view.seen_obs_text for n in numbers) / len(numbers) if numbers else -1.0,
        "has_nums": float(bool(numbers)),
        "ent_share": coverage(names, view.seen_obs_words),
        "log_len": math.log1p(len(tokens(view.text))),
        "steps_since_obs": float(view.steps_since_obs),
        "answer_seen": float(bool(answer) and f" {answer} " in f" {normalize_answer(view.seen_obs_text)} "),
        "n_prior_obs": float(view.n_prior_obs),
    }
