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
``q_last_best`` / ``qent_last_best`` / ``q_seen_best`` / ``qent_seen_best``
    Best single-document coverage of the question's content words, and of its capitalised
    words and numbers, in the latest observation and in all earlier ones: whether retrieval
    found a page about the question's subject at all (annotators rarely call a step grounded
    in documents about a namesake).
``ans_last``
    The trace's final answer occurs in the latest observation's text.
``best_doc_q``
    Question coverage of the document that best covers the step's new words.
``n_new_ent`` / ``n_new_ent_sup``
    The step's capitalised words and numbers not in the question, and how many of them the
    earlier documents hold.
``bigram_seen`` / ``bigram_last`` / ``n_bigram_seen``
    Share of the step's word bigrams (:func:`._text.word_bigrams`) found in the earlier
    documents, in the latest observation's, and their count: restating a phrase, not just words.
``starts_plan`` / ``q_restate`` / ``new_ratio``
    The step opens like a plan ("I need to", "let me", ...); the share of its content words
    that restate the question; the share that are new.
``subject_claim_last``
    Over the documents of the latest observation, the best of the smaller of two coverages:
    of the question's names and of the step's new names (capitalised words and numbers); -1
    when the question or the step names nothing. High when one document names both the
    question's subject and what the step claims of it; a step that takes its claim from a page
    about something else (a namesake, a neighbouring topic) scores low on it although its
    words are all in the documents, and annotators call such steps not grounded.

Trace context (:data:`CONTEXT_SCORE_NAMES`): annotators label a trace's reasoning steps alike
(in the SeekBench human labels, a step after retrieval is grounded 66% of the time when another
such step of its trace is, 17% when not), so a step also gets the mean of some of these scores
over the *other* reasoning steps of its trace that follow an observation (``ctx_*``, rounded to
6 decimals), and
``ctx_n`` flags that there are any. These read the whole trace, as a judge reading it would;
never a label and never a gold answer.
"""

from __future__ import annotations

import math
import re

from ...traces import normalize_answer
from ._context import StepView
from ._scores import step_scores
from ._text import content_words, coverage, entity_terms, tokens, word_bigrams

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
    "q_last_best",
    "qent_last_best",
    "q_seen_best",
    "qent_seen_best",
    "ans_last",
    "best_doc_q",
    "n_new_ent",
    "n_new_ent_sup",
    "bigram_seen",
    "bigram_last",
    "n_bigram_seen",
    "starts_plan",
    "q_restate",
    "new_ratio",
    "subject_claim_last",
)

#: The scores averaged over the other reasoning steps of the trace (``ctx_<name>``).
CONTEXT_OF: tuple[str, ...] = ("bigram_seen", "doc_max_all", "support_all", "q_seen_best", "ent_share", "cue_plan")

#: Trace-context score names, in feature-column order (after :data:`EVIDENCE_SCORE_NAMES`).
CONTEXT_SCORE_NAMES: tuple[str, ...] = (*(f"ctx_{n}" for n in CONTEXT_OF), "ctx_n")

_NUMBER = re.compile(r"\d[\d,.]*")
_PLAN_START = re.compile(r"^\W*(\d+\.\s*)?(i need to|i will|let me|let's|i should|next,? i|to answer|first,? i)")


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
    >>> sc["q_seen_best"], sc["n_new_ent"]  # leo, bennett, die in no document; names 1971, thames, ditton
    (0.0, 3.0)
    """
    words = content_words(view.text)
    q_words, q_ents = content_words(view.question), entity_terms(view.question)
    new = words - q_words
    numbers = set(_NUMBER.findall(view.text))
    step_ents = entity_terms(view.text) - q_ents  # the step's names not in the question
    answer = normalize_answer(view.final_answer) if view.final_answer else ""
    docs = view.seen_doc_words
    best = max(range(len(docs)), key=lambda i: coverage(new, docs[i]), default=None)  # first of the best
    qent_last = [coverage(q_ents, d) for d in view.last_doc_words]  # per document of the latest observation
    bigrams = word_bigrams(view.text)
    seen = {b for b in bigrams if any(b in s for s in view.seen_bigrams)}
    return {
        "has_prior_search": float(view.n_prior_searches > 0),
        "doc_max_new": max((coverage(new, d) for d in view.seen_doc_words), default=0.0),
        "doc_max_all": max((coverage(words, d) for d in view.seen_doc_words), default=0.0),
        "last_doc_max_new": max((coverage(new, d) for d in view.last_doc_words), default=0.0),
        "support_all": coverage(words, view.seen_obs_words),
        "num_share": sum(n in view.seen_obs_text for n in numbers) / len(numbers) if numbers else -1.0,
        "has_nums": float(bool(numbers)),
        "ent_share": coverage(step_ents, view.seen_obs_words),
        "log_len": math.log1p(len(tokens(view.text))),
        "steps_since_obs": float(view.steps_since_obs),
        "answer_seen": float(bool(answer) and f" {answer} " in f" {normalize_answer(view.seen_obs_text)} "),
        "n_prior_obs": float(view.n_prior_obs),
        "q_last_best": max((coverage(q_words, d) for d in view.last_doc_words), default=0.0),
        "qent_last_best": max(qent_last, default=0.0),
        "q_seen_best": max((coverage(q_words, d) for d in docs), default=0.0),
        "qent_seen_best": max((coverage(q_ents, d) for d in docs), default=0.0),
        "ans_last": float(bool(answer) and f" {answer} " in f" {normalize_answer(view.last_obs_text)} "),
        "best_doc_q": coverage(q_words, docs[best]) if best is not None else 0.0,
        "n_new_ent": float(len(step_ents)),
        "n_new_ent_sup": float(len(step_ents & set().union(*docs))),
        "bigram_seen": len(seen) / len(bigrams) if bigrams else 0.0,
        "bigram_last": len(bigrams & view.last_bigrams) / len(bigrams) if bigrams else 0.0,
        "n_bigram_seen": float(len(seen)),
        "starts_plan": float(bool(_PLAN_START.match(view.text.strip().lower()))),
        "q_restate": coverage(words, q_words),
        "new_ratio": len(new) / len(words) if words else 0.0,
        "subject_claim_last": max(
            (min(q, coverage(step_ents, d)) for q, d in zip(qent_last, view.last_doc_words, strict=True)),
            default=0.0,
        )
        if q_ents and step_ents
        else -1.0,
    }


