"""Documents from a search tool's JSON output: the list of result records, wherever the API put it.

Search APIs answer with a record whose result list sits under a key of their own: Google Custom
Search ``items`` (``{"kind": "customsearch#search", "items": [{title, link, snippet, displayLink}]}``),
Serper ``organic``, SerpAPI ``organic_results``, Tavily and Exa ``results``, You.com ``hits``, Bing
``webPages.value``, Brave ``web.results``; tools wrap them again, sometimes as a JSON string inside
JSON (``{"results": "<JSON text>"}``, double-encoded). One list, one document per record: a
result holding ten records is ten titled documents, never one blob of text.

A record's fields are recognised by name: the title (``title``, ``name``), the address (``url``,
``link``, ``href``, ``uri``; LangChain's ``metadata.source``) and the text (``text``, ``content``,
``snippet``, ``description``, ..., ``raw_content``, ``page_content``). A record with text under
no known name and no title keeps its other fields, as JSON, as its text: a structured result (a
flight, a booking) is not an empty document.
"""

from __future__ import annotations

import json
from typing import Any

from ._base import finite_score

#: Keys holding the result list, tried in this order before any other key (an API's own first).
DOC_LIST_KEYS = (
    "results",
    "documents",
    "docs",
    "organic",
    "organic_results",
    "items",
    "data",
    "web_page_info_list",
    "value",
    "search_results",
    "hits",
)
#: Keys of an object that holds the result list one level down (Bing ``webPages.value``, Brave ``web.results``).
NESTED_KEYS = ("webPages", "web")
TEXT_KEYS = (
    "text",
    "content",
    "snippet",
    "description",
    "quick_summary",
    "summary",
    "page_summary",
    "contents",
    "body",
    "raw_content",
    "page_content",
)
#: Lists of strings read as a record's text when it has no TEXT_KEYS string (You.com, Exa, Brave).
SNIPPET_LIST_KEYS = ("snippets", "highlights", "extra_snippets")
TITLE_KEYS = ("title", "name")
URL_KEYS = ("url", "link", "href", "uri")
#: Fields that say what a record is, not what it says: left out of the JSON text of a record without text.
_NOT_TEXT = frozenset(
    (*TITLE_KEYS, *URL_KEYS, "id", "score", "rank", "position", "kind", "type", "displayLink", "display_link")
)
_DECODE_DEPTH = 3  # JSON inside JSON inside JSON: deeper wrapping is not a result list


def decoded(value: object, depth: int = 0) -> object:
    """``value``, or the JSON value a string holds when it is JSON text of an object or a list (double-encoded)."""
    while isinstance(value, str) and depth < _DECODE_DEPTH:
        s = value.strip()
        if s[:1] not in ("[", "{"):
            break
        try:
            value = json.loads(s)
        except (ValueError, RecursionError):  # not JSON after all, bad numbers, or nested past the decoder
            break
        depth += 1
    return value


def is_record(d: object) -> bool:
    """Whether ``d`` is a result record: an object with a title, an address or a text under a known name."""
    return isinstance(d, dict) and any(d.get(k) is not None for k in (*TITLE_KEYS, *URL_KEYS, *TEXT_KEYS))


def result_list(value: object, depth: int = 0) -> list | None:
    """The list of results in a tool's JSON output; None when it holds none.

    Tried in order: the value itself when a list; a list under a :data:`DOC_LIST_KEYS` key (also one
    written as a JSON string); the result list one level down under a :data:`NESTED_KEYS` key; MCP
    content parts (``{"content": [{"type": "text", "text": ...}]}``); the object itself when it is one
    record (a visited page with a list of links is one page); the first list of records under any
    other key, or inside an object under any other key (``{"status": "ok", "result": {"items": [...]}}``).
    """
    value = decoded(value)
    if isinstance(value, list):
        return value
    if not isinstance(value, dict) or depth > 2:
        return None
    for k in DOC_LIST_KEYS:
        inner = decoded(value.get(k))
        if isinstance(inner, list):
            return inner
        if isinstance(value.get(k), str) and isinstance(inner, dict):  # {"results": "<JSON object>"}
            found = result_list(inner, depth + 1)
            if found is not None:
                return found
    for key in NESTED_KEYS:
        inner = result_list(value[key], depth + 1) if isinstance(value.get(key), dict) else None
        if inner is not None:
            return inner
    parts = value.get("content")
    if isinstance(parts, list) and parts and all(_is_part(p) for p in parts):
        return parts
    if any(k in value for k in (*TITLE_KEYS, *TEXT_KEYS)) or any(isinstance(value.get(k), str) for k in URL_KEYS):
        return [value]
    for v in value.values():  # any list of records: {"kind": ..., "answers": [{title, url, snippet}]}
        v = decoded(v)
        if isinstance(v, list) and v and all(is_record(d) for d in v):
            return v
        inner = result_list(v, depth + 1) if isinstance(v, dict) else None
        if inner is not None and inner != [v] and all(is_record(d) for d in inner):
            return inner
    return None


