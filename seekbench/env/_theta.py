"""Completeness against the retrieval threshold theta, for choosing theta per embedder.

SeekerGym chose theta = 0.65 for text-embedding-3-large by running one agent
with the deduplicated belief at a few thresholds (appendix A.2): too low and
retrieval is trivial, too high and well-made queries return nothing.
:func:`theta_sweep` does the same for any embedder and agent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._episode import DEFAULT_QUERIES_PER_STEP, DEFAULT_STEPS, fit_embedder, run_episode
from ._retrieval import DocumentIndex

THETA_COLUMNS = ["theta", "episodes", "completeness", "std", "passages_per_query", "empty_query_share"]


def default_thetas(center: float, *, width: float = 0.2, step: float = 0.05) -> list[float]:
    """A grid around an embedder's default theta, within (0, 1).

    >>> default_thetas(0.15)
    [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35]
    """
    lo, hi = max(step, center - width), min(0.95, center + width)
    return [round(float(x), 4) for x in np.arange(lo, hi + 1e-9, step)]


def theta_sweep(
    corpus: Sequence[dict],
    agent,
    *,
    embedder,
    thetas: Sequence[float],
    belief: str = "deduplicated",
    max_steps: int = DEFAULT_STEPS,
    seed: int = 0,
    queries_per_step: int = DEFAULT_QUERIES_PER_STEP,
) -> pd.DataFrame:
    """Mean final completeness of ``agent`` at each theta (one episode per document).

    Parameters
    ----------
    corpus : list of dict
    agent : Agent
        A scripted agent is the cheap choice; an LLM agent works too (one request per step).
    embedder : Embedder
        Fitted here on the corpus (TF-IDF); documents are embedded once for all thetas.
    thetas : sequence of float
    belief, max_steps, seed, queries_per_step
        As in :func:`run_episode`.

    Returns
    -------
    DataFrame
        ``theta, episodes, completeness, std, passages_per_query, empty_query_share``: mean final
        completeness (higher is easier), mean passages returned per query, share of queries
        returning nothing.
    """
    fit_embedder(embedder, corpus)
    indices = [DocumentIndex(doc, embedder) for doc in corpus]
    rows = []
    for theta in thetas:
        finals, per_query = [], []
        for doc, index in zip(corpus, indices, strict=True):
            tr = run_episode(
                doc,
                agent,
                index=index,
                belief=belief,
                max_steps=max_steps,
                theta=float(theta),
                seed=seed,
                queries_per_step=queries_per_step,
            )
            finals.append(tr["env"]["final_completeness"])
            per_query += [len(s["passage_ids"]) for s in tr["steps"] if s["kind"] == "search_result"]
        q = np.array(per_query, dtype=float)
        rows.append(
            {
                "theta": float(theta),
                "episodes": len(finals),
                "completeness": float(np.mean(finals)),
                "std": float(np.std(finals, ddof=1)) if len(finals) > 1 else float("nan"),
                "passages_per_query": float(q.mean()) if q.size else float("nan"),
                "empty_query_share": float((q == 0).mean()) if q.size else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=THETA_COLUMNS)
