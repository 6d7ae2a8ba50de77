"""Markdown and HTML documents split into a title, a lead (the abstract), and sections of paragraphs.

Both parsers return a :class:`ParsedDocument`: the first level-1 heading is
the title, the paragraphs before the next heading are the lead, and every
other heading starts a section whose paragraphs (one passage each; a list
counts as one paragraph) follow it. Code blocks, tables, figures and
captions, scripts and navigation are dropped (SeekerGym's parser likewise
excludes caption-dominated and boilerplate fragments). Only the standard
library is used (:mod:`html.parser`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class ParsedDocument:
    """A document as parsed, before passage ids are assigned.

    Attributes
    ----------
    title : str or None
        The first level-1 heading (or the HTML ``<title>``), None when absent.
    lead : list of str
        Paragraphs before the first section heading.
    sections : list of (str, list of str)
        Section title and its paragraphs, in document order (empty sections kept).
    meta : dict
        Front-matter keys (Markdown) or ``<meta name=... content=...>`` (HTML), lower-cased.
    """

    title: str | None = None
    lead: list[str] = field(default_factory=list)
    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)


def _clean_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _Builder:
    """Collects heading and paragraph events into a :class:`ParsedDocument`."""

    def __init__(self) -> None:
        self.doc = ParsedDocument()
        self._current: list[str] = self.doc.lead
        self._seen_heading = False

    def heading(self, level: int, text: str) -> None:
        text = _clean_space(text)
        if not text:
            return
        if level == 1 and self.doc.title is None and not self._seen_heading and not self.doc.lead:
            self.doc.title = text
            self._seen_heading = True
            return
        self._seen_heading = True
        self.doc.sections.append((text, []))
        self._current = self.doc.sections[-1][1]

    def paragraph(self, text: str) -> None:
        text = text.strip()
        if text:
            self._current.append(text)


# -- Markdown --------------------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])\s+")
_HR = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")


def strip_inline_markdown(text: str) -> str:
    """Plain text of inline Markdown: links and images, emphasis, code spans, HTML tags and entities.

    >>> strip_inline_markdown("See **the** [guide](http://x) and `open()`<br>.")
    'See the guide and open().'
    """
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", "", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)
    text = re.sub(r"`+([^`]+)`+", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])([*_])(?!\s)(.+?)(?<!\s)\1(?![\w*])", r"\2", text)
    text = re.sub(r"<[^>\n]+>", "", text)
    return html.unescape(text)


def _front_matter(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    if not lines or lines[0].strip() != "---":
        return {}, lines
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            meta = {}
            for ln in lines[1:i]:
                key, sep, value = ln.partition(":")
                if sep and key.strip():
                    meta[key.strip().lower()] = value.strip().strip("'\"")
            return meta, lines[i + 1 :]
    return {}, lines


def parse_markdown(text: str) -> ParsedDocument:
    """Parse Markdown (ATX and setext headings, YAML-style ``key: value`` front matter).

    Parameters
    ----------
    text : str

    Returns
    -------
    ParsedDocument

    Examples
    --------
    >>> d = parse_markdown("# T\\n\\nLead.\\n\\n## A\\n\\nOne.\\n\\n- x\\n- y\\n")
    >>> d.title, d.lead, d.sections
    ('T', ['Lead.'], [('A', ['One.', 'x\\ny'])])
    """
    text = re.sub(r"<!--.*?-->", "", text.replace("\r\n", "\n"), flags=re.DOTALL)
    meta, lines = _front_matter(text.split("\n"))
    out = _Builder()
    out.doc.meta = meta
    block: list[str] = []
    in_list = False
    fence: str | None = None

    def flush() -> None:
        nonlocal in_list
        if block:
            if in_list:
                body = "\n".join(
                    _clean_space(strip_inline_markdown(_LIST_ITEM.sub("", b, count=1))) for b in _join_items(block)
                )
            else:
                body = _clean_space(strip_inline_markdown(" ".join(b.lstrip("> ").strip() for b in block)))
            out.paragraph(body)
        block.clear()
        in_list = False

    for i, line in enumerate(lines):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        m = _FENCE.match(line)
        if m:
            flush()
            fence = m.group(1)[:3]
            continue
        if not line.strip():
            if not in_list:
                flush()
            continue
        heading = _ATX.match(line)
        if heading:
            flush()
            out.heading(len(heading.group(1)), strip_inline_markdown(heading.group(2)))
            continue
        if _SETEXT.match(line) and len(block) == 1 and not in_list:
            title = block.pop()
            out.heading(1 if line.strip().startswith("=") else 2, strip_inline_markdown(title))
            continue
        if _HR.match(line):
            flush()
            continue
        stripped = line.strip()
        if stripped.startswith("|") or re.match(r"^!\[[^\]]*\]\([^)]*\)$", stripped):
            flush()
            continue  # tables and image-only lines
        if not block and line.startswith(("    ", "\t")):
            continue  # indented code block
        if _LIST_ITEM.match(line):
            if block and not in_list:
                flush()
            in_list = True
            block.append(line)
            continue
        if in_list and block and not line.startswith((" ", "\t")) and not lines[i - 1].strip():
            flush()  # a paragraph after a list
        block.append(line)
    flush()
    return out.doc


def _join_items(block: list[str]) -> list[str]:
    """List lines grouped per item (continuation lines appended to their item)."""
    items: list[str] = []
    for ln in block:
        if _LIST_ITEM.match(ln) or not items:
            items.append(ln)
        else:
            items[-1] += " " + ln.strip()
    return items


# -- HTML ------------------------------------------------------------------------------------------

_SKIP_TAGS = {
    "script",
    "style",
    "pre",
    "table",
    "figure",
    "figcaption",
    "nav",
    "header",
    "footer",
    "noscript",
    "svg",
    "math",
    "aside",
    "form",
    "button",
    "select",
    "template",
    "iframe",
    "object",
    "caption",
}
_BLOCK_TAGS = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "body",
    "ul",
    "ol",
    "dl",
    "dd",
    "dt",
    "blockquote",
    "br",
    "hr",
    "address",
    "details",
    "summary",
}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_VOID = {"br", "hr", "img", "meta", "link", "input", "wbr", "source", "area", "base", "col", "embed", "track"}


class _HTMLCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = _Builder()
        self.buf: list[str] = []
        self.items: list[str] = []
        self.skip_depth = 0
        self.heading_level: int | None = None
        self.in_title = False
        self.title_tag = ""
        self.in_li = 0

    def _flush(self) -> None:
        text = _clean_space("".join(self.buf))
        self.buf.clear()
        if not text:
            return
        if self.in_li:
            self.items.append(text)
        else:
            self._flush_items()
            self.out.paragraph(text)

    def _flush_items(self) -> None:
        if self.items:
            self.out.paragraph("\n".join(self.items))
            self.items = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _SKIP_TAGS:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag == "meta":
            a = dict(attrs)
            if a.get("name") and a.get("content") is not None:
                self.out.doc.meta[a["name"].lower()] = a["content"].strip()
        elif tag == "title":
            self.in_title = True
        elif tag in _HEADINGS:
            self._flush()
            self._flush_items()
            self.heading_level = _HEADINGS[tag]
        elif tag == "li":
            self._flush()
            self.in_li += 1
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag == "title":
            self.in_title = False
        elif tag in _HEADINGS and self.heading_level is not None:
            self.out.heading(self.heading_level, "".join(self.buf))
            self.buf.clear()
            self.heading_level = None
        elif tag == "li":
            self._flush()
            self.in_li = max(0, self.in_li - 1)
        elif tag in ("ul", "ol", "dl"):
            self._flush()
            if not self.in_li:
                self._flush_items()
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.in_title:
            self.title_tag += data
            return
        self.buf.append(data)

    def close(self) -> None:
        super().close()
        self._flush()
        self._flush_items()


def parse_html(text: str) -> ParsedDocument:
    """Parse HTML: ``h1``-``h6`` headings, paragraphs, lists (one paragraph per list).

    ``<title>`` is the title when the page has no ``h1`` before its content.

    Examples
    --------
    >>> d = parse_html("<h1>T</h1><p>Lead.</p><h2>A</h2><p>One.</p><pre>code</pre><ul><li>x</li><li>y</li></ul>")
    >>> d.title, d.lead, d.sections
    ('T', ['Lead.'], [('A', ['One.', 'x\\ny'])])
    """
    parser = _HTMLCollector()
    parser.feed(text)
    parser.close()
    doc = parser.out.doc
    if doc.title is None and _clean_space(parser.title_tag):
        doc.title = _clean_space(parser.title_tag)
    return doc
