"""Tokens, content words and overlap scores shared by the offline judges.

Everything here is plain lexical matching: lowercase word tokens, a small
stop-word list written for this module, and set overlaps. No stemming, no
embeddings, no external resources, so the offline judges are deterministic and
run anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

#: Function words and the vocabulary agents use to talk *about* searching
#: ("information", "search", "need"), which says nothing about the evidence.
STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are as at be been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just let lets me more most my no nor not now of off on once
only or other our out over own same she should so some such than that the their them then there these they
this those through to too under until up very was we were what when where which while who whom why will
with would you your yours s t d ll re ve m don didn doesn isn wasn weren aren couldn shouldn wouldn won
one first second next still yet however may might must shall us
information info search searching searched find found finding need needs needed know known provided
provide provides question questions answer answers result results mention mentions mentioned mentioning
based according specific specifically seems seem appears appear likely clear unclear determine identify
look looking try trying get got think thought further additional directly step steps now
query queries data context given text document documents source sources available detail details
""".split()
)


def tokens(text: str | None) -> list[str]:
    """Lowercase word tokens of ``text`` (letters and digits; punctuation and ``_`` split words).

    >>> tokens("Leo Bennett's place-of-death")
    ['leo', 'bennett', 's', 'place', 'of', 'death']
    """
    if not text:
        return []
    return _WORD.findall(text.lower())


def content_words(text: str | None) -> set[str]:
    """The set of tokens of ``text`` that are not stop words (single letters dropped, digits kept).

    >>> sorted(content_words("I need to find where Leo Bennett died in 1971"))
    ['1971', 'bennett', 'died', 'leo']
    """
    return {t for t in tokens(text) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())}


def entity_terms(text: str | None) -> set[str]:
    """Lowercased tokens written capitalised or as numbers in ``text``: a cheap named-entity proxy.

    A capitalised word at the start of a sentence counts too unless it is a stop word.

    >>> sorted(entity_terms("Which river flows by Thames Ditton in 1971?"))
    ['1971', 'ditton', 'thames']
    """
    if not text:
        return set()
    out = set()
    for word in _WORD.findall(text):
        low = word.lower()
        if low in STOPWORDS:
            continue
        if word[0].isupper() or word.isdigit():
            out.add(low)
    return out


def word_bigrams(text: str | None) -> set[tuple[str, str]]:
    """Pairs of adjacent tokens of ``text``, leaving out pairs of two stop words.

    A step that repeats a phrase of a document shares its bigrams; one that only
    reuses its words in another order does not.

    >>> sorted(word_bigrams("Born in the city of Leeds"))  # ("in", "the"): two stop words
    [('born', 'in'), ('city', 'of'), ('of', 'leeds'), ('the', 'city')]
    """
    toks = tokens(text)
    return {(a, b) for a, b in zip(toks, toks[1:], strict=False) if not (a in STOPWORDS and b in STOPWORDS)}


def coverage(needles: set[str], haystack: set[str]) -> float:
    """Share of ``needles`` found in ``haystack``, in [0, 1]; NaN-free: 0.0 when ``needles`` is empty.

    >>> coverage({"a", "b"}, {"a", "c"})
    0.5
    """
    if not needles:
        return 0.0
    return len(needles & haystack) / len(needles)


def jaccard(a: set[str], b: set[str]) -> float:
    """Jaccard similarity ``|a & b| / |a | b|``; 0.0 when both are empty.

    >>> jaccard({"a", "b"}, {"b", "c"})
    0.3333333333333333
    """
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def count_cues(text: str | None, cues: Iterable[str]) -> int:
    """Number of cue phrases occurring in ``text`` (case-insensitive, on word boundaries).

    >>> count_cues("Based on this, I need to search again.", ["based on", "i need to", "according to"])
    2
    """
    if not text:
        return 0
    low = " " + " ".join(tokens(_drop_apostrophes(text))) + " "
    return sum(1 for cue in cues if " " + " ".join(tokens(_drop_apostrophes(cue))) + " " in low)


def _drop_apostrophes(text: str) -> str:
    return text.replace("'", "").replace("\u2019", "")
