"""Text from the input in report.md renders as itself with python-markdown (MkDocs' renderer): no tag, no markup,
one table cell, one line; escaped, not deleted."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import markdown
import pytest

from seekbench.report._markdown import _md_table
from seekbench.report._markdown_text import md_text

#: The extensions MkDocs turns on by default, and attr_list, which Material for MkDocs sites add.
EXTENSIONS = ["tables", "toc", "attr_list"]

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<!-- hidden --> <style>*{}</style>",
    "&lt;script&gt; &amp; &#60;b&#62;",
    "[click](javascript:alert(1))",
    "![x](http://evil.example/t.png)",
    "<http://evil.example>",
    "a](javascript:alert(1))[b",
    "*em* _em_ **strong** __strong__ `code` ``x``",
    "| cell | break |",
    "back\\slash \\*not em\\*",
    "{: onclick=alert(1) }",
    "# heading",
    "#nospace",
    "- item",
    "+ item",
    "1. item",
    "7) item",
    "---",
    "> quote",
    "[^1]: footnote",
    "*[HTML]: abbreviation",
    r"$\x$ $$ \frac{ _^{}",
    '=HYPERLINK("http://x")',
    "    indented",
]


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def _render(md: str) -> _Text:
    parser = _Text()
    parser.feed(markdown.markdown(md, extensions=EXTENSIONS))
    return parser


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("where", ["line", "item", "sentence", "strong", "link"])
def test_payload_renders_as_itself(payload, where):
    text = md_text(payload)
    md = {
        "line": text,
        "item": f"- {text}",
        "sentence": f"Agents: {text}, b.",
        "strong": f"**{text}**",
        "link": f"[{text}](explorer.html#trace=x)",
    }[where]
    page = _render(md)
    allowed = {"line": {"p"}, "item": {"ul", "li"}, "sentence": {"p"}, "strong": {"p", "strong"}, "link": {"p", "a"}}[
        where
    ]
    if where == "line" and payload.startswith("    "):
        allowed = {"pre", "code"}  # indented, it is a code block: shown as written, never run
    assert {t for t, _ in page.tags} <= allowed, page.tags
    assert all(k in ("href",) for _, attrs in page.tags for k, _ in attrs), page.tags
    assert all(v == "explorer.html#trace=x" for _, attrs in page.tags for _, v in attrs)
    assert payload.strip() in "".join(page.text)  # the visible text still reads the input


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_stays_in_its_table_cell(payload):
    import pandas as pd

    df = pd.DataFrame({"agent": [payload, "b"], "value": [0.5, -0.25]})
    page = _render(_md_table(df))
    cells = [t for t, _ in page.tags if t in ("td", "th")]
    assert cells == ["th", "th", "td", "td", "td", "td"]
    assert {t for t, _ in page.tags} <= {"table", "thead", "tbody", "tr", "th", "td"}
    assert payload.strip() in "".join(page.text)


def test_line_breaks_become_spaces():
    for brk in ("\n", "\r\n", "\r", "\u2028", "\x85", "\x0c"):
        assert md_text(f"a{brk}# b") == "a # b"
        assert len(_render(f"- {md_text(f'x{brk}- y')}").tags) == 2  # one list, one item


def test_plain_names_are_left_readable():
    for name in ("careful-planner", "qwen2.5-7b", "-0.25", "0.241 (0.15, 0.32)", "ERF(8)", "~user", "a.b"):
        assert md_text(name) == name
    assert md_text("a_b") == r"a\_b" and md_text("[0.1, 0.2]") == r"\[0.1, 0.2\]"
    assert html.unescape(re.sub(r"\\(.)", r"\1", md_text("<a & b>"))) == "<a & b>"
