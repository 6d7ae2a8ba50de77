"""The per-trace statistics table: one row per trace, from which every summary metric is aggregated.

:func:`trace_statistics` reduces the step and trace tables to one row per trace with the
fixed numeric columns of :data:`TRACE_STATISTICS_COLUMNS`, by vectorised numpy/pandas
code (no Python loop per step or per trace). Each metric of a group of traces is then a
function of its rows only (:func:`~seekbench.metrics.summarize_statistics`): sums of
counts, means of per-trace values, and the recovery events. A row depends on its own
trace's steps only, so a corpus can be reduced in chunks of complete traces, in separate
processes or on a cluster, and the chunks' tables concatenated: the aggregate is the same
as from one table. The one cross-trace quantity, the global evidence prevalence of the
pooled CE, is a sum of the ``ce_n0..ce_n2`` columns.

The columns depend on the E options (``evidence_mapping``, ``evidence_scope``), on
``decision_points``, ``recovery`` and ``time``; the table records the options it was
made with in ``attrs["metric_options"]`` and aggregation checks them when present.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._ce import calibration_trace_columns
from ._decisions import steps_of
from ._evidence import OTHER, REASONING, SEARCH, evidence_unknown, step_kinds, trace_segments
from ._options import MetricOptions
from ._outcome import outcome_trace_columns
from ._recovery_events import check_unique_ids, recovery_events, require_columns
from ._rqi import REASONING_TYPES, rqi_trace_columns
from ._shared import shared_work

#: Trace-table columns carried as group keys (strings, or None where not recorded).
KEY_COLUMNS = ("trace_id", "agent", "dataset", "question_id", "correct_source")

#: Trace-table columns left out: free text and lists, which no metric aggregates.
_TEXT_COLUMNS = ("question", "gold_answers", "final_answer")

_RQI = (
    "g",
    "n",
    "unlabeled",
    *(f"{x}_{t}" for t in REASONING_TYPES for x in ("g", "n")),
    *(f"{x}_e{k}" for k in range(3) for x in ("g", "n")),
)
_CE = ("n0", "n1", "n2", "a0", "a1", "a2")

#: The statistic columns (after the key columns), with their dtype and meaning.
TRACE_STATISTICS_COLUMNS: dict[str, tuple[str, str]] = {
    "answered": ("bool", "the trace has an answer step"),
    "answer_pos": ("float64", "position of the answer step (NaN if none)"),
    "answer_turn": ("float64", "turn of the answer step (NaN if none)"),
    "last_turn": ("int64", "last turn of the trace (trace table)"),
    "n_steps": ("int64", "steps of the trace (trace table)"),
    "correct": ("float64", "1.0 correct, 0.0 wrong, NaN unknown"),
    "em": ("float64", "exact match (NaN when not scored)"),
    "f1": ("float64", "token F1 (NaN when not scored)"),
    "n_step_rows": ("int64", "rows of the trace in the step table"),
    "rqi_g": ("float64", "grounded reasoning steps (G = 1)"),
    "rqi_n": ("float64", "reasoning steps with a grounding label"),
    "rqi_unlabeled": ("float64", "reasoning steps without a grounding label"),
    **{
        f"rqi_{x}_{t}": ("float64", f"{'grounded' if x == 'g' else 'labeled'} reasoning steps of type {t}")
        for t in REASONING_TYPES
        for x in ("g", "n")
    },
    **{
        f"rqi_{x}_e{k}": ("float64", f"{'grounded' if x == 'g' else 'labeled'} reasoning steps taken while E = {k}")
        for k in range(3)
        for x in ("g", "n")
    },
    "reasoning_without_type": ("int64", "reasoning steps without a reasoning_type label"),
    "searches_without_type": ("int64", "search steps without a search_type label"),
    "other_steps": ("int64", "steps of kind other"),
    "n_obs": ("float64", "observations (search_result steps)"),
    "n_obs_unlabeled": ("float64", "observations whose E could not be computed"),
    **{f"ce_n{k}": ("float64", f"CE decision points held at E = {k}") for k in range(3)},
    **{f"ce_a{k}": ("float64", f"CE decision points answering at E = {k}") for k in range(3)},
    "e_answer": ("float64", "E at the answer turn (NaN if unanswered)"),
    "first_e2": ("float64", "first turn with E = 2 up to the answer (NaN if never)"),
    "erf_duration": ("int64", "recovery event time (turn, or step with time='step')"),
    "erf_event": ("int8", "recovery outcome: 1 recovered, 2 stopped (competing), 0 cut off (censored)"),
    "tool_calls": ("float64", "search steps"),
    "searches_before_answer": ("float64", "search steps before the answer step (NaN if unanswered)"),
    "duplicate_query": ("float64", "share of the trace's queries repeating an earlier one (NaN if none)"),
    "duplicate_visit": ("float64", "share of the trace's visits repeating an earlier one (NaN if none)"),
}

#: Recovery outcomes by their ``erf_event`` code.
EVENT_NAMES = np.array(["cut_off", "recovered", "stopped"], dtype=object)
_EVENT_CODES = {"cut_off": 0, "recovered": 1, "stopped": 2}

#: The options a statistics table depends on (the rest only enter the aggregation).
TABLE_OPTIONS = ("evidence_mapping", "evidence_scope", "decision_points", "recovery", "time")

_NEEDED_STEPS = ("trace_id", "kind", "turn", "pos", "grounding", "reasoning_type", "search_type", "clarity")
_NEEDED_TRACES = ("trace_id", "agent", "answered", "answer_pos", "answer_turn", "last_turn", "n_steps", "correct")


def trace_statistics(
    steps: pd.DataFrame, traces: pd.DataFrame, *, options: MetricOptions | None = None
) -> pd.DataFrame:
    """One row per trace of ``traces`` with the per-trace statistics every summary metric needs.

    Parameters
    ----------
    steps, traces : DataFrame
        The step and trace tables of :func:`seekbench.traces.build_tables`, or any chunk of
        complete traces of them (every step of each trace of ``traces`` in ``steps``; steps
        of other traces are ignored). Trace ids must be unique.
    options : MetricOptions, optional
        The E options, ``decision_points``, ``recovery`` and ``time`` shape the columns
        (:data:`TABLE_OPTIONS`); the others only enter the aggregation.

    Returns
    -------
    DataFrame
        In the order of ``traces``: the key columns :data:`KEY_COLUMNS` and any further
        trace-table column that is not free text (group keys, as they are), then the
        statistic columns of :data:`TRACE_STATISTICS_COLUMNS` with their dtypes.
        ``attrs["metric_options"]`` holds the options of :data:`TABLE_OPTIONS`.

    Notes
    -----
    Reduce a large corpus chunk by chunk of complete traces and ``pd.concat`` the tables;
    :func:`~seekbench.metrics.summarize_statistics` gives the same numbers as on one table.

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> obs = {"kind": "search_result", "labels": {"clarity": "Clear", "sufficiency": "Sufficient"}}
    >>> tr = [{"trace_id": "a", "agent": "x", "steps": [
    ...     {"index": 0, "kind": "reasoning", "labels": {"grounding": "Grounded"}},
    ...     {"index": 1, "kind": "search", "query": "q"}, dict(obs, index=2), {"index": 3, "kind": "answer"}]}]
    >>> stats = trace_statistics(*build_tables(tr))
    >>> stats[["rqi_g", "ce_n0", "ce_a2", "erf_duration", "erf_event"]].iloc[0].astype(int).tolist()  # recovered at 1
    [1, 1, 1, 1, 1]
    """
    opts = MetricOptions.resolve(options)
    require_columns(steps, _NEEDED_STEPS, "step")
    require_columns(traces, _NEEDED_TRACES, "trace")
    check_unique_ids(traces)
    ids = pd.Index(traces["trace_id"])
    # The statistic columns are gathered as arrays and the table made once at the end (inserting
    # some 40 columns one by one into a DataFrame, then casting each, cost more than computing them).
    cols: dict[str, np.ndarray] = {}
    with shared_work():
        sub = steps_of(steps, traces)
        cols.update(_trace_columns(traces))
        cols.update(_step_counts(sub, ids))
        rqi = rqi_trace_columns(sub, **opts.evidence).reindex(ids, fill_value=0.0)
        for c in _RQI:
            cols[f"rqi_{c}"] = rqi[c].to_numpy(dtype=float)
        cal = calibration_trace_columns(sub, traces, opts.decision_points, opts.evidence)
        for c in ("n_obs", "n_obs_unlabeled", "e_answer", "first_e2"):
            cols[c] = cal[c].to_numpy(dtype=float)
        for c in _CE:
            cols[f"ce_{c}"] = cal[c].to_numpy(dtype=float)
        events = recovery_events(sub, traces, recovery=opts.recovery, time=opts.time, **opts.evidence)
        cols["erf_duration"] = events["duration"].to_numpy(dtype=np.int64)
        cols["erf_event"] = events["event"].map(_EVENT_CODES).to_numpy(dtype=np.int8)
        outcome = outcome_trace_columns(sub, traces)
    cols["correct"] = outcome["correct"].to_numpy(dtype=float)
    for c in ("tool_calls", "searches_before_answer"):
        cols[c] = outcome[c].to_numpy(dtype=float)
    cols["duplicate_query"] = outcome["duplicate_query_norm"].to_numpy(dtype=float)
    cols["duplicate_visit"] = outcome["duplicate_visit_id"].to_numpy(dtype=float)
    stats = pd.DataFrame({c: np.asarray(cols[c], dtype=dtype) for c, (dtype, _) in TRACE_STATISTICS_COLUMNS.items()})
    out = pd.concat([_keys(traces), stats], axis=1)
    out.attrs["metric_options"] = {k: opts.as_dict()[k] for k in TABLE_OPTIONS}
    return out


def _keys(traces: pd.DataFrame) -> pd.DataFrame:
    """The key and other trace-table columns of the result (text and statistic columns left out, key
    columns not in ``traces`` added as None after the others), index 0..n-1."""
    keep = [c for c in KEY_COLUMNS if c in traces.columns]
    keep += [
        c for c in traces.columns if c not in keep and c not in _TEXT_COLUMNS and c not in TRACE_STATISTICS_COLUMNS
    ]
    out = traces[keep].reset_index(drop=True)
    for c in KEY_COLUMNS:
        if c not in out.columns:
            out[c] = None
    return out


def _trace_columns(traces: pd.DataFrame) -> dict[str, np.ndarray]:
    """The statistic columns taken from the trace table as they are (NaN where it lacks a scored column)."""
    out = {"answered": traces["answered"].astype(bool).to_numpy()}
    for c in ("answer_pos", "answer_turn", "em", "f1"):
        out[c] = traces[c].astype(float).to_numpy() if c in traces.columns else np.full(len(traces), np.nan)
    for c in ("last_turn", "n_steps"):
        out[c] = traces[c].to_numpy()
    return out


def _step_counts(steps: pd.DataFrame, ids: pd.Index) -> dict[str, np.ndarray]:
    """Per trace: its step rows, reasoning steps without a type, searches without a type, ``other`` steps."""
    seg = trace_segments(steps)
    if not seg.n:
        names = ("n_step_rows", "reasoning_without_type", "searches_without_type", "other_steps")
        return {name: np.zeros(len(ids), dtype=np.int64) for name in names}
    pos = pd.Index(seg.uniques).get_indexer(ids)
    has, at = pos >= 0, np.maximum(pos, 0)
    kind = step_kinds(steps)
    counts = {
        "n_step_rows": seg.count(),
        "reasoning_without_type": seg.count((kind == REASONING) & steps["reasoning_type"].isna().to_numpy()),
        "searches_without_type": seg.count((kind == SEARCH) & steps["search_type"].isna().to_numpy()),
        "other_steps": seg.count(kind == OTHER),
    }
    return {name: np.where(has, n[at], 0).astype(np.int64) for name, n in counts.items()}


def check_table_options(stats: pd.DataFrame, options: MetricOptions) -> None:
    """Raise when ``stats`` was made with other table options than ``options`` (when it says)."""
    made = stats.attrs.get("metric_options")
    if not made:
        return
    wanted = {k: options.as_dict()[k] for k in TABLE_OPTIONS}
    differ = [f"{k}={made.get(k)!r}" for k in TABLE_OPTIONS if made.get(k) != wanted[k]]
    if differ:
        raise UserInputError(
            f"the statistics table was made with {', '.join(differ)}; aggregate it with the same options "
            "or reduce the traces again with these"
        )
    missing = [c for c in TRACE_STATISTICS_COLUMNS if c not in stats.columns]
    if missing:
        raise UserInputError(f"not a trace statistics table: it lacks {', '.join(missing)}")


def rqi_part(stats: pd.DataFrame) -> pd.DataFrame:
    """The :func:`~seekbench.metrics._rqi.rqi_trace_columns` of the traces that have steps."""
    has = stats["n_step_rows"].to_numpy() > 0
    rows = stats if has.all() else stats[has]  # usually every trace has steps: no copy of the group
    part = pd.DataFrame({c: rows[f"rqi_{c}"].to_numpy() for c in _RQI}, index=pd.Index(rows["trace_id"]))
    return part


def calibration_part(stats: pd.DataFrame) -> pd.DataFrame:
    """The :func:`~seekbench.metrics._ce.calibration_trace_columns` of the traces."""
    cols = {c: stats[f"ce_{c}"].to_numpy() for c in _CE}
    for c in ("n_obs", "n_obs_unlabeled", "answered", "answer_turn", "correct", "e_answer", "first_e2"):
        cols[c] = stats[c].to_numpy()
    return pd.DataFrame(cols, index=pd.Index(stats["trace_id"]))


def outcome_part(stats: pd.DataFrame) -> pd.DataFrame:
    """The :func:`~seekbench.metrics._outcome.outcome_trace_columns` of the traces."""
    cols = {c: stats[c].to_numpy() for c in ("answered", "correct", "em", "f1", "tool_calls", "searches_before_answer")}
    cols["duplicate_query_norm"] = stats["duplicate_query"].to_numpy()
    cols["duplicate_visit_id"] = stats["duplicate_visit"].to_numpy()
    return pd.DataFrame(cols, index=pd.Index(stats["trace_id"]))


def events_part(stats: pd.DataFrame) -> pd.DataFrame:
    """The recovery events (``trace_id, agent, duration, event, evidence_unknown``) of the traces; a
    trace whose E is unknown (spec section 2) is flagged, and the ERF leaves it out."""
    return pd.DataFrame(
        {
            "trace_id": stats["trace_id"].to_numpy(),
            "agent": stats["agent"].to_numpy(),
            "duration": stats["erf_duration"].to_numpy(dtype=np.int64),
            "event": EVENT_NAMES[stats["erf_event"].to_numpy(dtype=np.int64)],
            "evidence_unknown": evidence_unknown(stats["n_obs"].to_numpy(), stats["n_obs_unlabeled"].to_numpy()),
        }
    )
