"""Disagreement examples of the agreement section: per judge, field and step kind, a few steps where the
judge and the reference differ, side by side with the step's text and the judge's explanation."""

from __future__ import annotations

import html

import pandas as pd

from ._explorer_section import explorer_link
from ._glossary import header_cell
from ._markdown_text import md_text

_INTRO = (
    "A few steps per field where the judge's label differs from the reference's (those with the judge's "
    "explanation first): read them before trusting a kappa. The step text is clipped"
)


_HEAD = "".join(
    header_cell(c, left=True) for c in ("trace", "step text", "reference label", "judge label", "judge's explanation")
)


def _groups(examples: pd.DataFrame):
    return examples.groupby(["rater", "field", "step_kind"], sort=False)


def disagreement_examples_html(examples: pd.DataFrame, *, explorer: bool) -> str:
    """The examples as HTML: one small table per (judge, field, step kind); with ``explorer`` each
    trace id links to the trace in explorer.html."""
    if not len(examples):
        return "<h3>Disagreement examples</h3><p>The judges agree with the reference on every compared step.</p>"
    more = "; the trace link opens the whole trace in the explorer." if explorer else "."
    parts = ["<h3 id='disagreements'>Disagreement examples</h3>", f"<p class='muted'>{_INTRO}{more}</p>"]
    for (rater, fld, kind), g in _groups(examples):
        rows = []
        for r in g.itertuples():
            tid = html.escape(str(r.trace_id))
            trace = f"<a href='{html.escape(explorer_link(trace=r.trace_id))}'>{tid}</a>" if explorer else tid
            expl = html.escape(r.explanation) if isinstance(r.explanation, str) else "<i>none given</i>"
            rows.append(
                f"<tr><td class='l'>{trace}<br><span class='muted'>{html.escape(str(r.agent))}, step {r.step}</span>"
                f"</td><td class='l' style='white-space:normal;max-width:34rem'>{html.escape(str(r.text))}</td>"
                f"<td class='l'>{html.escape(str(r.reference))}</td><td class='l'>{html.escape(str(r.judge))}</td>"
                f"<td class='l' style='white-space:normal;max-width:22rem'>{expl}</td></tr>"
            )
        parts.append(
            f"<h4>{html.escape(fld)} ({html.escape(kind)} steps): {html.escape(str(rater))}</h4>"
            f"<div style='overflow-x:auto'><table><thead><tr>{_HEAD}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    return "\n".join(parts)


def disagreement_examples_markdown(examples: pd.DataFrame, *, explorer: bool) -> str:
    """The examples as Markdown, one list per (judge, field, step kind)."""
    if not len(examples):
        return "### Disagreement examples\n\nThe judges agree with the reference on every compared step.\n"
    lines = ["### Disagreement examples\n", _INTRO + ".\n"]
    for (rater, fld, kind), g in _groups(examples):
        lines.append(f"**{md_text(fld)} ({md_text(kind)} steps): {md_text(rater)}**\n")
        for r in g.itertuples():
            tid = md_text(r.trace_id)
            tid = f"[{tid}]({explorer_link(trace=r.trace_id)})" if explorer else tid
            expl = f" Judge's explanation: {md_text(r.explanation)}" if isinstance(r.explanation, str) else ""
            lines.append(
                f"- {tid} ({md_text(r.agent)}, step {md_text(r.step)}): reference **{md_text(r.reference)}**, "
                f'judge **{md_text(r.judge)}**. "{md_text(r.text)}"{expl}'
            )
        lines.append("")
    return "\n".join(lines)
