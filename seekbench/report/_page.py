"""The one page shell of every report page: the HTML document around a body, and the Markdown heading."""

from __future__ import annotations

import html

#: The stylesheet every report page inlines.
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1200px;
color:#1b1b1b;line-height:1.45;padding:0 1rem}
h1{font-size:1.7rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.8rem;margin:.6rem 0}th,td{border:1px solid #ddd;padding:.25rem .4rem;
text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}.muted{color:#666;font-size:.85rem}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85rem;color:#444}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem}details{margin:.3rem 0;border:1px solid #e4e4e4;
padding:.3rem .6rem;border-radius:4px}summary{cursor:pointer}.step{margin:.25rem 0;padding:.25rem .5rem;
border-left:3px solid #bbb;font-size:.85rem;white-space:pre-wrap}.k-reasoning{border-color:#6a51a3}
.k-search{border-color:#2171b5}.k-search_result{border-color:#41ab5d;color:#333}.k-answer{border-color:#cb181d}
.lab{font-size:.75rem;background:#eef;border-radius:3px;padding:0 .3rem;margin-left:.3rem}
.warn{background:#fff7e6;border:1px solid #f0c36d;padding:.5rem .8rem;border-radius:4px}
.tw{overflow-x:auto;max-width:100%}th{vertical-align:bottom}td.l{overflow-wrap:break-word;min-width:6em}td.v{white-space:nowrap}
.ci{font-size:.8em;color:#555}abbr[title]{text-decoration:none;border-bottom:1px dotted #888;cursor:help}
.note{background:#f4f6fa;border:1px dashed #aab;padding:.6rem .8rem;border-radius:4px;font-size:.9rem}
dl.glossary{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.85rem}
dl.glossary dt{font-weight:600}dl.glossary dd{margin:0}
"""


def html_page(title: str, heading: str, meta_html: str, body: list[str], *, sep: str = "") -> str:
    """A self-contained page: ``<title>``, the inline stylesheet, ``<h1>``, a muted line of provenance
    (``meta_html``, already escaped), then ``body``; parts joined by ``sep``."""
    return sep.join(
        [
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{CSS}</style></head><body>",
            f"<h1>{html.escape(heading)}</h1>",
            f"<p class='muted'>{meta_html}</p>",
            *body,
            "</body></html>",
        ]
    )


def markdown_page(heading: str, meta: str, body: str) -> str:
    """The Markdown form of :func:`html_page`: ``# heading``, the provenance line, then ``body``."""
    return f"# {heading}\n\n{meta}\n\n{body}"
