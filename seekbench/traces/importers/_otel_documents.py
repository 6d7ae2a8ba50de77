"""Documents of OpenTelemetry retriever spans: OpenInference ``retrieval.documents.<i>.document.*``
attributes or the GenAI ``gen_ai.retrieval.documents`` list."""

from __future__ import annotations

import json
from typing import Any

from ._base import finite_score
from ._otel_messages import indexed
from ._otel_spans import Span, json_value


def span_documents(s: Span) -> list[dict]:
    """Documents of a retriever span: OpenInference ``retrieval.documents.<i>.document.*`` or GenAI's list."""
    docs = []
    for _i, d in indexed(s.attrs, "retrieval.documents"):
        meta = json_value(d.get("document.metadata"))
        meta = (
            meta
            if isinstance(meta, dict)
            else {k[len("document.metadata.") :]: v for k, v in d.items() if k.startswith("document.metadata.")}
        )
        docs.append(_document(d.get("document.id"), d.get("document.content"), d.get("document.score"), meta))
    if not docs:
        raw = json_value(s.attrs.get("gen_ai.retrieval.documents"))
        for d in raw if isinstance(raw, list) else []:
            if isinstance(d, dict):
                docs.append(_document(d.get("id"), d.get("content", d.get("text")), d.get("score"), d))
    for rank, d in enumerate(docs, start=1):
        d["rank"] = rank
    return docs


def _document(did: object, content: object, score: object, meta: dict) -> dict:
    doc: dict[str, Any] = {
        "id": None if did is None else str(did),
        "title": as_text(meta.get("title")),
        "text": as_text(content),
    }
    url = meta.get("url", meta.get("source"))
    if isinstance(url, str):
        doc["url"] = url
    score = finite_score(score)
    if score is not None:
        doc["score"] = score
    return doc


def as_text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
