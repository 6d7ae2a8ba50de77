"""Text normalisation shared by answer matching and duplicate-query detection (spec section 6)."""

from __future__ import annotations

import re
import string

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lowercase, strip punctuation, drop articles a/an/the, collapse whitespace.

    >>> normalize_answer("The  River Thames!")
    'river thames'
    """
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_query(text: str) -> str:
    """Normalised query text for duplicate detection: the SQuAD normalisation."""
    return normalize_answer(text)
