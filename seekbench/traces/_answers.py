"""Exact match and token F1 of a final answer against gold answers (spec section 6)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ._normalize import normalize_answer


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
    best = 0.0
    for norm in gold_answers:
        g_tokens = norm.split()
        if not p_tokens or not g_tokens:
            best = max(best, float(p_tokens == g_tokens))
            continue
        overlap = sum((Counter(p_tokens) & Counter(g_tokens)).values())
        if overlap == 0:
            continue
        prec, rec = overlap / len(p_tokens), overlap / len(g_tokens)
        best = max(best, 2 * prec * rec / (prec + rec))
    return best


def em_f1(prediction: str, gold_answers: Sequence[str]) -> tuple[float, float]:
    """``(exact_match_score, f1_score_tokens)`` normalising each text once."""
    p = normalize_answer(prediction)
    golds = [normalize_answer(g) for g in gold_answers]
    return float(any(p == g for g in golds)), _f1_normalized(p, golds)
