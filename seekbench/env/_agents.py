"""Seeking agents: the interface, and scripted agents that need no LLM.

An agent reads a :class:`~seekbench.env._beliefs.Belief` and answers with an
:class:`Action`: one or more queries, optionally its reasoning, and its
estimate of its current completeness. Scripted agents see only what the
belief shows (so the belief representation changes what they do) and draw
their choices from the episode's seeded generator (so a seed fixes the
episode).

- ``keyphrase``: queries are keyphrases (runs of content words, RAKE-style)
  from the abstract and the passages shown, scored by how often their words
  occur there; phrases already used as queries (visible only in the
  trajectory belief) are skipped.
- ``sentence``: queries are sentences, first from the abstract, then from
  the passages shown, preferring sentences whose words are least covered.

With the oracle belief both aim at the gaps: a query names a section with
missing passages and continues the passage just before the gap.

Self-estimates: with the oracle belief the agents know N and report the
exact share; with the trajectory belief they use a capture-recapture
(Lincoln-Petersen) estimate of N from the last step's overlap with what was
already seen; with the deduplicated belief, which shows no history, the
share of a prior document size (``prior_passages``, default 30).
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ._beliefs import Belief

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*[A-Za-z0-9]|[A-Za-z]")


@functools.cache
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | {
        "e",
        "g",
        "i",
        "ie",
        "eg",
        "etc",
        "used",
        "use",
        "uses",
        "using",
        "does",
        "like",
        "way",
        "also",
        "new",
        "returns",
        "return",
    }


@dataclass
class Action:
    """What an agent does at one step.

    Attributes
    ----------
    queries : list of str
    reasoning : str or None
        Free text shown as a reasoning step of the trace (None: no reasoning step).
    self_estimate : float or None
        The agent's estimate in [0, 1] of the completeness of the belief it saw.
    error : str or None
        Why the agent's answer was rejected (LLM agents); the step then has no queries.
    usage : dict
        Token counts and cache hits (LLM agents).
    """

    queries: list[str]
    reasoning: str | None = None
    self_estimate: float | None = None
    error: str | None = None
    usage: dict = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeStep:
    """Where an episode stands when the runner asks its agent to act.

    Attributes
    ----------
    number : int
        The step, 1-based.
    max_steps : int
        The episode's last step.
    queries_per_step : int
        How many queries count (the runner drops the rest).
    rng : numpy.random.Generator
        The episode's seeded generator; an agent draws from it alone, so a seed fixes the episode.
    episode_id : str
        The id of the trace the episode writes.
    """

    number: int
    max_steps: int
    queries_per_step: int
    rng: np.random.Generator
    episode_id: str


class Agent(Protocol):
    """What the episode runner calls."""

    name: str

    def act(self, belief: Belief, *, step: EpisodeStep) -> Action:
        """Choose the queries of ``step`` from ``belief``."""


def keyphrases(text: str, *, max_words: int = 3) -> list[str]:
    """Candidate keyphrases: maximal runs of non-stop-words, split into pieces of at most ``max_words``.

    >>> keyphrases("The while statement is used for repeated execution of a suite.")
    ['statement', 'repeated execution', 'suite']
    """
    stop = _stop_words()
    out: list[str] = []
    for chunk in re.split(r"[.,;:!?()\[\]{}\"“”]|\s[-–—]\s", text):
        run: list[str] = []
        for w in _WORD.findall(chunk) + [""]:
            low = w.lower()
            if low and low not in stop and len(low) > 1:
                run.append(low)
                continue
            for i in range(0, len(run), max_words):
                out.append(" ".join(run[i : i + max_words]))
            run = []
    return [p for p in out if p]


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _pick(rng: np.random.Generator, candidates: list[tuple[str, float]], k: int) -> list[str]:
    """Up to ``k`` distinct candidates drawn without replacement from the top 3k, weights ~ scores."""
    seen, pool = set(), []
    for c, s in sorted(candidates, key=lambda cs: (-cs[1], cs[0])):
        if c not in seen:
            seen.add(c)
            pool.append((c, max(s, 1e-9)))
        if len(pool) >= 3 * k:
            break
    if len(pool) <= k:
        return [c for c, _ in pool]
    w = np.array([s for _, s in pool], dtype=float)
    idx = rng.choice(len(pool), size=k, replace=False, p=w / w.sum())
    return [pool[i][0] for i in sorted(idx)]


def estimate_completeness(belief: Belief, *, prior_passages: int = 30) -> float:
    """The scripted agents' self-estimate (see the module docstring): exact, capture-recapture, or a prior."""
    n_seen = belief.n_visible
    if belief.n_goal:
        return n_seen / belief.n_goal
    if belief.kind == "trajectory" and belief.history:
        # Lincoln-Petersen: n1 seen before the last step, n2 returned by it, m returned and already seen.
        last_step = belief.history[-1][0]
        before = {pid for st, _, ids in belief.history if st != last_step for pid in ids}
        latest = {pid for st, _, ids in belief.history if st == last_step for pid in ids}
        m = len(before & latest)
        if before and m > 0:
            n_hat = len(before) * len(latest) / m
            return float(min(1.0, n_seen / max(n_hat, n_seen)))
    return float(min(1.0, n_seen / max(prior_passages, n_seen + 1)))


