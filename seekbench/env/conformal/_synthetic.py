"""Synthetic belief states for conformal calibration (spec section 8; SeekerGym Algorithm 1, appendix B.3).

For a document with N goal passages (every passage of every section) and an
interval width Delta, K = ceil(N / Delta) states are drawn. State k draws the
number of missing passages r uniformly from the integers in
[k * Delta, min((k + 1) * Delta, N) - 1] and keeps a uniformly random subset
of N - r passages; its true completeness is c = (N - r) / N. States of
different documents and of different k are drawn independently, so the pool is
exchangeable (conformal calibration needs that; agent trajectories are not).

A state is stored as ids only; :func:`render_belief` turns it into what an
estimator sees: the deduplicated belief (title, abstract, the visible passages
in document order with their section titles), never N and never the passage
ids (sequential ids such as ``p57`` would leak N).
"""

from __future__ import annotations

import hashlib
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._errors import SeekbenchWarning, UserInputError
from .._corpus import load_corpus

#: Default interval width Delta (the paper: 10 for Wikipedia, 15 for ML surveys).
DEFAULT_DELTA = 10


@dataclass(frozen=True)
class GoalPassage:
    """One goal passage of a document, in document order."""

    id: str
    text: str
    section: str
    section_index: int


@dataclass(frozen=True)
class BeliefState:
    """One synthetic belief state: which goal passages of a document are visible.

    Attributes
    ----------
    state_id : str
        ``"<doc_id>#<k>"``.
    doc_id : str
    k : int
        Interval index, 0 <= k < K.
    n_missing : int
        r, the number of hidden goal passages.
    n_goal_passages : int
        N (kept for evaluation; never shown to an estimator).
    visible_passage_ids : tuple of str
        The N - r visible passages, in document order.
    true_completeness : float
        c = (N - r) / N, in (0, 1].
    delta, seed : int
        The generator's settings.
    """

    state_id: str
    doc_id: str
    k: int
    n_missing: int
    n_goal_passages: int
    visible_passage_ids: tuple[str, ...]
    true_completeness: float
    delta: int = DEFAULT_DELTA
    seed: int = 0

    def to_record(self) -> dict:
        """The JSONL record (``visible_passage_ids`` as a list)."""
        return {
            "doc_id": self.doc_id,
            "state_id": self.state_id,
            "k": self.k,
            "n_missing": self.n_missing,
            "n_goal_passages": self.n_goal_passages,
            "n_visible": len(self.visible_passage_ids),
            "visible_passage_ids": list(self.visible_passage_ids),
            "true_completeness": self.true_completeness,
            "delta": self.delta,
            "seed": self.seed,
        }

    @classmethod
    def from_record(cls, rec: object, *, file: str | None = None, line: int | None = None) -> BeliefState:
        """Read a record written by :meth:`to_record`; a :class:`UserInputError` names what is wrong."""
        if not isinstance(rec, dict):
            raise UserInputError("a belief-state record must be a JSON object", file=file, line=line)
        for key in ("doc_id", "state_id", "visible_passage_ids", "true_completeness", "n_goal_passages"):
            if key not in rec:
                raise UserInputError(
                    f"missing field {key!r}; write belief states with `seekbench env synth-beliefs`",
                    file=file,
                    line=line,
                    path=key,
                )
        ids = rec["visible_passage_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise UserInputError(
                "visible_passage_ids must be a list of strings", file=file, line=line, path="visible_passage_ids"
            )
        c = rec["true_completeness"]
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 <= c <= 1:
            raise UserInputError(
                "true_completeness must be a number in [0, 1]", file=file, line=line, path="true_completeness"
            )
        n = rec.get("n_goal_passages")
        if isinstance(n, bool) or not isinstance(n, int) or n < len(ids):
            raise UserInputError(
                "n_goal_passages must be an integer >= the number of visible passages",
                file=file,
                line=line,
                path="n_goal_passages",
            )
        return cls(
            state_id=str(rec["state_id"]),
            doc_id=str(rec["doc_id"]),
            k=int(rec.get("k", 0)),
            n_missing=int(rec.get("n_missing", n - len(ids))),
            n_goal_passages=n,
            visible_passage_ids=tuple(ids),
            true_completeness=float(c),
            delta=int(rec.get("delta", DEFAULT_DELTA)),
            seed=int(rec.get("seed", 0)),
        )


