"""Exact match and token F1 of a final answer against gold answers (spec section 6)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ._normalize import normalize_answer, normalized


def exact_match_score(prediction: str, gold_answers: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals any normalised gold answer, else 0.0.

    >>> exact_match_score("the River Thames", ["River Thames"])
    1.0
    """
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in gold_answers))


def f1_score_tokens(prediction: str, gold_answers: Sequence[str]) -> float:
    """Token F1 with SQuAD normalisation, max over gold answers; in [0, 1].

    F1 = 2 * P * R / (P + R) with P = overlap / |prediction tokens|, R = overlap / |gold tokens|.

    >>> round(f1_score_tokens("river thames london", ["River Thames"]), 4)
    0.8
    """
    return _f1_normalized(normalize_answer(prediction), [normalize_answer(g) for g in gold_answers])


def _f1_normalized(prediction: str, gold_answers: Sequence[str]) -> float:
    """:func:`f1_score_tokens` of already normalised texts."""
    p_tokens = prediction.split()
    p_counts = None
    best = 0.0
    for norm in gold_answers:
        g_tokens = norm.split()
        if p_tokens == g_tokens or not p_tokens or not g_tokens:
            # Equal token lists: overlap = |p| = |g|, so P = R = 1 and F1 = 1.0 exactly, as the formula gives.
            best = max(best, float(p_tokens == g_tokens))
            continue
        if p_counts is None:
            p_counts = _counts(p_tokens)
        # The multiset overlap sum over tokens of min(count in p, count in g) (Counter's ``&``).
        overlap = 0
        for token, k in _counts(g_tokens).items():
            if m := p_counts.get(token):
                overlap += m if m < k else k
        if overlap == 0:
            continue
        prec, rec = overlap / len(p_tokens), overlap / len(g_tokens)
        best = max(best, 2 * prec * rec / (prec + rec))
    return best


def _counts(tokens: list[str]) -> dict[str, int]:
    """How often each token occurs (a plain dict: answers are a few tokens, where Counter's setup dominates)."""
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return counts


def em_f1(prediction: str, gold_answers: Sequence[str]) -> tuple[float, float]:
    """``(exact_match_score, f1_score_tokens)`` normalising each text once.

    Memoised on the texts: rollouts of one question often repeat its answer.
    """
    return _em_f1(prediction, tuple(gold_answers))


@functools.lru_cache(maxsize=1 << 14)
def _em_f1(prediction: str, gold_answers: tuple[str, ...]) -> tuple[float, float]:
    p = normalized(prediction)
    golds = [normalized(g) for g in gold_answers]
    return float(p in golds), _f1_normalized(p, golds)