class _ScriptedAgent(ABC):
    name = "scripted"

    def __init__(self, *, reasoning: bool = True, prior_passages: int = 30) -> None:
        self.reasoning = reasoning
        self.prior_passages = prior_passages

    def act(self, belief: Belief, *, step: EpisodeStep) -> Action:
        queries_per_step, rng = step.queries_per_step, step.rng
        if belief.kind == "oracle" and belief.gaps:
            # half the budget (rounded up) aims at gaps, the rest follows the content as without the oracle
            n_gap = (queries_per_step + 1) // 2
            queries = self._gap_queries(belief, n_gap, rng)
            queries += [q for q in self._queries(belief, queries_per_step, rng) if q not in queries]
            queries, why = queries[:queries_per_step], "gaps"
        else:
            queries, why = self._queries(belief, queries_per_step, rng), "content"
        est = estimate_completeness(belief, prior_passages=self.prior_passages)
        text = None
        if self.reasoning:
            text = self._explain(belief, queries, est, why)
        return Action(queries, text, round(est, 4))

    def _explain(self, belief: Belief, queries: list[str], est: float, why: str) -> str:
        quoted = "; ".join(f'"{q}"' for q in queries) or "nothing new"
        if why == "gaps":
            sections = list(dict.fromkeys(g.section for g in belief.gaps))
            return (
                f"{belief.n_visible} of {belief.n_goal} passages found; {len(belief.gaps)} missing, in "
                f"sections such as {', '.join(repr(s) for s in sections[:3])}. Next I search for {quoted}."
            )
        have = f"{belief.n_visible} passages found so far" if belief.n_visible else "Nothing found yet"
        return (
            f"{have}; I estimate my completeness at {est:.2f}. Next I search for {quoted}, taken from "
            f"the abstract and the passages I have."
        )

    def _gap_queries(self, belief: Belief, k: int, rng: np.random.Generator) -> list[str]:
        """Queries for ``k`` gaps drawn at random, a gap's weight growing with its section's missing count."""
        missing: dict[str, int] = {}
        for g in belief.gaps:
            missing[g.section] = missing.get(g.section, 0) + 1
        w = np.array([missing[g.section] for g in belief.gaps], dtype=float)
        idx = rng.choice(len(belief.gaps), size=min(k, len(belief.gaps)), replace=False, p=w / w.sum())
        return list(dict.fromkeys(self._gap_query(belief.gaps[i], belief, rng) for i in sorted(idx)))

    @abstractmethod
    def _gap_query(self, gap, belief: Belief, rng: np.random.Generator) -> str:
        """One query aimed at ``gap`` (oracle belief)."""

    @abstractmethod
    def _queries(self, belief: Belief, k: int, rng: np.random.Generator) -> list[str]:
        """Up to ``k`` queries from what ``belief`` shows."""


