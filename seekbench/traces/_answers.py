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
    p_tokens = normalize_answer(prediction).split()
    best = 0.0
    for g in gold_answers:
        g_tokens = normalize_answer(g).split()
        if not p_tokens or not g_tokens:
            best = max(best, float(p_tokens == g_tokens))
            continue
        overlap = sum((Counter(p_tokens) & Counter(g_tokens)).values())
        if overlap == 0:
            continue
        prec, rec = overlap / len(p_tokens), overlap / len(g_tokens)
        best = max(best, 2 * prec * rec / (prec + rec))
    return best
