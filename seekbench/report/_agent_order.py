"""One agent order for every table, figure and CSV of a report: the order of first appearance in the input.

The analysis keeps whatever order each computation produced (grouped summaries come out sorted by
name, the audit and the curves in file order). A report shows them in one order: the file order,
read from the audit table, which has one row per trace in input order. Only rows, columns and dict
keys are reordered; no number changes (the report renders only).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from ..analysis import Analysis


def file_order(analysis: Analysis) -> list[str]:
    """The agents as they first appear in the input (the audit table's rows follow the input)."""
    return list(dict.fromkeys(str(a) for a in analysis.audit.table["agent"]))


def _rank(order: Sequence[str]):
    pos = {a: i for i, a in enumerate(order)}
    return lambda v: pos.get(str(v), len(pos))  # an unknown key (an "all" row, ...) keeps its place at the end


def rows_in_order(
    df: pd.DataFrame | None, order: Sequence[str], column: str = "agent", *, within: str | None = None
) -> pd.DataFrame | None:
    """``df``'s rows stably sorted by ``order`` of ``column`` (the index when ``column`` is absent and the
    index holds agents); ``df`` unchanged when neither holds agents. With ``within`` (a column such as
    ``metric`` or ``rater``), the blocks of that column keep their order and the agents are ordered
    inside each block."""
    if df is None or not len(df):
        return df
    rank = _rank(order)
    if within is not None and within in df.columns and column in df.columns:
        block = {v: i for i, v in enumerate(dict.fromkeys(df[within]))}
        keys = df[within].map(block) * (len(order) + 1) + df[column].map(rank)
        return df.iloc[keys.argsort(kind="stable").to_numpy()]
    if column in df.columns:
        keys = df[column].map(rank)
        return df.iloc[keys.argsort(kind="stable").to_numpy()]
    if any(str(v) in order for v in df.index):
        keys = pd.Series([rank(v) for v in df.index])
        return df.iloc[keys.argsort(kind="stable").to_numpy()]
    return df


def columns_in_order(df: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """``df``'s agent columns in ``order`` (other columns first, as they were)."""
    agents = [c for c in df.columns if str(c) in order]
    if not agents:
        return df
    rank = _rank(order)
    return df[[c for c in df.columns if str(c) not in order] + sorted(agents, key=rank)]


def _dict_in_order(d: dict, order: Sequence[str]) -> dict:
    rank = _rank(order)
    return {k: d[k] for k in sorted(d, key=rank)}


def in_file_order(analysis: Analysis) -> Analysis:
    """A copy of ``analysis`` whose per-agent rows, columns and curves follow :func:`file_order`.

    Only when the report groups by agent alone (other groupings keep their own order).
    """
    order = file_order(analysis)
    p = analysis.process
    if tuple(p.by) != ("agent",):
        return analysis
    rank = _rank(order)
    summary = dataclasses.replace(p.summary, groups=sorted(p.summary.groups, key=lambda g: rank(g.get("agent"))))
    process = dataclasses.replace(
        p,
        summary=summary,
        metrics_table=rows_in_order(p.metrics_table, order),
        erf_fitters=_dict_in_order(p.erf_fitters, order),
        erf_km_fitters=_dict_in_order(p.erf_km_fitters, order),
        erf_table=rows_in_order(rows_in_order(p.erf_table, order, "group"), order),
        rqi_by_type=columns_in_order(p.rqi_by_type, order),
        rqi_by_type_n=columns_in_order(p.rqi_by_type_n, order),
        calibration=columns_in_order(p.calibration, order),
        prevalence=rows_in_order(p.prevalence, order),
    )
    changes: dict = {"process": process}
    if analysis.outcome is not None:
        o = analysis.outcome
        changes["outcome"] = dataclasses.replace(
            o,
            efficiency=rows_in_order(o.efficiency, order),
            correctness_sources=rows_in_order(o.correctness_sources, order),
            panel=rows_in_order(o.panel, order),
            evidence_set=rows_in_order(o.evidence_set, order),
        )
    ag = analysis.agreement
    sens = ag.result.sensitivity if ag is not None else None
    if ag is not None and sens is not None:
        table = rows_in_order(sens.table, order, within="rater")  # raters as they were, agents in order in each
        result = dataclasses.replace(ag.result, sensitivity=dataclasses.replace(sens, table=table))
        changes["agreement"] = dataclasses.replace(ag, result=result)
    if analysis.comparison is not None:
        c = analysis.comparison
        changes["comparison"] = dataclasses.replace(c, agents=tuple(sorted(c.agents, key=rank)))
    return dataclasses.replace(analysis, **changes)