class KeyphraseAgent(_ScriptedAgent):
    """Keyphrase queries from the abstract and from what was retrieved (see the module docstring).

    Parameters
    ----------
    max_words : int, default 3
        Longest keyphrase.
    reasoning : bool, default True
        Give a short templated reasoning text each step.
    prior_passages : int, default 30
        Document size assumed by the self-estimate under the deduplicated belief.
    """

    name = "keyphrase"

    def __init__(self, *, max_words: int = 3, reasoning: bool = True, prior_passages: int = 30) -> None:
        super().__init__(reasoning=reasoning, prior_passages=prior_passages)
        self.max_words = max_words

    def _queries(self, belief: Belief, k: int, rng: np.random.Generator) -> list[str]:
        texts = [belief.abstract] + [t for _, _, t in belief.passages]
        counts: dict[str, int] = {}
        phrases: list[str] = []
        for t in texts:
            for p in keyphrases(t, max_words=self.max_words):
                phrases.append(p)
                for w in p.split():
                    counts[w] = counts.get(w, 0) + 1
        used = {_norm(q) for q in belief.queries}
        scored = [
            (p, sum(counts[w] for w in p.split()) / len(p.split()) * len(p.split()) ** 0.5)
            for p in dict.fromkeys(phrases)
            if p not in used
        ]
        return _pick(rng, scored, k) or [belief.title]

    def _gap_query(self, gap, belief: Belief, rng: np.random.Generator) -> str:
        """The section title and one keyphrase of the passages around the gap (else of the abstract)."""
        around = " ".join(t for t in (gap.previous_text, gap.next_text) if t) or belief.abstract
        counts: dict[str, int] = {}
        for p in keyphrases(around, max_words=self.max_words):
            counts[p] = counts.get(p, 0) + len(p.split())
        picked = _pick(rng, list(counts.items()), 1)
        return " ".join([gap.section, *picked]).strip()


class SentenceAgent(_ScriptedAgent):
    """Sentence queries: abstract sentences first, then sentences of the passages shown (see the module docstring).

    Parameters
    ----------
    max_chars : int, default 200
        Sentences are cut to this length.
    reasoning, prior_passages
        As for :class:`KeyphraseAgent`.
    """

    name = "sentence"

    def __init__(self, *, max_chars: int = 200, reasoning: bool = True, prior_passages: int = 30) -> None:
        super().__init__(reasoning=reasoning, prior_passages=prior_passages)
        self.max_chars = max_chars

    @staticmethod
    def sentences(text: str) -> list[str]:
        """Split into sentences of at least four words.

        >>> SentenceAgent.sentences("One two three four. Five. Six seven eight nine ten!")
        ['One two three four.', 'Six seven eight nine ten!']
        """
        parts = re.split(r"(?<=[.!?])\s+(?=[A-Z\"(])", text.strip())
        return [p.strip() for p in parts if len(p.split()) >= 4]

    def _queries(self, belief: Belief, k: int, rng: np.random.Generator) -> list[str]:
        stop = _stop_words()
        shown = [t for _, _, t in belief.passages]
        covered: dict[str, int] = {}
        for t in shown:
            for w in set(_WORD.findall(t.lower())) - stop:
                covered[w] = covered.get(w, 0) + 1
        used = {_norm(q) for q in belief.queries}
        scored = []
        for src in [belief.abstract, *shown]:
            for s in self.sentences(src):
                s = s[: self.max_chars]
                words = set(_WORD.findall(s.lower())) - stop
                if not words or _norm(s) in used:
                    continue
                novelty = sum(1.0 / (1 + covered.get(w, 0)) for w in words) / len(words)
                scored.append((s, novelty))
        return _pick(rng, scored, k) or [belief.title]

    def _gap_query(self, gap, belief: Belief, rng: np.random.Generator) -> str:
        """The section title and the sentence just before the gap (or after it, or one of the abstract)."""
        near = self.sentences(gap.previous_text or "")[-1:] or self.sentences(gap.next_text or "")[:1]
        if not near:
            pool = self.sentences(belief.abstract) or [belief.title]
            near = [pool[int(rng.integers(len(pool)))]]
        return f"{gap.section}: {near[0][: self.max_chars]}"


SCRIPTED_AGENTS: dict[str, type[_ScriptedAgent]] = {"keyphrase": KeyphraseAgent, "sentence": SentenceAgent}
