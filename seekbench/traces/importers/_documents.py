"""Documents from retriever and tool output text, shared by the importers.

``Doc i(Title: t) passage`` entries (Search-R1's retriever format), JSON result
lists (``[{title, text|content|snippet, url, id, score}]``, bare or under
``results`` / ``documents`` / ``docs`` / ``organic`` / ``items`` / ``data``), or
the text itself as one document. Untrusted text: JSON too deeply nested to
decode, or with numbers Python will not convert, is kept as text.
"""

from __future__ import annotations

import json
import re

_DOC = re.compile(r"(?m)^[ \t]*Doc\s*(\d+)\s*\(\s*Title\s*:\s*")
_DOC_LIST_KEYS = ("results", "documents", "docs", "organic", "items", "data")
_TEXT_KEYS = ("text", "content", "snippet")


def parse_passages(text: str | None) -> list[dict]:
    """Documents from retriever text: ``Doc i(Title: t) passage`` entries, else one document with the text.

    >>> [d["title"] for d in parse_passages('Doc 1(Title: "Paris") Capital.\\nDoc 2(Title: Paris (band)) A band.')]
    ['Paris', 'Paris (band)']
    """
    if text is None or not text.strip():
        return []
    text = text.strip()
    starts = list(_DOC.finditer(text))
    if not starts:
        return [{"id": None, "title": None, "text": text, "rank": 1}]
    docs = []
    for j, m in enumerate(starts):
        end = starts[j + 1].start() if j + 1 < len(starts) else len(text)
        title, body = _split_title(text[m.end():end])
        number = int(m.group(1))
        docs.append({"id": None, "title": title, "text": body.strip(), "rank": number if number >= 1 else j + 1})
    return docs


def _split_title(s: str) -> tuple[str, str]:
    """Split ``t) passage`` (after ``(Title:``) at the parenthesis closing it; quotes around t are dropped."""
    line = s.split("\n", 1)[0]
    if line.startswith('"') and '")' in line:
        cut = line.index('")') + 1
    else:
        depth, cut = 0, line.find(")")  # unbalanced parentheses: the first ")"
        for k, ch in enumerate(line):
            depth += (ch == "(") - (ch == ")")
            if depth < 0:
                cut = k
                break
    if cut == -1:
        return line.strip().strip('"'), s[len(line):]
    return line[:cut].strip().strip('"'), s[cut + 1:]


def parse_tool_output(text: str | None) -> list[dict]:
    """Documents from a tool's output text (JSON results, ``Doc i(Title: t)`` passages, or the text itself)."""
    if text is None or not text.strip():
        return []
    docs = None
    if text.strip()[0] in "[{":
        try:
            docs = _json_documents(json.loads(text))
        except (ValueError, RecursionError):  # not JSON, bad numbers, or nested past the decoder's depth
            pass
    return parse_passages(text) if docs is None else docs


def _json_documents(value: object) -> list[dict] | None:
    if isinstance(value, dict):
        found = next((value[k] for k in _DOC_LIST_KEYS if isinstance(value.get(k), list)), None)
        value = found if found is not None else ([value] if any(k in value for k in ("title", *_TEXT_KEYS)) else None)
    if not isinstance(value, list) or not all(isinstance(d, (dict, str)) for d in value):
        return None
    docs = []
    for rank, d in enumerate(value, start=1):
        d = {"text": d} if isinstance(d, str) else d
        text = next((d[k] for k in _TEXT_KEYS if d.get(k) is not None), None)
        doc = {"id": _as_str(d.get("id")), "title": _as_str(d.get("title")), "text": _as_str(text), "rank": rank}
        url = d.get("url", d.get("link"))
        if isinstance(url, str):
            doc["url"] = url
        if isinstance(d.get("score"), (int, float)) and not isinstance(d["score"], bool):
            doc["score"] = float(d["score"])
        docs.append(doc)
    return docs


def _as_str(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