def _is_part(p: object) -> bool:
    """A content part of a tool result (MCP, Anthropic, OpenAI): ``{"type": "text", "text": ...}``."""
    return isinstance(p, dict) and isinstance(p.get("type"), str) and isinstance(p.get("text"), str)


def flatten(items: list) -> list:
    """One list of results: results grouped per query (``[{search_query, web_page_info_list: [...]}]``)
    joined, and a text content part holding JSON results replaced by those results."""
    out: list = []
    for d in items:
        if _is_part(d):
            inner = decoded(d["text"])
            inner = result_list(inner) if isinstance(inner, (list, dict)) else None
            if inner is not None and all(isinstance(r, (dict, str)) for r in inner):
                out.extend(flatten(inner))
                continue
        inner = result_list(d) if isinstance(d, dict) else None
        if isinstance(d, dict) and inner is not None and inner != [d]:
            out.extend(inner)
        else:
            out.append(d)
    return out


def json_documents(value: object) -> list[dict] | None:
    """Documents ``{id, title, text, rank, url?, score?}`` from a tool's decoded JSON output; None when
    it holds no list of results (the caller then reads the output as text)."""
    value = result_list(value)
    if value is not None:
        value = flatten(value)
    if not isinstance(value, list) or not value or not all(isinstance(d, (dict, str)) for d in value):
        return None
    docs: list[dict[str, Any]] = []
    for rank, d in enumerate(value, start=1):
        d = {"text": d} if isinstance(d, str) else d
        meta: dict = d["metadata"] if isinstance(d.get("metadata"), dict) else {}
        title = _first(d, TITLE_KEYS)
        if title is None:
            title = _first(meta, TITLE_KEYS)
        doc: dict[str, Any] = {
            "id": as_str(d.get("id")),
            "title": as_str(title),
            "text": as_str(_text(d)),
            "rank": rank,
        }
        url = next((d[k] for k in URL_KEYS if isinstance(d.get(k), str)), None)
        if url is None:  # a LangChain Document: {page_content, metadata: {source, title}}
            url = next((meta[k] for k in (*URL_KEYS, "source") if isinstance(meta.get(k), str)), None)
        if url is not None:
            doc["url"] = url
        score = finite_score(d.get("score"))
        if score is not None:
            doc["score"] = score
        docs.append(doc)
    return docs


def _first(d: dict, keys: tuple[str, ...]) -> object:
    return next((d[k] for k in keys if d.get(k) is not None), None)


def _text(d: dict) -> object:
    """A record's text: a TEXT_KEYS field, else its snippet list, else its parts' texts, else its other fields."""
    text = _first(d, TEXT_KEYS)
    if text is not None:
        return text
    for k in SNIPPET_LIST_KEYS:
        if isinstance(d.get(k), list) and d[k] and all(isinstance(s, str) for s in d[k]):
            return "\n".join(d[k])
    # e.g. {url, information: [{page_number, page_summary}]}: the parts' texts joined
    parts = [
        next((p[k] for k in TEXT_KEYS if isinstance(p.get(k), str)), None)
        for v in d.values()
        if isinstance(v, list)
        for p in v
        if isinstance(p, dict)
    ]
    joined = "\n".join(p for p in parts if p)
    if joined:
        return joined
    if _first(d, TITLE_KEYS) is not None:  # a titled hit without a snippet: its title says what it is
        return None
    rest = {k: v for k, v in d.items() if k not in _NOT_TEXT and k != "metadata" and v not in (None, "", [], {})}
    # A structured result ({"flight_number": "HT1", "price": 120}): its fields are its text.
    return json.dumps(rest, ensure_ascii=False) if rest else None


def as_str(value: object) -> str | None:
    """A field as text: strings as they are, objects and lists as JSON, numbers as printed."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