@dataclass(frozen=True)
class BeliefView:
    """What an estimator sees of a state: the deduplicated belief, visible passages only, N hidden."""

    state_id: str
    doc_id: str
    title: str
    abstract: str
    passages: tuple[GoalPassage, ...]

    def to_prompt_data(self) -> dict:
        """JSON-ready belief: title, abstract and the passages numbered 1..n in document order (no ids)."""
        return {
            "title": self.title,
            "abstract": self.abstract,
            "retrieved_passages": [
                {"n": i, "section": p.section, "text": p.text} for i, p in enumerate(self.passages, start=1)
            ],
        }


def document_goal_passages(document: dict) -> list[GoalPassage]:
    """Every passage of every section of ``document`` as a :class:`GoalPassage`, in document order
    (the goal set, N = its length).

    The typed, checked counterpart of :func:`seekbench.env.goal_passages` (which returns the
    raw passage dicts): it also records each passage's section and refuses repeated ids.

    Raises
    ------
    UserInputError
        A passage id occurs twice in the document.
    """
    out: list[GoalPassage] = []
    seen: set[str] = set()
    for s_idx, section in enumerate(document.get("sections") or []):
        for p in section.get("passages") or []:
            pid = str(p["id"])
            if pid in seen:
                raise UserInputError(
                    f"passage id {pid!r} occurs twice in document {document.get('doc_id')!r}; "
                    "passage ids must be unique within a document"
                )
            seen.add(pid)
            out.append(GoalPassage(pid, str(p.get("text") or ""), str(section.get("title") or ""), s_idx))
    return out


def _doc_rng(doc_id: str, seed: int) -> np.random.Generator:
    """A generator per (seed, document): a document's states do not depend on the corpus order."""
    digest = int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, digest]))


def missing_range(k: int, n: int, delta: int) -> tuple[int, int]:
    """The inclusive range of r for state k: [k * Delta, min((k + 1) * Delta, N) - 1].

    >>> missing_range(2, 25, 10)
    (20, 24)
    """
    return k * delta, min((k + 1) * delta, n) - 1


def document_belief_states(document: dict, *, delta: int = DEFAULT_DELTA, seed: int = 0) -> list[BeliefState]:
    """The K = ceil(N / Delta) synthetic states of one document (spec section 8).

    Parameters
    ----------
    document : dict
        A corpus record (``doc_id``, ``sections[].passages[]``).
    delta : int, default 10
        Interval width Delta >= 1.
    seed : int, default 0

    Returns
    -------
    list of BeliefState
        Empty when the document has no passages.

    Examples
    --------
    >>> doc = {"doc_id": "d", "sections": [{"title": "s", "passages": [{"id": f"p{i}", "text": "x"}
    ...                                                                for i in range(25)]}]}
    >>> [s.k for s in document_belief_states(doc, delta=10)]
    [0, 1, 2]
    """
    if isinstance(delta, bool) or not isinstance(delta, int) or delta < 1:
        raise UserInputError(f"delta must be an integer >= 1, got {delta!r}")
    doc_id = str(document["doc_id"])
    goal = document_goal_passages(document)
    n = len(goal)
    rng = _doc_rng(doc_id, seed)
    states = []
    for k in range(math.ceil(n / delta)):
        lo, hi = missing_range(k, n, delta)
        r = int(rng.integers(lo, hi + 1))
        keep = np.sort(rng.choice(n, size=n - r, replace=False))
        states.append(
            BeliefState(
                state_id=f"{doc_id}#{k}",
                doc_id=doc_id,
                k=k,
                n_missing=r,
                n_goal_passages=n,
                visible_passage_ids=tuple(goal[i].id for i in keep),
                true_completeness=(n - r) / n,
                delta=delta,
                seed=seed,
            )
        )
    return states


