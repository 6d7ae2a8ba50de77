"""What the report's tables show, how a table becomes HTML, and the one number format it uses."""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

from ._glossary import header_cell

AUDIT_SHOWN = [
    "trace_id",
    "agent",
    "n_steps",
    "ungrounded_share",
    "evidence_at_answer",
    "recovery",
    "repeated_queries",
    "correct",
    "flags",
]

#: (column header, value key, CI key or None)
_DISPLAY = [
    ("traces", "n_traces", None),
    ("RQI", "rqi", "rqi_ci"),
    ("CE", "ce", "ce_ci"),
    ("overconfident", "overconfident", "overconfident_ci"),
    ("overcautious", "overcautious", "overcautious_ci"),
    ("ERF(8)", "recovered_by_8", "recovered_by_8_ci"),
    ("median recovery turn", "median_recovery_turn", None),
    ("accuracy", "accuracy", "accuracy_ci"),
    ("EM", "em", None),
    ("F1", "f1", None),
    ("tool calls", "tool_calls", None),
    ("duplicate-query rate", "duplicate_query_rate", None),
]


def display_table(groups: list[dict], by: tuple[str, ...]) -> pd.DataFrame:
    """The per-group table as people read it: point estimate with its 95% CI in one cell."""
    rows = []
    for g in groups:
        row = {b: "n/a (not recorded)" if g.get(b) is None else g.get(b) for b in by}
        for header, key, ci in _DISPLAY:
            v = g.get(key)
            if key == "median_recovery_turn" and fmt(v) == "n/a":
                # undefined curve (no trace with a labeled observation) is not a curve below 0.5
                row[header] = "not reached" if fmt(g.get("recovered_by_8")) != "n/a" else "n/a (no ERF)"
            elif ci and g.get(ci) and fmt(v) != "n/a" and fmt(g[ci]) != "n/a":
                row[header] = f"{fmt_value(v)} {fmt(g[ci])}"
            elif key in ("n_traces", "median_recovery_turn"):  # a count, a turn
                row[header] = fmt(v)
            else:
                row[header] = fmt_value(v)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *(h for h, _, _ in _DISPLAY)])


#: A formatted value followed by its interval: "0.241 [0.15, 0.32]" or "0.468 ± 0.004".
_WITH_CI = re.compile(r"^(\S+) (\[[^\]]*\]|± \S+)$")


def html_cell(text: str, *, left: bool = False) -> str:
    """One ``<td>``; a value with its CI stays on one line, the CI in smaller type."""
    m = _WITH_CI.match(text)
    if m and not left:
        return f"<td class='v'>{html.escape(m.group(1))} <span class='ci'>{html.escape(m.group(2))}</span></td>"
    return f"<td class='l'>{html.escape(text)}</td>" if left else f"<td>{html.escape(text)}</td>"


def html_table(df: pd.DataFrame, left: tuple[str, ...] = ()) -> str:
    """A table as HTML: readable headers with their definitions on hover, every number through :func:`fmt`.

    Columns in ``left`` are text (left-aligned, wrapped); the others are numbers. The wrapper
    scrolls sideways only if the table cannot fit, which the report's tests rule out at 1280 px.
    """
    head = "".join(header_cell(c, left=c in left) for c in df.columns)
    body = "".join(
        "<tr>" + "".join(html_cell(fmt(r[c]), left=c in left) for c in df.columns) + "</tr>" for _, r in df.iterrows()
    )
    return f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


#: The recovery events' internal names, as a reader of the report needs them.
_RECOVERY_WORDS = {
    "(stopped and cut_off censored)": "(traces that answered without recovering, and traces that ended with neither "
    "an answer nor recovery, count as censored)",
}


def recovery_test_text(name: str) -> str:
    """A test's name with the recovery events' internal names (stopped, cut_off) said in words."""
    for k, v in _RECOVERY_WORDS.items():
        name = name.replace(k, v)
    return name


def fmt_p(p) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def no_negative_zero(text: str) -> str:
    """A tiny negative rounded to zero ("-0.00") printed as "0.00": a zero is printed one way."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def fmt_value(value) -> str:
    """A metric's value (a rate, a mean): always 3 decimals, so 0 and 1 read "0.000" and "1.000" beside
    "0.236"; n/a when undefined; anything else as :func:`fmt`."""
    if isinstance(value, (float, np.floating)) and not math.isnan(value):
        return no_negative_zero(f"{float(value):.3f}")
    return fmt(value)


def undefined_reasons(warnings: list[str]) -> str:
    """Why numbers are n/a, from the metrics' notes: "n/a = undefined: RQI is undefined (...)", or the
    generic sentence when no note says more."""
    reasons = list(dict.fromkeys(w.replace("; returning NaN", "") for w in warnings))
    return "n/a = undefined: " + "; ".join(reasons) if reasons else "n/a = undefined (not enough labels), never zero"


def option_text(value) -> str:
    """An option value as users type it: ``agent, dataset`` for a list, ``none`` for unset (no Python repr)."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def fmt(value) -> str:
    """Numbers to 3 decimals (2 inside CIs), CIs as [lo, hi], undefined as n/a."""
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(v, (int, float)) or v is None for v in value):
            lo, hi = (None if v is None or math.isnan(v) else no_negative_zero(f"{v:.2f}") for v in value)
            return "n/a" if lo is None or hi is None else f"[{lo}, {hi}]"
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:g}" if value.is_integer() else no_negative_zero(f"{value:.3f}")
    if hasattr(value, "item"):
        return fmt(value.item())
    return str(value)
