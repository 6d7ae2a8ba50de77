"""Groups whose agents never search: the search metrics are undefined for them, never 0.

A coding agent (SWE-agent) or a customer-service agent (tau-bench) calls tools that act (edit a
file, cancel a booking) and seldom or never one that retrieves. In a group of such traces, with
no search step at all and some ``other`` steps (the actions), there is no evidence to gather:
every decision point holds E = 0 by default, so CE, the overconfident rate and the ERF would read
as a fully overconfident agent that never recovers, and tool calls per trace as 0. Those numbers
describe a search behaviour the agent does not have; they are NaN here, each with one
:class:`UndefinedMetricWarning` naming the reason (the command line shows them as n/a). A group
without any step but reasoning and answers (a closed-book agent) keeps them: not searching is
then its decision, and CE measures it; so does a group where some trace searches.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning

#: The group entries that describe searching (the rest, RQI, accuracy, EM and F1, do not).
SEARCH_ENTRIES = {
    "ce": "CE",
    "overconfident": "overconfident rate",
    "overcautious": "overcautious rate",
    "overcautious_given_e2": "overcautious rate given E = 2",
    f"recovered_by_{8}": "ERF",
    "tool_calls": "tool calls per trace",
    "searches_before_answer": "searches before the answer",
}
_BY_EVIDENCE = {"answer_rate_by_evidence": "answer_rate", "accuracy_by_evidence": "accuracy"}


def acts_without_searching(stats: pd.DataFrame) -> bool:
    """Whether a group's traces (rows of the trace statistics) have no search step and some ``other`` step."""
    searches = np.nansum(stats["tool_calls"].to_numpy(dtype=float))
    return bool(searches == 0 and int(stats["other_steps"].sum()) > 0)


def blank_search_metrics(group: dict) -> None:
    """Set a group's search metrics to NaN (their intervals too), with one warning per metric."""
    nan = float("nan")
    why = "no search step: the tools these traces call act, they do not search"
    for key, name in SEARCH_ENTRIES.items():
        group[key] = nan
        if f"{key}_ci" in group:
            group[f"{key}_ci"] = [nan, nan]
        warnings.warn(f"{name} is undefined ({why}); returning NaN", UndefinedMetricWarning, stacklevel=2)
    group["n_reached_e2"] = 0
    for key, value in _BY_EVIDENCE.items():
        for row in group.get(key, {}).values():
            row[value] = nan
