"""Run seeking episodes and write each one as a canonical trace (``schemas/trace.schema.json``).

One episode: a document, an agent, a belief representation, at most M
steps. At step t the agent reads the belief built from everything so far
and sends one or more queries; each query returns every goal passage with
cosine above theta (spec section 7) and the retrieved set grows.

Trace layout per step t (step indices run over the whole trace):

- ``reasoning`` (when the agent gives reasoning text), then for each query a
  ``search`` step (``query``) and a ``search_result`` step (``passage_ids``
  and ``documents``: the passages returned, highest cosine first, with
  ``score`` and ``rank``; ``depends_on`` its search step). A rejected LLM
  answer is an ``other`` step with the reason.
- ``completeness`` on every step is the completeness of the state at that
  point: before retrieval for reasoning and search steps, after it for a
  search_result. It is non-decreasing over the steps of a trace.
- ``self_estimate`` (the agent's estimate of the completeness of the belief
  it was shown) sits on the first step of t, whose ``completeness`` is the
  true value being estimated.

``trace.env`` holds the episode settings and the final completeness;
``trace.metadata`` the topic, the completeness curve ``c_0..c_M`` (c_0 = 0),
the self-estimate per step, and per query its step and its query diversity
(``1 - max cosine to any earlier query of the episode``; null for the first).
Episodes are deterministic: the only randomness is a generator seeded from
``(seed, document, agent, belief)``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from .._errors import UserInputError
from ..traces import validate_trace
from ._agents import EpisodeStep
from ._beliefs import BELIEFS, QueryRecord, build_belief
from ._corpus import goal_passages
from ._retrieval import DocumentIndex, RetrievalState

DEFAULT_STEPS = 10
DEFAULT_QUERIES_PER_STEP = 2


def episode_rng(seed: int, *parts: str) -> np.random.Generator:
    """A generator seeded from ``seed`` and stable hashes of ``parts`` (not Python's salted ``hash``)."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, *(zlib.crc32(p.encode("utf-8")) for p in parts)])


def episode_id(document: dict, agent_name: str, belief: str, seed: int) -> str:
    """``<doc_id>|<agent>|<belief>|seed<seed>``: unique per episode setting, stable across runs."""
    return f"{document['doc_id']}|{agent_name}|{belief}|seed{seed}"


def _round(x: float) -> float:
    return round(float(x), 6)


def run_episode(
    document: dict,
    agent,
    *,
    index: DocumentIndex,
    belief: str = "deduplicated",
    max_steps: int = DEFAULT_STEPS,
    theta: float,
    seed: int = 0,
    queries_per_step: int = DEFAULT_QUERIES_PER_STEP,
    corpus: str | None = None,
) -> dict:
    """Run one episode and return it as a canonical trace.

    Parameters
    ----------
    document : dict
        A corpus document.
    agent : Agent
        A scripted agent or an :class:`LLMAgent`.
    index : DocumentIndex
        The document's embedded goal passages.
    belief : {"trajectory", "deduplicated", "oracle"}
    max_steps : int
        M, the step budget (every step is used; agents do not stop early).
    theta : float
        Retrieval threshold: cosine strictly above it retrieves.
    seed : int
    queries_per_step : int
        At most this many queries per step (extra ones are dropped).
    corpus : str, optional
        Recorded as the trace's ``dataset``.

    Returns
    -------
    dict
        A trace valid against ``schemas/trace.schema.json`` with ``env`` filled.
    """
    if belief not in BELIEFS:
        raise UserInputError(f"unknown belief {belief!r}; use one of {', '.join(BELIEFS)}")
    if max_steps < 1 or queries_per_step < 1:
        raise UserInputError("--steps and --queries-per-step must be at least 1")
    tid = episode_id(document, agent.name, belief, seed)
    rng = episode_rng(seed, document["doc_id"], agent.name, belief)
    passages = goal_passages(document)
    state = RetrievalState(len(passages))
    history: list[QueryRecord] = []
    steps: list[dict] = []
    curve, estimates, query_step, diversity = [0.0], [], [], []
    query_vecs: list[np.ndarray] = []

    def add(kind: str, **fields) -> dict:
        st = {"index": len(steps), "kind": kind, **fields}
        steps.append(st)
        return st

    for t in range(1, max_steps + 1):
        view = build_belief(belief, document, history)
        before = _round(state.completeness)
        action = agent.act(
            view,
            step=EpisodeStep(t, max_steps=max_steps, queries_per_step=queries_per_step, rng=rng, episode_id=tid),
        )
        estimates.append(action.self_estimate)
        first = len(steps)
        if action.error:
            add("other", text=f"agent answer rejected: {action.error}", completeness=before)
        if action.reasoning:
            add("reasoning", text=action.reasoning, completeness=before)
        for q in list(dict.fromkeys(action.queries))[:queries_per_step]:
            search = add("search", tool="search", query=q, completeness=_round(state.completeness))
            hits = index.search(q, theta)
            state.add(h.position for h in hits)
            history.append(QueryRecord(t, q, tuple(h.position for h in hits)))
            add(
                "search_result",
                passage_ids=[h.passage_id for h in hits],
                documents=[
                    {"id": h.passage_id, "title": h.section, "text": h.text, "score": round(h.score, 6), "rank": r}
                    for r, h in enumerate(hits, start=1)
                ],
                depends_on=[search["index"]],
                completeness=_round(state.completeness),
            )
            vec = index.embedder.embed([q])[0]
            div = 1.0 - max(float(vec @ v) for v in query_vecs) if query_vecs else math.nan
            query_vecs.append(vec)
            diversity.append(None if math.isnan(div) else _round(div))
            query_step.append(t)
        if action.self_estimate is not None:
            if len(steps) == first:  # no step at all this turn: record the estimate on an explicit step
                add("other", text="no queries", completeness=before)
            steps[first]["self_estimate"] = _round(action.self_estimate)
        curve.append(_round(state.completeness))
    final = _round(state.completeness)
    trace = {
        "schema_version": "1.0",
        "trace_id": tid,
        "agent": agent.name,
        "dataset": corpus,
        "question_id": document["doc_id"],
        "question": f'Find every passage of the document "{document["title"]}". Abstract: {document["abstract"]}',
        "gold_answers": [],
        "final_answer": None,
        "correct": None,
        "env": {
            "document_id": document["doc_id"],
            "n_goal_passages": len(passages),
            "belief": belief,
            "max_steps": max_steps,
            "theta": float(theta),
            "embedder": index.embedder.name,
            "final_completeness": final,
            "seed": int(seed),
        },
        "metadata": {
            "topic": document["topic"],
            "title": document["title"],
            "queries_per_step": queries_per_step,
            "completeness_curve": curve,
            "self_estimates": estimates,
            "query_step": query_step,
            "query_diversity": diversity,
            "retrieved": [passages[i]["id"] for i in state.retrieved],
        },
        "steps": steps,
    }
    validate_trace(trace)
    return trace


def fit_embedder(embedder, corpus: Sequence[dict]):
    """Fit ``embedder`` on every goal passage of the corpus (a no-op for pretrained models); return it."""
    return embedder.fit([p["text"] for d in corpus for p in goal_passages(d)])


def run_episodes(
    corpus: Sequence[dict],
    agents: Sequence,
    beliefs: Sequence[str],
    *,
    embedder,
    theta: float | None = None,
    max_steps: int = DEFAULT_STEPS,
    seeds: Iterable[int] = (0,),
    queries_per_step: int = DEFAULT_QUERIES_PER_STEP,
    corpus_name: str | None = None,
    on_episode: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Run every (document, agent, belief, seed) episode; return the traces in that order.

    Parameters
    ----------
    corpus : list of dict
        Documents (:func:`load_corpus` or :func:`default_corpus`).
    agents : list of Agent
    beliefs : list of str
    embedder : Embedder
        Fitted here on the corpus passages (TF-IDF); pretrained models ignore the fit.
    theta : float, optional
        Default ``embedder.default_theta``.
    max_steps, seeds, queries_per_step, corpus_name
        See :func:`run_episode`.
    on_episode : callable(trace), optional
        Called after each episode (progress, streaming output).

    Returns
    -------
    list of dict
        Canonical traces. An episode whose agent's requests failed (an LLM agent whose endpoint failed
        or could not be reached) is kept, with ``metadata.unscored_reason`` saying why; its completeness
        is not the agent's, and a re-run (completions cached) runs it again.

    Examples
    --------
    >>> from seekbench.env import default_corpus, make_agent, make_embedder
    >>> docs = default_corpus().documents[:1]
    >>> tr = run_episodes(docs, [make_agent("keyphrase")], ["oracle"], embedder=make_embedder("tfidf"),
    ...                   max_steps=3)
    >>> 0 <= tr[0]["env"]["final_completeness"] <= 1
    True
    """
    for b in beliefs:
        if b not in BELIEFS:
            raise UserInputError(f"unknown belief {b!r}; use one of {', '.join(BELIEFS)}")
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise UserInputError(f"two agents share a name ({', '.join(names)}); traces would collide")
    fit_embedder(embedder, corpus)
    theta = embedder.default_theta if theta is None else float(theta)
    seeds = list(seeds)
    out = []
    for doc in corpus:
        index = DocumentIndex(doc, embedder)
        for agent in agents:
            for belief in beliefs:
                for seed in seeds:
                    trace = run_episode(
                        doc,
                        agent,
                        index=index,
                        belief=belief,
                        max_steps=max_steps,
                        theta=theta,
                        seed=seed,
                        queries_per_step=queries_per_step,
                        corpus=corpus_name,
                    )
                    failure = getattr(agent, "failed_episodes", {}).get(trace["trace_id"])
                    if failure is not None:  # the agent ran without its model: the episode says why
                        trace["metadata"]["unscored_reason"] = f"request_failed: {failure}"
                    if on_episode is not None:
                        on_episode(trace)
                    out.append(trace)
    return out
