"""The comparison that opens the report: one sentence per headline metric, the agents' values and order,
and the differences against the baseline agent with their paired CIs (rendered from a ``Comparison``)."""

from __future__ import annotations

import html
import math

import pandas as pd

from ..analysis import HEADLINE_METRICS, Comparison, HeadlineMetric
from ._glossary import header_cell, term
from ._markdown_text import md_text

_ARROW = {"higher": "\u2191", "lower": "\u2193"}
#: Styles of this section only (the page's stylesheet is shared by every report page).
_STYLE = (  # scoped to the section: the page's own rules (e.g. .ci in other tables) stay as they are
    "<style>#comparison>h2{margin-top:.8rem}#comparison .verdicts{margin:.3rem 0 .6rem;padding-left:1.2rem;"
    "font-size:.93rem;line-height:1.38}#comparison .verdicts li{margin:.15rem 0}"
    "#comparison .verdicts.short{columns:2;column-gap:2rem;font-size:.88rem;line-height:1.3;margin-top:.2rem}"
    "#comparison .verdicts.short li{break-inside:avoid}"
    "#comparison figure.forest{margin:.4rem 0;padding:0}#comparison figure.forest img{width:100%;height:auto}"
    "#comparison .dir{color:#555;font-size:.8rem;white-space:nowrap}#comparison .cmp td{white-space:nowrap}"
    "#comparison .cmp th.l{min-width:9rem;max-width:16rem;white-space:normal}"
    "#comparison .clear-better{background:#e3f4e1;font-weight:600}"
    "#comparison .clear-worse{background:#fbe3e1;font-weight:600}"
    "#comparison .best{font-weight:700}#comparison .ci{color:#555;font-size:.78rem}</style>"
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
        if x != 0 and not text.strip("+-0."):  # a bound just off 0 keeps its sign and first digit: -0.003
            text = f"{x:.3f}" if abs(x) >= 0.0005 else f"{x:.1e}"
        return "+" + text if signed and x > 0 and text.strip("0.") else text

    return f"[{f(lo)}, {f(hi)}]"


def _name(agent: str) -> str:
    """An agent name that may wrap at its dashes and underscores (long model names)."""
    esc = html.escape(agent)
    return esc.replace("-", "-<wbr>").replace("_", "_<wbr>").replace(".", ".<wbr>")


def _metric_head(m) -> str:
    return f"{html.escape(m.name)} <span class='dir'>{_ARROW[m.better]} {html.escape(m.direction)}</span>"


def _grid(table: pd.DataFrame, agents) -> list[tuple[str, list[tuple[HeadlineMetric, pd.Series]]]]:
    """Per agent (in the order given), per headline metric, its row of ``table`` (values or differences)."""
    by = {(r["agent"], r["metric"]): r for _, r in table.iterrows()}
    return [(a, [(m, by[(a, m.key)]) for m in HEADLINE_METRICS]) for a in agents]


def _value_text(r: pd.Series) -> str:
    rank = "" if pd.isna(r["rank"]) else f" #{int(r['rank'])}"
    return _num(r["value"]) + rank + (" (best)" if r["best"] else "")


def _verdict_mark(r: pd.Series) -> str:
    """The verdict after a difference: clearly better or worse, borderline (a bound within Monte Carlo
    error of 0), or nothing (not clear)."""
    if r.get("verdict") == "borderline":
        return " borderline"
    return (" clearly better" if r["better"] else " clearly worse") if r["clear"] else ""


def _difference_text(r: pd.Series) -> str:
    return f"{_signed(r['difference'])} {_ci(r['lower'], r['upper'])}{_verdict_mark(r)}"


def _others(c: Comparison) -> list[str]:
    return [a for a in c.agents if a != c.baseline]


def _frame(grid, text) -> pd.DataFrame:
    """Agent (rows) by metric (columns) for the Markdown tables, each cell ``text(row)``."""
    return pd.DataFrame(
        [{"agent": a, **{f"{m.short} {_ARROW[m.better]}": text(r) for m, r in cells}} for a, cells in grid]
    )


#: The glossary term of each headline metric's column.
_TERM = {
    "rqi": "RQI",
    "ce": "CE",
    "recovered_by_8": "ERF(8)",
    "accuracy": "accuracy",
    "overconfident": "overconfident",
    "overcautious": "overcautious",
    "tool_calls": "tool calls",
    "duplicate_query_rate": "duplicate-query rate",
}


def _head() -> str:
    """The column headings: agent, then each metric's short name and arrow; the definition and direction on
    hover, and a ``data-term`` the page's glossary collects."""
    cells = [header_cell("agent", left=True)]
    for m in HEADLINE_METRICS:
        label = _TERM.get(m.key, m.short)
        title = f"{term(label)[1] or m.name} ({m.direction})"
        cells.append(
            f"<th data-term='{html.escape(label, quote=True)}'><abbr title='{html.escape(title, quote=True)}'>"
            f"{html.escape(m.short)}</abbr> <span class='dir'>{_ARROW[m.better]}</span></th>"
        )
    return "".join(cells)


def _level(c: Comparison) -> str:
    return f"{100 * (1 - c.options['alpha']):g}"


#: Fewer shared questions than this and a paired comparison is effectively unpaired.
FEW_SHARED = 10


def _shared_counts(c: Comparison) -> pd.DataFrame:
    d = c.against_baseline()
    d = d[d["agent"] != d["baseline"]].drop_duplicates(["agent", "baseline"])
    rank = {a: i for i, a in enumerate(c.agents)}  # the report's one agent order
    d = d.iloc[d["agent"].map(rank).argsort(kind="stable").to_numpy()]
    return d.assign(n=d["n_shared_questions"].astype(int))


def _paired_note(c: Comparison) -> str:
    d = _shared_counts(c)
    if c.baseline == "best":
        pairs = d.drop_duplicates(["agent", "baseline"])
        shared = f"{pairs['n'].min()} to {pairs['n'].max()} per pair" if len(pairs) else "none"
        whom = "each metric's best agent"
    else:
        d = d.drop_duplicates("agent")
        n = d["n"]
        if len(d) <= 4:
            shared = ", ".join(f"{a} {k}" for a, k in zip(d["agent"], n, strict=True))
        else:
            shared = f"{n.min()} to {n.max()} per agent"
        whom = c.baseline
    o = c.options
    return (
        f"Differences are agent - {whom} with {_level(c)}% percentile bootstrap CIs (B = {o['n_boot']}, seed "
        f"{o['seed']}) resampling questions, so traces of a question both agents answered stay paired "
        f"(questions shared with {whom}: {shared}). A difference is clear when its CI excludes 0, "
        "borderline when a bound lies within Monte Carlo error of 0 (the share of draws past 0 within 2 "
        "standard errors of alpha/2), whatever the seed. Where every draw of a rate's difference is the same "
        "(both agents at 0, or both at 1) the CI is Newcombe's hybrid score interval instead. Each agent's own "
        "CI: Wilson score interval for the rates (accuracy, overconfident, overcautious), the ERF curve's "
        "delta-method interval for ERF(8) (the same as in the ERF table and figure), percentile bootstrap "
        "for RQI and CE."
    )


def unpaired_warning(c: Comparison) -> str | None:
    """One sentence when some agent shares fewer than :data:`FEW_SHARED` questions with its baseline."""
    d = _shared_counts(c)
    few = d[d["n"] < FEW_SHARED].drop_duplicates(["agent", "baseline"])
    if not len(few):
        return None
    pairs = ", ".join(f"{a} ({k} with {b})" for a, b, k in zip(few["agent"], few["baseline"], few["n"], strict=True))
    return (
        f"Few questions shared: {pairs}. With fewer than {FEW_SHARED} questions in common a difference is "
        "effectively unpaired (each agent's traces are resampled on their own), so its CI is wider than a paired "
        "one would be; a baseline that answered the same questions (--baseline NAME, or --baseline best) pairs more."
    )


def verdict_lines(c: Comparison) -> list[tuple[HeadlineMetric, str]]:
    """One short line per metric: the best agent, its value, and whom it is not clearly ahead of."""
    values = c.values.set_index(["metric", "agent"])
    diffs = c.differences
    out = []
    for m in HEADLINE_METRICS:
        row = c.metrics.set_index("metric").loc[m.key]
        leaders = [a for a in str(row["best"]).split(", ") if a]
        if not leaders:
            out.append((m, "n/a for every agent"))
            continue
        value = _num(values.loc[(m.key, leaders[0]), "value"])
        if len(leaders) == 1:
            who = f"{leaders[0]} best ({value})"
        else:
            who = f"{_join(leaders) if len(leaders) == 2 else f'{len(leaders)} agents'} tied best ({value})"
        mine = diffs[(diffs["metric"] == m.key) & (diffs["agent"] == leaders[0]) & ~diffs["other"].isin(leaders)]
        unclear = [o for o, v in zip(mine["other"], mine["verdict"], strict=True) if v != "clear"]
        if not len(mine):
            tail = ""
        elif not unclear:
            others = list(mine["other"])
            tail = "; clearly ahead of " + (_join(others) if len(others) <= 2 else "every other agent")
        else:
            n = len(mine)
            if len(unclear) == n and n > 1:
                tail = "; not clearly ahead of any other agent"
            else:
                tail = "; not clearly ahead of " + (
                    _join(unclear) if len(unclear) <= 2 else f"{len(unclear)} of {n} others"
                )
        out.append((m, who + tail))
    return out


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def legend_text(legend: dict[str, str]) -> list[tuple[str, str]]:
    """``(label, full name)`` of each agent shown under a label other than its name."""
    return [(short, full) for full, short in legend.items() if short != full]


def comparison_tables(c: Comparison) -> dict[str, pd.DataFrame]:
    """The CSV tables: ``comparison`` (every agent against the baseline, per metric) and
    ``comparison_summary`` (per metric: direction, order, best, sentence)."""
    return {"comparison": c.against_baseline(), "comparison_summary": c.metrics}


def comparison_html(c: Comparison, figure: bytes | None = None, legend: dict[str, str] | None = None) -> str:
    """The section as HTML: the forest figure and one verdict line per metric first (the first screen),
    then the sentences, values and differences. ``legend``: ``{full name: label}`` of the agents."""
    import base64

    lines = "".join(
        f"<li><b><abbr title='{html.escape(m.name, quote=True)}'>{html.escape(m.short)}</abbr></b> "
        f"<span class='dir'>{_ARROW[m.better]}</span>: {html.escape(text)}</li>"
        for m, text in verdict_lines(c)
    )
    parts = [f"<section id='comparison'>{_STYLE}<h2>Which agent is better</h2>"]
    if figure is not None:
        data = base64.b64encode(figure).decode("ascii")
        parts.append(
            "<figure class='forest'><img alt='each agent's value with its 95% CI per metric, coloured by its "
            f"difference from the baseline' src='data:image/png;base64,{data}'></figure>"
        )
    parts.append(f"<ul class='verdicts short'>{lines}</ul>")
    warning = unpaired_warning(c)
    if warning:
        parts.append(f"<p class='warn'>{html.escape(warning)}</p>")
    pairs = legend_text(legend or {})
    if pairs:
        items = "; ".join(f"<b>{html.escape(s)}</b> = {html.escape(f)}" for s, f in pairs)
        parts.append(f"<p class='muted legend'>Agent labels: {items} (tables/agents.csv).</p>")
    metrics = {m.key: m for m in HEADLINE_METRICS}
    items = "".join(
        f"<li><b>{_metric_head(metrics[r.metric])}</b>: {html.escape(r.sentence)}</li>" for r in c.metrics.itertuples()
    )
    parts += [
        f"<details><summary>Each verdict in a full sentence</summary><ul class='verdicts'>{items}</ul></details>",
        f"<p class='muted'>{html.escape(_paired_note(c))}</p>",
    ]
    table = "<div style='overflow-x:auto'><table class='cmp'><thead><tr>{}</tr></thead><tbody>{}</tbody></table></div>"

    def body(grid, cell) -> str:
        return "".join(
            f"<tr><th class='l'>{_name(a)}</th>{''.join(cell(r) for _, r in cells)}</tr>" for a, cells in grid
        )

    def value_cell(r: pd.Series) -> str:
        rank = "" if pd.isna(r["rank"]) else f" <span class='ci'>#{int(r['rank'])}</span>"
        ci = "" if pd.isna(r["lower"]) else f"<br><span class='ci'>{_ci(r['lower'], r['upper'], signed=False)}</span>"
        best = " class='best'" if r["best"] else ""
        return f"<td{best}>{_num(r['value'])}{rank}{ci}</td>"

    def difference_cell(r: pd.Series) -> str:
        cls = (" class='clear-better'" if r["better"] else " class='clear-worse'") if r["clear"] else ""
        mark = " <span class='ci'>borderline</span>" if r.get("verdict") == "borderline" else ""
        ci = _ci(r["lower"], r["upper"])
        return f"<td{cls}>{_signed(r['difference'])}{mark}<br><span class='ci'>{ci}</span></td>"

    parts += [
        "<h3>Values and order</h3><p class='muted'>Each agent's value with its own 95% CI (none for tool calls "
        "and the duplicate-query rate); #1 is best in the metric's direction (\u2191 higher, \u2193 lower is better), "
        "bold the best (ties share it). Hover a heading for the metric's name.</p>",
        table.format(_head(), body(_grid(c.values, c.agents), value_cell)),
    ]
    parts += [
        f"<h3 id='baseline'>Differences against {html.escape(_whom(c))}</h3>",
        "<p class='muted'>Agent minus baseline (<code>--baseline NAME</code> picks another). Green: clearly "
        f"better than the baseline; red: clearly worse ({_level(c)}% CI excludes 0); plain: not clear, or "
        "borderline where so marked.</p>",
        table.format(_head(), body(_grid(c.against_baseline(), _others(c)), difference_cell)),
        "</section>",
    ]
    return "\n".join(parts)


def _whom(c: Comparison) -> str:
    return "each metric's best agent" if c.baseline == "best" else c.baseline


def comparison_markdown(c: Comparison, table, figure: str | None = None, legend: dict[str, str] | None = None) -> str:
    """The section as Markdown; ``table`` renders a DataFrame as a Markdown table, ``figure`` is the
    forest figure's file (relative to report.md)."""
    metrics = {m.key: m for m in HEADLINE_METRICS}
    lines = ["## Which agent is better\n"]
    if figure:
        lines.append(f"![Each agent's value with its 95% CI per metric, against the baseline]({figure})\n")
    lines += [f"- **{m.short}** {_ARROW[m.better]}: {md_text(text)}" for m, text in verdict_lines(c)]
    warning = unpaired_warning(c)
    if warning:
        lines += ["", f"> {md_text(warning)}"]
    pairs = legend_text(legend or {})
    if pairs:
        lines += ["", "Agent labels: " + "; ".join(f"**{md_text(s)}** = {md_text(f)}" for s, f in pairs) + "."]
    lines += ["", "Each verdict in a full sentence:", ""]
    for r in c.metrics.itertuples():
        m = metrics[r.metric]
        lines.append(f"- **{m.name}** ({_ARROW[m.better]} {m.direction}): {md_text(r.sentence)}")
    lines += [
        "",
        md_text(_paired_note(c)) + "\n",
        "### Values and order\n",
        table(_frame(_grid(c.values, c.agents), _value_text)),
        f"\n### Differences against {md_text(_whom(c))}\n",
        table(_frame(_grid(c.against_baseline(), _others(c)), _difference_text)),
        "",
    ]
    return "\n".join(lines)