def synthesize_belief_states(corpus: Iterable[dict], *, delta: int = DEFAULT_DELTA, seed: int = 0) -> list[BeliefState]:
    """Synthetic belief states for every document of a corpus.

    Documents without passages are skipped with a :class:`SeekbenchWarning`
    (counted once). A state's draw depends only on ``(seed, doc_id, k)``.

    Parameters
    ----------
    corpus : iterable of dict
        Corpus records (:func:`load_corpus_records`).
    delta : int, default 10
    seed : int, default 0

    Returns
    -------
    list of BeliefState
        In corpus order, then by k.
    """
    out: list[BeliefState] = []
    empty, seen = [], set()
    for doc in corpus:
        doc_id = str(doc["doc_id"])
        if doc_id in seen:
            raise UserInputError(f"document id {doc_id!r} occurs twice in the corpus; ids must be unique")
        seen.add(doc_id)
        states = document_belief_states(doc, delta=delta, seed=seed)
        if not states:
            empty.append(doc_id)
        out.extend(states)
    if empty:
        warnings.warn(
            f"{len(empty)} document(s) without passages got no belief states (first: {empty[0]!r})",
            SeekbenchWarning,
            stacklevel=2,
        )
    return out


def render_belief(state: BeliefState, document: dict) -> BeliefView:
    """The deduplicated belief of ``state``: visible passages in document order, N hidden.

    Raises
    ------
    UserInputError
        The state names a passage the document does not have (wrong corpus).
    """
    by_id = {p.id: p for p in document_goal_passages(document)}
    missing = [pid for pid in state.visible_passage_ids if pid not in by_id]
    if missing:
        raise UserInputError(
            f"belief state {state.state_id!r} names passage {missing[0]!r}, which document "
            f"{state.doc_id!r} does not have; use the corpus the states were drawn from"
        )
    order = {pid: i for i, pid in enumerate(by_id)}
    passages = tuple(by_id[pid] for pid in sorted(set(state.visible_passage_ids), key=order.__getitem__))
    return BeliefView(
        state.state_id, state.doc_id, str(document.get("title") or ""), str(document.get("abstract") or ""), passages
    )


def render_beliefs(states: Sequence[BeliefState], corpus: Iterable[dict]) -> list[BeliefView]:
    """:func:`render_belief` for many states against a corpus (documents looked up by ``doc_id``)."""
    docs = {str(d["doc_id"]): d for d in corpus}
    out = []
    for s in states:
        if s.doc_id not in docs:
            raise UserInputError(
                f"belief state {s.state_id!r} is about document {s.doc_id!r}, which the "
                "corpus does not have; use the corpus the states were drawn from"
            )
        out.append(render_belief(s, docs[s.doc_id]))
    return out


def load_corpus_records(path: str | os.PathLike) -> list[dict]:
    """Read a corpus JSONL with the environment's :func:`~seekbench.env.load_corpus` (its schema checks)."""
    return list(load_corpus(path))


def write_belief_states(path: str | os.PathLike, states: Iterable[BeliefState]) -> int:
    """Write belief states as JSONL atomically; return how many were written."""
    from ..._io import write_jsonl

    return write_jsonl(path, (s.to_record() for s in states))


def read_belief_states(path: str | os.PathLike) -> list[BeliefState]:
    """Read belief states written by :func:`write_belief_states` (first bad line raises)."""
    from ..._io import iter_jsonl

    out, seen = [], set()
    for line, rec in iter_jsonl(path):
        if isinstance(rec, UserInputError):
            raise rec
        state = BeliefState.from_record(rec, file=str(path), line=line)
        if state.state_id in seen:
            raise UserInputError(f"duplicate state_id {state.state_id!r}", file=str(path), line=line)
        seen.add(state.state_id)
        out.append(state)
    if not out:
        raise UserInputError("no belief states in the file", file=str(Path(path)))
    return out
