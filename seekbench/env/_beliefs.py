"""Belief representations (spec section 7): what the agent sees of its episode so far.

- ``trajectory``: the verbatim query/observation history, repeats included.
- ``deduplicated``: the unique retrieved passages, in document order.
- ``oracle``: the document's section structure with retrieved passages in
  place and each missing passage as a ``<missing id=pJ>`` placeholder
  (privileged: it reveals N and where the gaps are; an upper bound).

All three start from the document's title and abstract. A :class:`Belief`
carries the rendered text (what an LLM agent reads) and the same content as
data (what the scripted agents read), so both see exactly the same things.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._corpus import goal_passages

BELIEFS = ("trajectory", "deduplicated", "oracle")
BeliefKind = Literal["trajectory", "deduplicated", "oracle"]
NO_RESULT = "(no passage above the similarity threshold)"


def missing_placeholder(passage_id: str) -> str:
    """``<missing id=pJ>``, the oracle belief's placeholder for an unretrieved passage."""
    return f"<missing id={passage_id}>"


@dataclass(frozen=True)
class QueryRecord:
    """One query of the episode and the goal passages it returned (positions in document order)."""

    step: int
    query: str
    positions: tuple[int, ...]


@dataclass(frozen=True)
class Gap:
    """Oracle only: one missing passage, its section, and the nearest retrieved passages of its section
    before and after it (None when there is none)."""

    passage_id: str
    position: int
    section: str
    previous_text: str | None
    next_text: str | None = None


@dataclass
class Belief:
    """The agent's view at the start of a step.

    Attributes
    ----------
    kind : str
        ``trajectory``, ``deduplicated`` or ``oracle``.
    title, abstract : str
    text : str
        The rendered belief.
    passages : list of (str, str, str)
        ``(passage id, section title or "", text)`` as shown, in the order shown
        (the trajectory belief repeats passages retrieved more than once; only
        the oracle belief shows section titles).
    history : list of (int, str, tuple of str)
        Trajectory belief only: ``(step, query, returned passage ids)`` per earlier query.
    gaps : list of Gap
        Oracle belief only.
    n_goal : int or None
        N, known only to the oracle belief.
    """

    kind: str
    title: str
    abstract: str
    text: str
    passages: list[tuple[str, str, str]] = field(default_factory=list)
    history: list[tuple[int, str, tuple[str, ...]]] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    n_goal: int | None = None

    @property
    def queries(self) -> list[str]:
        """Earlier queries, as the belief shows them (only the trajectory belief does)."""
        return [q for _, q, _ in self.history]

    @property
    def n_visible(self) -> int:
        """Distinct passages shown."""
        return len({pid for pid, _, _ in self.passages})


def _header(document: dict) -> list[str]:
    return [f"TITLE: {document['title']}", f"ABSTRACT: {document['abstract']}", ""]


def build_belief(kind: str, document: dict, history: list[QueryRecord]) -> Belief:
    """Render the belief ``kind`` of an episode on ``document`` after the queries in ``history``.

    Parameters
    ----------
    kind : {"trajectory", "deduplicated", "oracle"}
    document : dict
        The corpus document.
    history : list of QueryRecord
        Every query so far with the passages it returned, in order.

    Returns
    -------
    Belief

    Raises
    ------
    ValueError
        An unknown kind.

    Examples
    --------
    >>> doc = {"title": "T", "abstract": "A.", "sections": [{"title": "S", "passages": [
    ...     {"id": "p0", "text": "zero"}, {"id": "p1", "text": "one"}]}]}
    >>> print(build_belief("oracle", doc, [QueryRecord(1, "q", (1,))]).text)
    TITLE: T
    ABSTRACT: A.
    <BLANKLINE>
    DOCUMENT STRUCTURE (2 passages; retrieved passages in place, missing ones as placeholders):
    ## S
    <missing id=p0>
    [p1] one
    """
    passages = goal_passages(document)
    retrieved = sorted({i for rec in history for i in rec.positions})
    lines = _header(document)
    if kind == "trajectory":
        shown, seen = [], []
        if not history:
            lines.append("HISTORY: no queries yet.")
        else:
            lines.append("HISTORY (every query and what it returned, in order):")
        for rec in history:
            seen.append((rec.step, rec.query, tuple(passages[i]["id"] for i in rec.positions)))
            lines.append(f"step {rec.step} query: {rec.query}")
            if not rec.positions:
                lines.append(f"  {NO_RESULT}")
            for i in rec.positions:
                p = passages[i]
                shown.append((p["id"], "", p["text"]))
                lines.append(f"  [{p['id']}] {p['text']}")
        return Belief(kind, document["title"], document["abstract"], "\n".join(lines), shown, seen)
    if kind == "deduplicated":
        shown = [(passages[i]["id"], "", passages[i]["text"]) for i in retrieved]
        lines.append(
            f"RETRIEVED PASSAGES ({len(shown)} unique, in document order):"
            if shown
            else "RETRIEVED PASSAGES: none yet."
        )
        lines += [f"[{pid}] {text}" for pid, _, text in shown]
        return Belief(kind, document["title"], document["abstract"], "\n".join(lines), shown)
    if kind == "oracle":
        got = set(retrieved)
        shown, gaps = [], []
        lines.append(
            f"DOCUMENT STRUCTURE ({len(passages)} passages; retrieved passages in place, missing ones as placeholders):"
        )
        pos = 0
        for sec in document["sections"]:
            lines.append(f"## {sec['title']}")
            previous: str | None = None
            open_gaps: list[Gap] = []
            for p in sec["passages"]:
                if pos in got:
                    shown.append((p["id"], sec["title"], p["text"]))
                    lines.append(f"[{p['id']}] {p['text']}")
                    previous = p["text"]
                    gaps += [Gap(g.passage_id, g.position, g.section, g.previous_text, p["text"]) for g in open_gaps]
                    open_gaps = []
                else:
                    open_gaps.append(Gap(p["id"], pos, sec["title"], previous))
                    lines.append(missing_placeholder(p["id"]))
                pos += 1
            gaps += open_gaps
        gaps.sort(key=lambda g: g.position)
        return Belief(kind, document["title"], document["abstract"], "\n".join(lines), shown, [], gaps, len(passages))
    raise ValueError(f"unknown belief {kind!r}; use one of {', '.join(BELIEFS)}")
