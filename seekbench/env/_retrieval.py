"""Retrieval per spec section 7: a query returns every goal passage with cosine strictly above theta.

``O(s, a) = {x in X_goal : cos(embed(a), embed(x)) > theta}`` (SeekerGym
section 2.2). The retrieved set only grows (``s_{t+1} = s_t OR 1[O(s_t,
a_t)]``), so completeness ``c_t = |retrieved_t| / N`` is non-decreasing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._corpus import goal_passages


def retrieve(query_vector: np.ndarray, passage_vectors: np.ndarray, theta: float) -> list[tuple[int, float]]:
    """Indices and cosines of the passages with cosine strictly greater than ``theta``.

    Parameters
    ----------
    query_vector : array of shape (d,)
        Unit-norm query embedding.
    passage_vectors : array of shape (N, d)
        Unit-norm passage embeddings.
    theta : float
        The threshold; a passage at exactly ``theta`` is not retrieved.

    Returns
    -------
    list of (int, float)
        ``(passage index, cosine)``, highest cosine first (ties in document order).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    >>> retrieve(np.array([1.0, 0.0]), P, 0.6)
    [(0, 1.0)]
    >>> [i for i, _ in retrieve(np.array([1.0, 0.0]), P, 0.59)]
    [0, 1]
    """
    if passage_vectors.size == 0:
        return []
    scores = passage_vectors @ np.asarray(query_vector, dtype=passage_vectors.dtype)
    # compare at the vectors' precision: a float32 cosine equal to float32(theta) is "at theta", not above it
    hits = np.flatnonzero(scores > scores.dtype.type(theta))
    order = sorted(hits.tolist(), key=lambda i: (-float(scores[i]), i))
    return [(i, float(scores[i])) for i in order]


@dataclass(frozen=True)
class Hit:
    """One retrieved goal passage."""

    passage_id: str
    position: int
    score: float
    section: str
    text: str


class DocumentIndex:
    """The goal passages of one document, embedded once, searchable by query text.

    Parameters
    ----------
    document : dict
        A corpus document.
    embedder : Embedder
        Fitted already when it needs fitting (TF-IDF).
    """

    def __init__(self, document: dict, embedder) -> None:
        self.document = document
        self.embedder = embedder
        self.passages = goal_passages(document)
        self.ids = [p["id"] for p in self.passages]
        self.sections = [s["title"] for s in document["sections"] for _ in s["passages"]]
        self.vectors = embedder.embed([p["text"] for p in self.passages])
        # Only dimensions where some passage is non-zero can contribute to a cosine (sparse TF-IDF vectors
        # have few); scoring on them alone gives the same dot products, faster.
        self._support = np.flatnonzero(np.any(self.vectors != 0, axis=0))
        self._reduced = np.ascontiguousarray(self.vectors[:, self._support])

    @property
    def n(self) -> int:
        """N, the number of goal passages."""
        return len(self.passages)

    def search(self, query: str, theta: float) -> list[Hit]:
        """:func:`retrieve` for a query text, as :class:`Hit` objects."""
        q = self.embedder.embed([query])[0]
        return [
            Hit(self.ids[i], i, s, self.sections[i], self.passages[i]["text"])
            for i, s in retrieve(q[self._support], self._reduced, theta)
        ]


class RetrievalState:
    """The retrieved-passage indicator ``s_t``: grows monotonically, never shrinks.

    Examples
    --------
    >>> s = RetrievalState(4)
    >>> s.add([2, 0]), s.add([0, 3]), s.completeness
    ([0, 2], [3], 0.75)
    """

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("a document needs at least one goal passage")
        self.n = n
        self._retrieved: set[int] = set()

    def add(self, positions) -> list[int]:
        """Mark passages retrieved; return the newly retrieved positions, in document order."""
        new = sorted(set(positions) - self._retrieved)
        self._retrieved.update(new)
        return new

    @property
    def retrieved(self) -> list[int]:
        """Retrieved positions in document order."""
        return sorted(self._retrieved)

    @property
    def completeness(self) -> float:
        """``|retrieved| / N`` in [0, 1]."""
        return len(self._retrieved) / self.n
