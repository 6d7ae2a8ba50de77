"""Build corpus documents and seeking-environment traces for the conformal tests."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))) for _ in range(n))


def make_document(doc_id: str, n_passages: int, *, n_sections: int = 3, seed: int = 0) -> dict:
    """A corpus record with ``n_passages`` passages (ids p1..pN, letters-only text) over ``n_sections``."""
    rng = random.Random(f"{doc_id}-{seed}")
    sections = [{"title": f"Section {chr(65 + s)}", "passages": []} for s in range(max(1, n_sections))]
    for i in range(n_passages):
        sections[i * len(sections) // max(n_passages, 1)]["passages"].append(
            {"id": f"p{i + 1}", "text": _words(rng, rng.randint(8, 60))})
    return {"doc_id": doc_id, "title": f"Title {doc_id}", "abstract": _words(rng, 30), "topic": "testing",
            "sections": sections, "source": "generated"}


def make_corpus(n_docs: int, *, seed: int = 0, lo: int = 5, hi: int = 45) -> list[dict]:
    rng = random.Random(seed)
    return [make_document(f"doc{d:03d}", rng.randint(lo, hi), n_sections=rng.randint(1, 6), seed=seed)
            for d in range(n_docs)]


def write_corpus(path: Path, corpus: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    return path


def env_trace(trace_id: str, agent: str, belief: str, document: str, path: list[float],
              estimates: list[float | None], *, n_goal: int = 20, metadata: bool = False) -> dict:
    """A canonical trace laid out as the seeking environment writes it.

    ``path`` = c_1..c_M (completeness after each env step), ``estimates`` = the
    agent's c_hat_t of c_{t-1}, recorded on the first step of t (a search step
    whose completeness is c_{t-1}); the search_result carries c_t. With
    ``metadata``, also ``completeness_curve`` (c_0..c_M) and ``self_estimates``.
    """
    steps, before = [], 0.0
    for t, (c, s) in enumerate(zip(path, estimates)):
        search = {"index": len(steps), "kind": "search", "query": f"query {t}", "completeness": before}
        if s is not None:
            search["self_estimate"] = s
        steps.append(search)
        steps.append({"index": len(steps), "kind": "search_result", "passage_ids": [], "completeness": c})
        before = c
    trace = {"schema_version": "1.0", "trace_id": trace_id, "agent": agent, "question": f"explore {document}",
             "steps": steps, "env": {"document_id": document, "n_goal_passages": n_goal, "belief": belief,
                                     "max_steps": len(path), "final_completeness": path[-1], "seed": 0}}
    if metadata:
        trace["metadata"] = {"completeness_curve": [0.0, *path], "self_estimates": list(estimates)}
    return trace


def write_traces(path: Path, traces: list[dict]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    return path
