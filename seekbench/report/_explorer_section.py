"""The report's audit section: flag definitions with their thresholds, per-agent rates, worst traces,
each agent row and each worst trace linked into the trace explorer."""

from __future__ import annotations

import html
from urllib.parse import quote

import pandas as pd

from ..analysis import AuditAnalysis
from ._explorer_page import PAGE
from ._glossary import header_cell
from ._markdown_text import md_text
from ._tables import option_text


def explorer_link(**params: str) -> str:
    """``explorer.html#key=value&...`` with the values percent-encoded."""
    return PAGE + "#" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())


def _pct(x: float) -> str:
    return f"{int(100 * x + 0.5)}%"  # half up, as the explorer's Math.round (29/40 is 73%, not 72%)


def audit_tables(audit: AuditAnalysis) -> dict[str, pd.DataFrame]:
    """``audit_rates`` (per agent: share of traces with each flag) and ``worst_traces`` (per agent, by score)."""
    return {"audit_rates": audit.rates, "worst_traces": audit.worst[["agent", "trace_id", "score", "flags", "correct"]]}


def audit_section(audit: AuditAnalysis, *, explorer: bool = True) -> tuple[str, str]:
    """The audit section as (HTML, Markdown); links go to the explorer when ``explorer`` is written beside it."""
    opts = audit.options
    rates = audit.rates
    worst = audit.worst
    worst_n = audit.worst_n
    n = len(audit.table)
    flagged = audit.n_flagged
    multi = audit.n_multi_flagged
    lead = (
        f"{flagged} of {n} traces raise at least one flag, {multi} raise two or more. Each agent's "
        f"{worst_n} worst traces by severity score are listed"
        + (" and open in the trace explorer" if explorer else "")
        + "."
    )
    definitions = audit.flag_definitions
    flags = audit.flags
    defs = "".join(f"<li><b>{f}</b>: {html.escape(definitions[f])}</li>" for f in flags)
    thresholds = ", ".join(
        f"{k} = " + ("none (any turn)" if k == "recovery_horizon" and v is None else option_text(v))
        for k, v in opts.items()
    )
    score = (
        "score = sum over the raised flags of: the ungrounded share; (2 - E at answer) / 2; 1 for "
        "not recovered; repeated queries / queries (0 = no flag, at most 4; "
        "<code>seekbench.metrics.trace_audit</code>)."
    )
    parts = ["<h2 id='audit'>Per-trace audit</h2>"]
    if explorer:
        parts.append(
            f"<p><a href='{PAGE}'><b>Open the trace explorer</b></a>: every trace, step by step, with "
            "filters (agent, flag, correctness, E at answer, judge disagreement), text search and "
            "sorting.</p>"
        )
    parts += [
        f"<p>{html.escape(lead)}</p>",
        f"<ul>{defs}</ul>",
        f"<p class='muted'>Thresholds: {html.escape(thresholds)}. {score} The full table is "
        "<code>tables/audit.csv</code>; rates and worst traces are <code>tables/audit_rates.csv</code> and "
        "<code>tables/worst_traces.csv</code>.</p>",
    ]
    head = "".join(header_cell(h) for h in ("traces", "flagged", *flags, "mean score"))
    rows = []
    for r in rates.to_dict("records"):
        agent = str(r["agent"])
        name = html.escape(agent)
        if explorer:
            params = {"agent": agent, "flag": "any", "sort": "score"} if r["flagged"] > 0 else {"agent": agent}
            name = f"<a href='{html.escape(explorer_link(**params))}'>{name}</a>"
        ids = worst.loc[worst["agent"] == r["agent"], ["trace_id", "score"]].to_numpy().tolist()
        links = (
            ", ".join(
                (
                    f"<a href='{html.escape(explorer_link(trace=t))}'>{html.escape(str(t))}</a>"
                    if explorer
                    else html.escape(str(t))
                )
                + f" ({s:.2f})"
                for t, s in ids
            )
            or "none flagged"
        )
        cells = "".join(f"<td>{_pct(r[c])}</td>" for c in ("flagged", *flags))
        rows.append(
            f"<tr><td class='l'>{name}</td><td>{r['n_traces']}</td>{cells}<td>{r['mean_score']:.2f}</td>"
            f"<td class='l'>{links}</td></tr>"
        )
    parts.append(
        "<div class='tw'><table><thead><tr>"
        + header_cell("agent", left=True)
        + head
        + header_cell("worst traces (score)", left=True)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )

    md = [
        "## Per-trace audit\n",
        lead + (f" Trace explorer: [{PAGE}]({PAGE})." if explorer else "") + "\n",
        "\n".join(f"- **{f}**: {definitions[f]}" for f in flags) + "\n",
        f"Thresholds: {md_text(thresholds)}. " + score.replace("<code>", "`").replace("</code>", "`") + "\n",
        "| agent | traces | flagged | " + " | ".join(flags) + " | mean score | worst traces |",
        "|---" * (5 + len(flags)) + "|",
    ]
    for r in rates.to_dict("records"):
        ids = worst.loc[worst["agent"] == r["agent"], "trace_id"].tolist()
        links = (
            ", ".join(f"[{md_text(t)}]({explorer_link(trace=t)})" if explorer else md_text(t) for t in ids) or "none"
        )
        agent = md_text(r["agent"])
        md.append(
            f"| {agent} | {r['n_traces']} | "
            + " | ".join(_pct(r[c]) for c in ("flagged", *flags))
            + f" | {r['mean_score']:.2f} | {links} |"
        )
    return "\n".join(parts), "\n".join(md) + "\n"
