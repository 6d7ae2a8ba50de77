"""The comparison that opens the report: one sentence per headline metric, the agents' values and order,
and the differences against the baseline agent with their paired CIs (rendered from a ``Comparison``)."""

from __future__ import annotations

import html
import math

import pandas as pd

from ..analysis import HEADLINE_METRICS, Comparison

_ARROW = {"higher": "\u2191", "lower": "\u2193"}
#: Styles of this section only (the page's stylesheet is shared by every report page).
_STYLE = (
    "<style>#comparison>h2{margin-top:.8rem}.verdicts{margin:.3rem 0 .6rem;padding-left:1.2rem;font-size:.93rem;"
    "line-height:1.38}.verdicts li{margin:.15rem 0}"
    ".dir{color:#555;font-size:.8rem;white-space:nowrap}.cmp td{white-space:nowrap}"
    ".cmp th.l{min-width:9rem;max-width:16rem;white-space:normal}"
    ".clear-better{background:#e3f4e1;font-weight:600}.clear-worse{background:#fbe3e1;font-weight:600}"
    ".best{font-weight:700}.ci{color:#555;font-size:.78rem}</style>"
)


def _num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"


def _signed(x) -> str:
    s = _num(x)
    return ("+" + s) if s != "n/a" and float(x) > 0 else s


def _ci(lo, hi, *, signed: bool = True) -> str:
    """``[lo, hi]`` to 2 decimals (as every CI of the report), with signs for differences."""
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (lo, hi)):
        return "no CI"

    def f(x: float) -> str:
        text = f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"
        return "+" + text if signed and x > 0 and text.strip("0.") else text

    return f"[{f(lo)}, {f(hi)}]"


def _name(agent: str) -> str:
    """An agent name that may wrap at its dashes and underscores (long model names)."""
    esc = html.escape(agent)
    return esc.replace("-", "-<wbr>").replace("_", "_<wbr>").replace(".", ".<wbr>")


def _metric_head(m) -> str:
    return f"{html.escape(m.name)} <span class='dir'>{_ARROW[m.better]} {html.escape(m.direction)}</span>"


def _values_frame(c: Comparison) -> pd.DataFrame:
    """Agent (rows) by metric (columns): value and rank, for the Markdown table."""
    v = c.values
    rows = []
    for a in c.agents:
        sub = v[v["agent"] == a].set_index("metric")
        row = {"agent": a}
        for m in HEADLINE_METRICS:
            r = sub.loc[m.key]
            rank = "" if pd.isna(r["rank"]) else f" #{int(r['rank'])}"
            row[f"{m.short} {_ARROW[m.better]}"] = _num(r["value"]) + rank + (" (best)" if r["best"] else "")
        rows.append(row)
    return pd.DataFrame(rows)


def _differences_frame(c: Comparison) -> pd.DataFrame:
    """Agent (rows, the baseline left out) by metric (columns): difference, CI and whether it is clear."""
    d = c.against_baseline()
    rows = []
    for a in c.agents:
        if a == c.baseline:
            continue
        sub = d[d["agent"] == a].set_index("metric")
        row = {"agent": a}
        for m in HEADLINE_METRICS:
            r = sub.loc[m.key]
            mark = (" clearly better" if r["better"] else " clearly worse") if r["clear"] else ""
            row[f"{m.short} {_ARROW[m.better]}"] = f"{_signed(r['difference'])} {_ci(r['lower'], r['upper'])}{mark}"
        rows.append(row)
    return pd.DataFrame(rows)


def _head() -> str:
    """The metric column headings: short name and arrow, the full name and direction on hover."""
    return "".join(
        f"<th title='{html.escape(m.name)}: {html.escape(m.direction)}'>{html.escape(m.short)} "
        f"<span class='dir'>{_ARROW[m.better]}</span></th>"
        for m in HEADLINE_METRICS
    )


def _level(c: Comparison) -> str:
    return f"{100 * (1 - c.options['alpha']):g}"


def _paired_note(c: Comparison) -> str:
    d = c.against_baseline()
    d = d[d["agent"] != c.baseline].drop_duplicates("agent")
    n = d["n_shared_questions"].astype(int)
    if len(d) <= 4:
        shared = ", ".join(f"{a} {k}" for a, k in zip(d["agent"], n, strict=True))
    else:
        shared = f"{n.min()} to {n.max()} per agent"
    o = c.options
    return (
        f"Differences are agent - {c.baseline} with {_level(c)}% percentile bootstrap CIs (B = {o['n_boot']}, seed "
        f"{o['seed']}) resampling questions, so traces of a question both agents answered stay paired "
        f"(questions shared with {c.baseline}: {shared}). A difference is clear when its CI excludes 0."
    )


