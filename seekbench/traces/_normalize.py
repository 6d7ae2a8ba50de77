"""Text normalisation shared by answer matching and duplicate-query detection (spec section 6)."""

from __future__ import annotations

import functools
import re
import string

# Deletes exactly the ASCII punctuation of ``string.punctuation``, as SQuAD's ``remove_punc`` does
# (one regex pass is faster than ``str.translate`` with a deletion table).
_PUNCT = re.compile("[" + re.escape(string.punctuation) + "]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lowercase, strip punctuation, drop articles a/an/the, collapse whitespace.

    >>> normalize_answer("The  River Thames!")
    'river thames'
    """
    text = _PUNCT.sub("", text.lower())
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_query(text: str) -> str:
    """Normalised query text for duplicate detection: the SQuAD normalisation."""
    return normalize_answer(text)


@functools.lru_cache(maxsize=1 << 16)
def normalized(text: str) -> str:
    """:func:`normalize_answer` remembered for the last 65,536 distinct texts: a corpus repeats its
    gold answers, final answers and queries (many rollouts of one question), so most calls are hits."""
    return normalize_answer(text)