def _base(view: StepView) -> dict[str, float]:
    if "evidence_base" not in view.cache:
        view.cache["evidence_base"] = {**step_scores(view), **evidence_scores(view)}
    return view.cache["evidence_base"]


def context_scores(view: StepView) -> dict[str, float]:
    """The scores of :data:`CONTEXT_SCORE_NAMES` for a reasoning step (see the module docstring).

    The other non-empty reasoning steps of ``view.trace_steps`` that follow an observation
    count; with none, every score is 0.0.
    """
    # The trace's sums once (kept with its first view; keyed by the trace's length, in case views
    # are scored before the trace is complete), minus the step's own: linear in the trace's length.
    steps = view.trace_steps
    holder = steps[0].cache if steps else view.cache
    key = ("context_sums", len(steps))
    if key not in holder:
        counted = [_base(u) for u in steps if _counts(u)]
        holder[key] = (len(counted), {n: sum(sc[n] for sc in counted) for n in CONTEXT_OF})
    n, sums = holder[key]
    own = _base(view) if _counts(view) and view.pos < len(steps) and steps[view.pos] is view else None
    k = n - (own is not None)
    # Rounded: the sum-minus-own arithmetic differs from a direct mean in the last bits, and a
    # tree split on a tie would follow such noise (the embedding scores are rounded for the same reason).
    out = {c: (round((sums[c] - (own[c] if own else 0.0)) / k, 6) if k else 0.0) for c in CONTEXT_OF}
    return {**{f"ctx_{c}": v for c, v in out.items()}, "ctx_n": float(k > 0)}


def _counts(u: StepView) -> bool:
    return u.kind == "reasoning" and u.n_prior_obs > 0 and not u.is_empty


def grounding_scores(view: StepView) -> dict[str, float]:
    """:func:`evidence_scores` and :func:`context_scores` of a reasoning step, memoised in ``view.cache``."""
    if "evidence" not in view.cache:
        base = _base(view)
        view.cache["evidence"] = {
            **{n: base[n] for n in EVIDENCE_SCORE_NAMES},
            **context_scores(view),
        }
    return view.cache["evidence"]
