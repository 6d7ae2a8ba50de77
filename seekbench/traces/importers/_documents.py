"""Documents from retriever and tool output text, shared by the importers.

Passage text: ``Doc i(Title: t) passage`` entries (Search-R1's retriever format),
``(i)Title: t Text: x`` or ``(i)t   x`` entries (R1-Searcher), ``Title: t`` lines each
opening a passage, and ``"t"`` lines opening blank-line separated passages (the wiki
corpus as ReSearch prints it). JSON results (a list of records, bare, under an API's key,
or JSON inside JSON; :mod:`._result_documents`), also written as a Python literal (a list
rendered by a chat template), and Markdown result lists (``1. [title](url)`` then the snippet, as
Qwen-Agent web tools print them). Otherwise the text itself is one document. Untrusted text:
JSON too deeply nested to decode, or with numbers Python will not convert, is kept as text.
"""

from __future__ import annotations

import ast
import json
import re

from ._result_documents import json_documents

_DOC = re.compile(r"(?m)^[ \t]*Doc\s*(\d+)\s*\(\s*Title\s*:\s*")
_NUMBERED = re.compile(r"(?m)^[ \t]*\((\d+)\)[ \t]*")
_TITLE_TEXT = re.compile(r"\s*Title\s*:\s*(.*?)\s+Text\s*:\s*", re.DOTALL)
_TITLE_LINE = re.compile(r"(?m)^[ \t]*Title[ \t]*:[ \t]*(\S[^\n]*)$")
_QUOTED_LINE = re.compile(r'(?m)(?:\A|\n[ \t]*\n)[ \t]*"([^"\n]+)"[ \t]*$')
#: A numbered Markdown link opening a search result (Qwen-Agent web tools: ``1. [title](url)``;
#: smolagents' web search: ``0. [title](url)``). A title may hold brackets (``[PDF] A report``):
#: the link is the last ``](url)`` of the line.
_MD_RESULT = re.compile(r"(?m)^[ \t]*(\d+)\.[ \t]*\[([^\n]+?)\]\((\S+?)\)[ \t]*$")
#: Where one query's results end when a tool answers several queries in one output: a ``=======``
#: line, or the ``## Search Results`` heading that opens each of smolagents' (parallel calls' outputs
#: are joined by a newline).
_MD_BLOCK_END = re.compile(r"\n[ \t]*(?:={3,}|#{1,6}[ \t]+Search Results)[ \t]*\n")
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
            docs = json_documents(json.loads(stripped))
        except (ValueError, RecursionError):  # not JSON, bad numbers, or nested past the decoder's depth
            if len(stripped) <= _LITERAL_LIMIT:
                try:  # a Python list or dict printed by a chat template (single quotes)
                    docs = json_documents(ast.literal_eval(stripped))
                except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
                    pass
    elif stripped[0] == '"':  # the whole output double-encoded: a JSON string holding the JSON results
        try:
            docs = json_documents(json.loads(stripped))
        except (ValueError, RecursionError):
            pass
    if docs is None:
        docs = _markdown_results(stripped)
    return parse_passages(text) if docs is None else docs


def _is_header(text: str) -> bool:
    """Text before a results list: a few short lines (``A Google search for 'q' found 10 results:``)."""
    return len(text) <= 400 and text.count("\n") <= 4


def _markdown_results(text: str) -> list[dict] | None:
    """Search results written as a numbered list of Markdown links, each line ``i. [title](url)``
    followed by its snippet (and ``Date published:`` / ``Source:`` lines), after a header such as
    ``A Google search for 'q' found 10 results:``; several queries' lists are separated by ``=======``.
    None when the text holds no such list: the list must open the text (after a short header) and
    count from 1 (or 0) in each block, so the numbered links of a visited page are no results.

    >>> [(d["title"], d["url"], d["text"]) for d in _markdown_results("Results:\\n1. [A](https://a.example)\\nsa")]
    [('A', 'https://a.example', 'sa')]
    """
    starts = list(_MD_RESULT.finditer(text))
    # A results list opens the text (after a header of a few lines at most) and counts 1, 2, 3 ... or
    # 0, 1, 2 ... (again from its first number after each block separator); numbered links deep inside
    # a visited page are no list.
    if not starts or starts[0].group(1) not in ("0", "1") or not _is_header(text[: starts[0].start()]):
        return None
    base = int(starts[0].group(1))
    for prev, m in zip(starts, starts[1:], strict=False):
        between = text[prev.end() : m.start()]
        block = _MD_BLOCK_END.search(between)
        want = base if block is not None else int(prev.group(1)) + 1
        if int(m.group(1)) != want or (block is not None and not _is_header(between[block.end() :])):
            return None
    docs = []
    for j, m in enumerate(starts):
        end = starts[j + 1].start() if j + 1 < len(starts) else len(text)
        body = _MD_BLOCK_END.split(text[m.end() : end], maxsplit=1)[0]
        docs.append({"id": None, "title": m.group(2).strip(), "text": body.strip(), "rank": j + 1, "url": m.group(3)})
    return docs