def comparison_tables(c: Comparison) -> dict[str, pd.DataFrame]:
    """The CSV tables: ``comparison`` (every agent against the baseline, per metric) and
    ``comparison_summary`` (per metric: direction, order, best, sentence)."""
    return {"comparison": c.against_baseline(), "comparison_summary": c.metrics}


def comparison_html(c: Comparison) -> str:
    """The section as HTML: sentences first (the first screen), then values and differences."""
    metrics = {m.key: m for m in HEADLINE_METRICS}
    items = "".join(
        f"<li><b>{_metric_head(metrics[r.metric])}</b>: {html.escape(r.sentence)}</li>" for r in c.metrics.itertuples()
    )
    parts = [
        f"<section id='comparison'>{_STYLE}<h2>Which agent is better</h2>",
        f"<ul class='verdicts'>{items}</ul>",
        f"<p class='muted'>{html.escape(_paired_note(c))}</p>",
    ]
    v = c.values
    body = []
    for a in c.agents:
        sub = v[v["agent"] == a].set_index("metric")
        cells = []
        for m in HEADLINE_METRICS:
            r = sub.loc[m.key]
            rank = "" if pd.isna(r["rank"]) else f" <span class='ci'>#{int(r['rank'])}</span>"
            ci = (
                ""
                if pd.isna(r["lower"])
                else f"<br><span class='ci'>{_ci(r['lower'], r['upper'], signed=False)}</span>"
            )
            cls = " class='best'" if r["best"] else ""
            cells.append(f"<td{cls}>{_num(r['value'])}{rank}{ci}</td>")
        body.append(f"<tr><th class='l'>{_name(a)}</th>{''.join(cells)}</tr>")
    table = (
        "<div style='overflow-x:auto'><table class='cmp'><thead><tr><th class='l'>agent</th>{}</tr></thead>"
        "<tbody>{}</tbody></table></div>"
    )
    parts += [
        "<h3>Values and order</h3><p class='muted'>Each agent's value with its own 95% CI (none for tool calls "
        "and repeated queries); #1 is best in the metric's direction (\u2191 higher, \u2193 lower is better), "
        "bold the best (ties share it). Hover a heading for the metric's name.</p>",
        table.format(_head(), "".join(body)),
    ]
    d = c.against_baseline()
    body = []
    for a in c.agents:
        if a == c.baseline:
            continue
        sub = d[d["agent"] == a].set_index("metric")
        cells = []
        for m in HEADLINE_METRICS:
            r = sub.loc[m.key]
            cls = ""
            if r["clear"]:
                cls = " class='clear-better'" if r["better"] else " class='clear-worse'"
            cells.append(
                f"<td{cls}>{_signed(r['difference'])}<br><span class='ci'>{_ci(r['lower'], r['upper'])}</span></td>"
            )
        body.append(f"<tr><th class='l'>{_name(a)}</th>{''.join(cells)}</tr>")
    parts += [
        f"<h3 id='baseline'>Differences against {html.escape(c.baseline)}</h3>",
        "<p class='muted'>Agent minus baseline (<code>--baseline NAME</code> picks another). Green: clearly "
        f"better than the baseline; red: clearly worse ({_level(c)}% CI excludes 0); plain: not clear.</p>",
        table.format(_head(), "".join(body)),
        "</section>",
    ]
    return "\n".join(parts)


def comparison_markdown(c: Comparison, table) -> str:
    """The section as Markdown; ``table`` renders a DataFrame as a Markdown table."""
    metrics = {m.key: m for m in HEADLINE_METRICS}
    lines = ["## Which agent is better\n"]
    for r in c.metrics.itertuples():
        m = metrics[r.metric]
        lines.append(f"- **{m.name}** ({_ARROW[m.better]} {m.direction}): {r.sentence}")
    lines += [
        "",
        _paired_note(c) + "\n",
        "### Values and order\n",
        table(_values_frame(c)),
        f"\n### Differences against {c.baseline}\n",
        table(_differences_frame(c)),
        "",
    ]
    return "\n".join(lines)
