"""Documents from retriever and tool output text, shared by the importers.

Passage text: ``Doc i(Title: t) passage`` entries (Search-R1's retriever format),
``(i)Title: t Text: x`` or ``(i)t   x`` entries (R1-Searcher), ``Title: t`` lines each
opening a passage, and ``"t"`` lines opening blank-line separated passages (the wiki
corpus as ReSearch prints it). JSON result lists (``[{title|name, text|content|snippet|
description|quick_summary, url|link, id, score}]``, bare or under ``results`` /
``documents`` / ``docs`` / ``organic`` / ``items`` / ``data`` / ``web_page_info_list``,
Bing's ``webPages.value``, Brave's ``web.results``, lists of such lists), also written as
a Python literal (a list rendered by a chat template). Otherwise the text itself is one
document. Untrusted text: JSON too deeply nested to decode, or with numbers Python will
not convert, is kept as text.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_DOC = re.compile(r"(?m)^[ \t]*Doc\s*(\d+)\s*\(\s*Title\s*:\s*")
_NUMBERED = re.compile(r"(?m)^[ \t]*\((\d+)\)[ \t]*")
_TITLE_TEXT = re.compile(r"\s*Title\s*:\s*(.*?)\s+Text\s*:\s*", re.DOTALL)
_TITLE_LINE = re.compile(r"(?m)^[ \t]*Title[ \t]*:[ \t]*(\S[^\n]*)$")
_QUOTED_LINE = re.compile(r'(?m)(?:\A|\n[ \t]*\n)[ \t]*"([^"\n]+)"[ \t]*$')
_DOC_LIST_KEYS = (
    "results",
    "documents",
    "docs",
    "organic",
    "items",
    "data",
    "web_page_info_list",
    "value",
    "search_results",
    "hits",
)
_NESTED_KEYS = ("webPages", "web")
_TEXT_KEYS = (
    "text",
    "content",
    "snippet",
    "description",
    "quick_summary",
    "summary",
    "page_summary",
    "contents",
    "body",
)
_TITLE_KEYS = ("title", "name")
_LITERAL_LIMIT = 1 << 20  # Python-literal fallback only for texts up to 1 MiB: ast parsing is costly


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
        return _other_passages(text) or [{"id": None, "title": None, "text": text, "rank": 1}]
    docs = []
    for j, m in enumerate(starts):
        end = starts[j + 1].start() if j + 1 < len(starts) else len(text)
        title, body = _split_title(text[m.end() : end])
        number = int(m.group(1))
        docs.append({"id": None, "title": title, "text": body.strip(), "rank": number if number >= 1 else j + 1})
    return docs


def _other_passages(text: str) -> list[dict] | None:
    """``(i)Title: t Text: x`` / ``(i)t   x`` entries, ``Title: t`` lines, or ``"t"`` lines; None for none."""
    for pattern, split in ((_NUMBERED, _numbered_entry), (_TITLE_LINE, None), (_QUOTED_LINE, None)):
        starts = list(pattern.finditer(text))
        if not starts or (pattern is not _QUOTED_LINE and text[: starts[0].start()].strip()):
            continue
        docs = []
        for j, m in enumerate(starts):
            end = starts[j + 1].start() if j + 1 < len(starts) else len(text)
            if split is not None:
                title, body = split(text[m.end() : end])
                rank = int(m.group(1)) or j + 1
            else:
                title, body, rank = m.group(1).strip(), text[m.end() : end], j + 1
            docs.append({"id": None, "title": title, "text": body.strip(), "rank": rank})
        if pattern is _QUOTED_LINE and not all(d["text"] for d in docs):
            continue  # a quoted line alone (a JSON string, a quotation) is not a titled passage
        return docs
    return None


def _numbered_entry(s: str) -> tuple[str | None, str]:
    """R1-Searcher's entries: ``Title: t Text: x``, else a title set off by a run of spaces, else no title."""
    m = _TITLE_TEXT.match(s)
    if m is not None:
        return m.group(1).strip(), s[m.end() :]
    line = s.split("\n", 1)[0]
    gap = re.search(r"[ \t]{2,}", line)
    if gap is not None and gap.start() > 0:
        return line[: gap.start()].strip(), s[gap.end() :]
    return None, s


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
        return line.strip().strip('"'), s[len(line) :]
    return line[:cut].strip().strip('"'), s[cut + 1 :]


def parse_tool_output(text: str | None) -> list[dict]:
    """Documents from a tool's output text (JSON results, ``Doc i(Title: t)`` passages, or the text itself)."""
    if text is None or not text.strip():
        return []
    docs = None
    stripped = text.strip()
    if stripped[0] in "[{":
        try:
            docs = _json_documents(json.loads(stripped))
        except (ValueError, RecursionError):  # not JSON, bad numbers, or nested past the decoder's depth
            if len(stripped) <= _LITERAL_LIMIT:
                try:  # a Python list or dict printed by a chat template (single quotes)
                    docs = _json_documents(ast.literal_eval(stripped))
                except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
                    pass
    return parse_passages(text) if docs is None else docs


def _result_list(value: object, depth: int = 0) -> list | None:
    """The list of results in a tool's JSON output (under a known key, or nested one level as Bing and Brave do)."""
    if isinstance(value, list):
        return value
    if not isinstance(value, dict) or depth > 2:
        return None
    found = next((value[k] for k in _DOC_LIST_KEYS if isinstance(value.get(k), list)), None)
    if found is not None:
        return found
    for key in _NESTED_KEYS:
        inner = _result_list(value.get(key), depth + 1) if isinstance(value.get(key), dict) else None
        if inner is not None:
            return inner
    return [value] if any(k in value for k in (*_TITLE_KEYS, *_TEXT_KEYS)) else None


def _flatten(items: list) -> list:
    """Results grouped per query (``[{search_query, web_page_info_list: [...]}]``) as one list."""
    out: list = []
    for d in items:
        inner = _result_list(d) if isinstance(d, dict) else None
        if isinstance(d, dict) and inner is not None and inner != [d]:
            out.extend(inner)
        else:
            out.append(d)
    return out


def _item_text(d: dict) -> object:
    text = next((d[k] for k in _TEXT_KEYS if d.get(k) is not None), None)
    if text is None:  # e.g. {url, information: [{page_number, page_summary}]}: the parts' texts joined
        parts = [
            next((p[k] for k in _TEXT_KEYS if isinstance(p.get(k), str)), None)
            for v in d.values()
            if isinstance(v, list)
            for p in v
            if isinstance(p, dict)
        ]
        text = "\n".join(p for p in parts if p) or None
    return text


def _json_documents(value: object) -> list[dict] | None:
    value = _result_list(value)
    if value is not None:
        value = _flatten(value)
    if not isinstance(value, list) or not value or not all(isinstance(d, (dict, str)) for d in value):
        return None
    docs: list[dict[str, Any]] = []
    for rank, d in enumerate(value, start=1):
        d = {"text": d} if isinstance(d, str) else d
        title = next((d[k] for k in _TITLE_KEYS if d.get(k) is not None), None)
        doc: dict[str, Any] = {
            "id": _as_str(d.get("id")),
            "title": _as_str(title),
            "text": _as_str(_item_text(d)),
            "rank": rank,
        }
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
