"""A table of contents for a whole report page, built from the page's second-level headings.

Sections are written by several modules; rather than have each register itself, the page is
scanned once it is assembled: every ``<h2>`` gets an id (its own, or one made from its text) and
the contents line links to each, so a section added later appears without further wiring.
"""

from __future__ import annotations

import html
import re

_H2 = re.compile(r"<h2(?P<attrs>[^>]*)>(?P<title>.*?)</h2>", re.S)
_ID = re.compile(r"""\bid\s*=\s*['"](?P<id>[^'"]+)['"]""")
_TAG = re.compile(r"<[^>]+>")


def slug(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces as dashes.

    >>> slug("Judge agreement with the reference")
    'judge-agreement-with-the-reference'
    >>> slug("Outcome & efficiency (per agent)")
    'outcome--efficiency-per-agent'
    """
    s = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return s.replace(" ", "-")


def html_with_toc(parts: list[str]) -> tuple[str, list[str]]:
    """``(contents, parts)``: a ``<nav>`` linking every ``<h2>`` of ``parts``, and the parts with each
    ``<h2>`` given an id when it had none (ids made unique)."""
    seen: set[str] = set()
    entries: list[tuple[str, str]] = []

    def add_id(m: re.Match) -> str:
        attrs, title = m.group("attrs"), m.group("title")
        text = html.unescape(_TAG.sub("", title)).strip()
        found = _ID.search(attrs)
        ident = found.group("id") if found else slug(text) or "section"
        base, k = ident, 2
        while ident in seen:
            ident, k = f"{base}-{k}", k + 1
        seen.add(ident)
        entries.append((ident, text))
        return (
            m.group(0) if found and ident == found.group("id") else f"<h2 id='{ident}'{_ID.sub('', attrs)}>{title}</h2>"
        )

    out = [_H2.sub(add_id, p) for p in parts]
    links = " &middot; ".join(f"<a href='#{html.escape(i)}'>{html.escape(t)}</a>" for i, t in entries)
    if not entries:
        return "", out
    return f"<nav class='toc' aria-label='contents' style='font-size:.85rem'><b>Contents:</b> {links}</nav>", out


def markdown_toc(body: str) -> str:
    """A contents list linking every ``## `` heading of ``body`` (GitHub anchors)."""
    titles = [line[3:].strip() for line in body.splitlines() if line.startswith("## ")]
    if not titles:
        return ""
    return "Contents: " + " · ".join(f"[{t}](#{slug(t)})" for t in titles) + "\n"
