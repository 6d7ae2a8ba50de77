"""The judges' validation records, shown beside the metrics their labels feed (Markdown and HTML).

One block per judge whose labels the report uses (``Analysis.judge_records``):
how its record was measured (method, data, n), Cohen's kappa and Gwet's AC1
per field and step kind with 95% CIs, cost per trace, and one line when it has
no record or a field's kappa is below 0.4. Every value from a file goes through
:func:`md_text` or ``html.escape``: a judge name is user input.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from ..llm import pick_result
from ._markdown_text import md_text

TITLE = "Validation of the judges behind these labels"

INTRO = (
    "How far each judge whose labels feed the numbers below agrees with human labels, as its validation "
    "record states it (stored with the judge; `seekbench judge list` shows them all)."
)


def _f(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _head(jr) -> str:
    rec = jr.record
    res = pick_result(rec, jr.features)
    feats = f" ({res['features']} features)" if res.get("features") else ""
    cost = rec.get("cost_per_trace_usd")
    return (
        f"{jr.judge}{feats}: {rec['method']}; {rec['method_detail']} Data: {rec['data']['name']}, "
        f"{rec['data']['n_traces']} traces." + (f" Cost per trace: ${cost:g}." if cost is not None else "")
    )


def _rows(jr) -> list[list[str]]:
    res = pick_result(jr.record, jr.features)
    return [
        [
            r["field"],
            r["step_kind"],
            str(r["n"]),
            f"{_f(r['kappa'])} ({_f(r['kappa_ci'][0])}, {_f(r['kappa_ci'][1])})",
            f"{_f(r['ac1'])} ({_f(r['ac1_ci'][0])}, {_f(r['ac1_ci'][1])})",
        ]
        for r in res["rows"]
    ]


_COLUMNS = ["field", "step kind", "n", "kappa (95% CI)", "AC1 (95% CI)"]


def judge_records_markdown(records: Sequence) -> str:
    """The section as Markdown (empty string when no judge's labels are used)."""
    if not records:
        return ""
    out = [f"## {TITLE}\n", INTRO.replace("`", "") + "\n"]
    for jr in records:
        if jr.record is not None:
            out += [
                md_text(_head(jr)) + "\n",
                "| " + " | ".join(_COLUMNS) + " |",
                "|---|---|---:|---|---|",
                *("| " + " | ".join(md_text(c) for c in row) + " |" for row in _rows(jr)),
                "",
            ]
        out += [f"- {md_text(n)}" for n in jr.notices()]
        out.append("")
    return "\n".join(out) + "\n"


def judge_records_html(records: Sequence) -> str:
    """The section as an HTML fragment (``<section>``; empty string when no judge's labels are used)."""
    if not records:
        return ""
    parts = [f"<section id='judge-validation'><h2>{html.escape(TITLE)}</h2><p>{html.escape(INTRO)}</p>"]
    for jr in records:
        if jr.record is not None:
            head = "".join(f"<th>{html.escape(c)}</th>" for c in _COLUMNS)
            body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in _rows(jr))
            parts.append(f"<p>{html.escape(_head(jr))}</p><table><tr>{head}</tr>{body}</table>")
        notices = jr.notices()
        if notices:
            parts.append("<div class='warn'>" + "<br>".join(html.escape(n) for n in notices) + "</div>")
    parts.append("</section>")
    return "".join(parts)
