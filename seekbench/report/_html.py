"""Render the report as one self-contained HTML page (figures embedded as data URIs, no scripts)."""

from __future__ import annotations

import base64
import html
import math

import pandas as pd

from ._explorer_section import audit_section
from ._tables import display_table, fmt, fmt_p

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1150px;
color:#1b1b1b;line-height:1.45;padding:0 1rem}
h1{font-size:1.7rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;
text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}.muted{color:#666;font-size:.85rem}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85rem;color:#444}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem}details{margin:.3rem 0;border:1px solid #e4e4e4;
padding:.3rem .6rem;border-radius:4px}summary{cursor:pointer}.step{margin:.25rem 0;padding:.25rem .5rem;
border-left:3px solid #bbb;font-size:.85rem;white-space:pre-wrap}.k-reasoning{border-color:#6a51a3}
.k-search{border-color:#2171b5}.k-search_result{border-color:#41ab5d;color:#333}.k-answer{border-color:#cb181d}
.lab{font-size:.75rem;background:#eef;border-radius:3px;padding:0 .3rem;margin-left:.3rem}
.warn{background:#fff7e6;border:1px solid #f0c36d;padding:.5rem .8rem;border-radius:4px}
"""


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _table(df: pd.DataFrame, left: tuple[str, ...] = ()) -> str:
    head = "".join(f'<th class="{"l" if c in left else ""}">{html.escape(str(c))}</th>' for c in df.columns)
    rows = []
    for _, r in df.iterrows():
        cells = "".join(f'<td class="{"l" if c in left else ""}">{html.escape(fmt(r[c]))}</td>' for c in df.columns)
        rows.append(f"<tr>{cells}</tr>")
    return (f"<div style='overflow-x:auto'><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def render_html(content, figures: dict[str, bytes], *, steps: pd.DataFrame, worst_n: int = 5, explorer: bool = True,
                sections: list[str] = ()) -> str:
    """The whole report page as a string; ``sections`` are extra HTML sections placed before the options.

    With ``explorer`` (explorer.html written beside the page) each agent's audit row and worst traces link into it.
    """
    c = content
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>seekbench report</title>"
             f"<style>{_CSS}</style></head><body>",
             "<h1>seekbench process audit</h1>",
             f"<p class='muted'>seekbench {html.escape(c.version)} &middot; generated {html.escape(c.generated)}"
             f" &middot; {len(c.audit)} traces, {len(steps)} steps &middot; labels: "
             f"{html.escape(str(c.inputs.get('labels', 'inline')))}"
             + (f" ({html.escape(str(c.inputs['labeled_steps']))})" if "labeled_steps" in c.inputs else "")
             + "</p>"]
    mt = display_table(c.summary.groups, c.by)
    parts += ["<h2>Per-group metrics</h2>",
              "<p class='muted'>95% bootstrap confidence intervals over whole traces; n/a = undefined "
              "(not enough labels), never zero.</p>", _table(mt, left=c.by)]
    parts.append("<h2>Evidence recovery</h2><div class='grid'>")
    parts.append(f"<figure>{_img(figures['erf'], 'ERF curves per group')}<figcaption>Cumulative incidence of "
                 "recovery; answering without recovering is a competing event, ending without an answer is "
                 "censoring.</figcaption></figure>")
    parts.append(f"<figure>{_img(figures['erf_km'], 'ERF Kaplan-Meier')}<figcaption class='warn'>For comparison "
                 "only: 1 - Kaplan-Meier treats traces that stopped as censored, which overstates recovery "
                 "when agents answer early.</figcaption></figure></div>")
    if c.recovery_test is not None:
        rt = c.recovery_test
        parts.append(f"<p>Do the groups' recovery curves differ? {html.escape(str(getattr(rt, 'test', '')))}: "
                     f"statistic {fmt(getattr(rt, 'statistic', math.nan))}, df {fmt(getattr(rt, 'df', math.nan))}, "
                     f"p {fmt_p(getattr(rt, 'p_value', math.nan))}.</p>")
    parts.append("<h2>Groundedness and calibration</h2><div class='grid'>")
    parts.append(f"<figure>{_img(figures['rqi_heatmap'], 'RQI heatmap')}<figcaption>Share of grounded reasoning "
                 "steps by reasoning type.</figcaption></figure>")
    parts.append(f"<figure>{_img(figures['calibration'], 'calibration chart')}<figcaption>Probability of answering "
                 "at each evidence state; the ideal policy answers exactly when E = 2.</figcaption></figure>")
    parts.append(f"<figure>{_img(figures['prevalence'], 'evidence prevalence')}<figcaption>Share of decision "
                 "points spent at each evidence state.</figcaption></figure></div>")
    parts.append(audit_section(c.audit, audit_options=c.audit_options, worst_n=worst_n, explorer=explorer)[0])
    parts.extend(sections)
    parts += ["<h2>Options and what could not be used</h2>", "<table><tbody>"]
    parts += [f"<tr><th class='l'>{html.escape(k)}</th><td class='l'>{html.escape(str(v))}</td></tr>"
              for k, v in c.options.items()]
    parts += [f"<tr><th class='l'>input {html.escape(k)}</th><td class='l'>{html.escape(str(v))}</td></tr>"
              for k, v in c.inputs.items()]
    parts.append("</tbody></table>")
    if any(c.unusable.values()):
        parts.append("<ul>" + "".join(f"<li>{v} {html.escape(k.replace('_', ' '))}</li>"
                                      for k, v in c.unusable.items() if v) + "</ul>")
    else:
        parts.append("<p>Every step the metrics need was labeled.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
