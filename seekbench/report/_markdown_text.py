r"""Text from the input placed in Markdown so that it renders as itself: no HTML, no markup, one line.

Names, questions, step texts, labels and file names come from the traces and annotation sets
the report reads; in ``report.md`` they pass through :func:`md_text`, wherever they sit (a
sentence, a heading, a list item, a table cell, a link's text).
"""

from __future__ import annotations

import re

#: Backslash-escaped wherever they are: code, emphasis, links and images, table cells, attribute lists
#: (``{: onclick=...}`` with python-markdown's attr_list), and the backslash itself.
_INLINE = re.compile(r"([\\`*_\[\]{}|])")
#: What starts a block when it opens a line (a list item's text counts): an ATX heading (python-markdown
#: needs no space after ``#``), a bullet or thematic break, an ordered list's ``1.`` or ``1)``.
_BLOCK_START = re.compile(r"^(#|[-+](?=[\s\-+]|$)|\d{1,9}(?=[.)](?:\s|$)))")
#: Line breaks of every kind (``str.splitlines``): a table row or a list item is one line.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def _block_start(m: re.Match) -> str:
    s = m.group(1)
    return "\\" + s if not s[0].isdigit() else s + "\\"


def md_text(value: object) -> str:
    r"""``str(value)`` as Markdown that CommonMark, GitHub and python-markdown (MkDocs) show as the text itself.

    ``&``, ``<`` and ``>`` become character references, so no tag, comment or entity of the
    input reaches the HTML; ``\ ` * _ [ ] { } |`` are backslash-escaped, so no code span,
    emphasis, link, image, attribute list or table cell boundary is made; a heading, bullet or
    ordered-list marker at the start is escaped, so the text may open a line or a list item;
    line breaks become spaces. Escaping, not deletion: every other character is kept.

    ``~`` and ``$`` are left as they are (python-markdown would show ``\~`` and ``\$``): on
    GitHub ``~~a~~`` strikes text and ``$a$`` is set as math, which changes how the text
    looks, never what the page runs.

    Examples
    --------
    >>> md_text("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> md_text("[x](javascript:alert(1)) *a_b* | `c`")
    '\\[x\\](javascript:alert(1)) \\*a\\_b\\* \\| \\`c\\`'
    >>> md_text("# one\ntwo"), md_text("- x"), md_text("1. x"), md_text("-0.25")
    ('\\# one two', '\\- x', '1\\. x', '-0.25')
    """
    s = _LINE_BREAK.sub(" ", str(value))
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _INLINE.sub(r"\\\1", s)
    return _BLOCK_START.sub(_block_start, s, count=1)
