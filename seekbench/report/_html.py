"""Render the report as one self-contained HTML page (figures embedded as data URIs, no scripts)."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence

from ..analysis import Analysis
from ._comparison_section import comparison_html
from ._explorer_section import audit_section
from ._figures import NO_CALIBRATION, figure_html
from ._glossary import glossary_section
from ._page import html_page
from ._tables import display_table, fmt, fmt_p, option_text, recovery_test_text, undefined_reasons
from ._tables import html_table as _table
from ._toc import html_with_toc


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def render_html(
    analysis: Analysis,
    figures: dict[str, bytes],
    *,
    explorer: bool = True,
    sections: Sequence[str] = (),
    lead: Sequence[str] = (),
    legend: dict[str, str] | None = None,
) -> str:
    """The whole report page as a string, with a table of contents under the title.

    The comparison of the agents comes first, then ``lead`` (sections a reader needs before the
    details, such as judge agreement), then the per-group metrics and figures, the audit, and
    ``sections`` (extra HTML sections placed before the options). With ``explorer`` (explorer.html
    written beside the page) each agent's audit row and worst traces link into it. ``legend``:
    ``{full agent name: label}`` (the agents as the page names them).
    """
    a = analysis
    c = a.process
    prov = a.provenance
    meta = (
        f"seekbench {html.escape(prov.seekbench_version)} &middot; generated {html.escape(prov.generated)}"
        f" &middot; {a.n_traces} traces, {a.n_steps} steps &middot; labels: "
        f"{html.escape(str(prov.inputs.get('labels', 'inline')))}"
        + (f" ({html.escape(str(prov.inputs['labeled_steps']))})" if "labeled_steps" in prov.inputs else "")
    )
    parts = [comparison_html(a.comparison, figures.get("comparison"), legend)] if a.comparison is not None else []
    parts.extend(lead)
    mt = display_table(c.summary.groups, c.by)
    parts += [
        "<h2>Per-group metrics</h2>",
        "<p class='muted'>95% bootstrap confidence intervals over whole traces; "
        f"{html.escape(undefined_reasons(c.summary.warnings))}.</p>",
        _table(mt, left=c.by),
    ]
    parts.append("<h2>Evidence recovery</h2><div class='grid'>")
    parts.append(
        f"<figure>{_img(figures['erf'], 'ERF curves per group')}<figcaption>Cumulative incidence of "
        "recovery; answering without recovering is a competing event, ending without an answer is "
        "censoring.</figcaption></figure>"
    )
    parts.append(
        f"<figure>{_img(figures['erf_km'], 'ERF Kaplan-Meier')}<figcaption class='warn'>For comparison "
        "only: 1 - Kaplan-Meier treats traces that stopped as censored, which overstates recovery "
        "when agents answer early.</figcaption></figure></div>"
    )
    if c.recovery_test is not None:
        rt = c.recovery_test
        name = recovery_test_text(str(getattr(rt, "test", "")))
        parts.append(
            f"<p>Do the groups' recovery curves differ? {html.escape(name)}: "
            f"statistic {fmt(getattr(rt, 'statistic', math.nan))}, df {fmt(getattr(rt, 'df', math.nan))}, "
            f"p {fmt_p(getattr(rt, 'p_value', math.nan))}.</p>"
        )
    parts.append("<h2>Groundedness and calibration</h2><div class='grid'>")
    parts.append(
        f"<figure>{_img(figures['rqi_heatmap'], 'RQI heatmap')}<figcaption>Share of grounded reasoning "
        "steps by reasoning type.</figcaption></figure>"
    )
    parts.append(
        figure_html(
            figures,
            "calibration",
            "calibration chart",
            "Probability of answering at each evidence state; the ideal policy answers exactly when E = 2.",
            note=NO_CALIBRATION,
        )
    )
    parts.append(
        f"<figure>{_img(figures['prevalence'], 'evidence prevalence')}<figcaption>Share of decision "
        "points spent at each evidence state.</figcaption></figure></div>"
    )
    parts.append(audit_section(a.audit, explorer=explorer)[0])
    parts.extend(sections)
    parts += ["<h2>Options and what could not be used</h2>", "<table><tbody>"]
    parts += [
        f"<tr><th class='l'>{html.escape(k)}</th><td class='l'>{html.escape(option_text(v))}</td></tr>"
        for k, v in prov.options.items()
    ]
    parts += [
        f"<tr><th class='l'>input {html.escape(k)}</th><td class='l'>{html.escape(str(v))}</td></tr>"
        for k, v in prov.inputs.items()
    ]
    parts.append("</tbody></table>")
    if any(c.unusable.values()):
        parts.append(
            "<ul>"
            + "".join(f"<li>{v} {html.escape(k.replace('_', ' '))}</li>" for k, v in c.unusable.items() if v)
            + "</ul>"
        )
    else:
        parts.append("<p>Every step the metrics need was labeled.</p>")
    parts.append(glossary_section(parts))
    toc, parts = html_with_toc(parts)
    return html_page("seekbench report", "seekbench process audit", meta, [toc, *parts], sep="\n")
