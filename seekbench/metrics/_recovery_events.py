"""Recovery events (spec section 4): one competing-risks outcome per trace.

Each trace ends in exactly one of three ways, at an integer time (a turn, or a
step position with ``time="step"``):

- ``recovered`` at T_i, the first time the evidence state reaches E = 2, or the
  time of a correct answer, whichever comes first (``recovery="evidence_or_correct"``,
  the paper); with ``recovery="evidence"`` (the released code) answers never count
  as recovery;
- ``stopped`` at the answer's time: the trace answered without recovering. It can
  never recover afterwards, so this is a *competing event*, not censoring;
- ``cut_off`` at its last time: it ended without answering and without recovering.
  Its future is unknown, so this is right-censoring.

These rows are the input of :class:`~seekbench.metrics._erf.EvidenceRecoveryFitter`
and of :func:`~seekbench.metrics._logrank.compare_recovery`.
"""

from __future__ import annotations

from typing import Unpack

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._evidence import observation_evidence, trace_evidence_unknown, trace_segments, turn_grid
from ._options import (
    RECOVERY_OPTIONS,
    TIME_OPTIONS,
    EvidenceKeywords,
    Recovery,
    TimeScale,
    check_option,
    evidence_keywords,
)

#: The three outcomes, in the order the event codes 1, 2, 0 use them.
EVENT_KINDS = ("recovered", "stopped", "cut_off")

#: Columns of the frame :func:`recovery_events` returns (the first four are the contract).
EVENT_COLUMNS = [
    "trace_id",
    "agent",
    "duration",
    "event",
    "via",
    "answered",
    "correct",
    "correct_unknown",
    "unlabeled_obs",
    "evidence_unknown",
]

_STEP_COLUMNS = ("trace_id", "kind", "turn", "pos", "clarity", "sufficiency")
_TRACE_COLUMNS = ("trace_id", "agent", "answered", "answer_turn", "answer_pos", "last_turn", "n_steps", "correct")


def check_unique_ids(traces: pd.DataFrame) -> None:
    """Raise :class:`UserInputError` naming the first trace id that occurs twice in ``traces``."""
    dup = traces["trace_id"][traces["trace_id"].duplicated()]
    if len(dup):
        raise UserInputError(
            f"trace id {dup.iloc[0]!r} occurs more than once in the trace table; trace ids must be unique",
            trace_id=str(dup.iloc[0]),
        )


def require_columns(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise UserInputError(
            f"the {what} table lacks column(s) {', '.join(missing)}; "
            "build it with seekbench.traces._tables.build_tables"
        )


def _is_unknown(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _is_true(value: object) -> bool:
    """True only for a known-correct value (True, 1, np.True_); None, NA and NaN are unknown."""
    return not _is_unknown(value) and bool(value)


def correctness_flags(values) -> tuple[np.ndarray, np.ndarray]:
    """Per value of a ``correct`` column: known to be correct, and unknown (None, NA, NaN).

    Vectorised when the column holds booleans and missing values (as ``build_tables``
    makes it); any other content is judged value by value, with the same result.
    """
    v = np.asarray(values, dtype=object).reshape(-1)
    if pd.api.types.infer_dtype(v, skipna=True) in ("boolean", "empty"):
        unknown = pd.isna(v)
        true = np.zeros(len(v), dtype=bool)
        true[~unknown] = v[~unknown].astype(bool)
        return true, unknown
    return (np.array([_is_true(x) for x in v], dtype=bool), np.array([_is_unknown(x) for x in v], dtype=bool))


def _evidence_hits(steps: pd.DataFrame, *, time: str, mapping: str, scope: str) -> tuple[pd.Series, pd.Series]:
    """First time with E = 2 per trace, and the number of unlabeled observations per trace."""
    if time == "turn":
        grid = turn_grid(steps, mapping=mapping, scope=scope)  # type: ignore[arg-type]
        ids = pd.Index(grid.seg.uniques)
        first = grid.first_turn_at(2)
        hit = pd.Series(first, index=ids)[~np.isnan(first)]
        unlabeled = pd.Series(np.bincount(grid.cell_trace, weights=grid.unlabeled, minlength=grid.seg.n), index=ids)
        return hit, unlabeled
    # time == "step": E held at a step is the state after every observation at or before it.
    # Under both scopes it first equals 2 at the first observation whose own E is 2 (the
    # cumulative max reaches 2 there, and the latest labeled observation is that one).
    obs = steps.loc[steps["kind"] == "search_result", ["trace_id", "pos", "clarity", "sufficiency"]]
    e = observation_evidence(obs["clarity"], obs["sufficiency"], mapping=mapping)  # type: ignore[arg-type]
    hit = obs.loc[e == 2].groupby("trace_id", sort=False)["pos"].min()
    unlabeled = e.isna().groupby(obs["trace_id"], sort=False).sum()
    return hit, unlabeled


def recovery_events(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    recovery: Recovery = "evidence_or_correct",
    time: TimeScale = "turn",
    **evidence: Unpack[EvidenceKeywords],
) -> pd.DataFrame:
    """One competing-risks outcome (recovered, stopped or cut off) per trace.

    T_i = min(first t with E_{i,t} = 2, t of a correct answer) (spec section 4); a
    trace whose T_i is at or before its answer is ``recovered`` at T_i, one that
    answered first is ``stopped`` at its answer, one that neither answered nor
    recovered is ``cut_off`` (censored) at its last time.

    Parameters
    ----------
    steps, traces : DataFrame
        The step and trace tables of :func:`seekbench.traces._tables.build_tables`.
        One row is returned per row of ``traces`` (trace ids must be unique).
    recovery : {"evidence_or_correct", "evidence"}, default "evidence_or_correct"
        ``"evidence_or_correct"`` (the paper): a correct answer also counts as recovery.
        ``"evidence"`` (the released code): only E = 2 counts; every answer without it
        is a stop.
    time : {"turn", "step"}, default "turn"
        ``"turn"``: t counts tool calls (spec section 1), so an answer given before any
        search is at t = 0. ``"step"``: t is the step's 0-based position in the trace
        (the ``pos`` column); recovery by evidence happens at the observation step that
        brings E to 2.
    **evidence
        ``evidence_mapping`` ({"sum", "sufficiency_first"}, default "sum"): how an
        observation's clarity and sufficiency give E (spec section 2).
        ``evidence_scope`` ({"cumulative", "latest"}, default "cumulative"): E at a turn, the
        max over observations so far or the latest observation. The first time E = 2 is the
        same under both scopes, except with ``time="turn"`` when one turn holds several
        observations and a later one of them has E < 2.

    Returns
    -------
    DataFrame
        One row per trace, columns ``trace_id, agent, duration`` (int >= 0),
        ``event`` (``"recovered"``, ``"stopped"`` or ``"cut_off"``), ``via``
        (``"evidence"``, ``"correct_answer"`` or None), ``answered``, ``correct``
        (as in the trace table), ``correct_unknown`` (answered with unknown
        correctness), ``unlabeled_obs`` (observations whose E could not be
        computed) and ``evidence_unknown`` (the trace has observations and none is
        labeled: its E is unknown, spec section 2, and the ERF leaves it out; its
        ``event`` is what E = 0 throughout would give, kept for reference only).

    Notes
    -----
    An answer of unknown correctness (``correct`` None or NaN) is treated as not
    correct: under the default it stops the trace unless E = 2 came first. Such
    traces are flagged in ``correct_unknown`` and counted by the fitter's summary.
    An observation with missing labels keeps the previous evidence state (spec
    section 2) and is counted in ``unlabeled_obs``. Evidence that reaches 2 only
    after the answer is ignored: the answer closes the trace.

    Examples
    --------
    >>> from seekbench.traces._tables import build_tables
    >>> obs = {"kind": "search_result", "labels": {"clarity": "Clear", "sufficiency": "Sufficient"}}
    >>> tr = [{"trace_id": "a", "agent": "x", "steps": [
    ...     {"index": 0, "kind": "search", "query": "q"}, dict(obs, index=1),
    ...     {"index": 2, "kind": "answer"}]}]
    >>> steps, traces = build_tables(tr)
    >>> recovery_events(steps, traces)[["trace_id", "duration", "event"]].to_dict("records")
    [{'trace_id': 'a', 'duration': 1, 'event': 'recovered'}]
    """
    check_option("recovery", recovery, RECOVERY_OPTIONS)
    check_option("time", time, TIME_OPTIONS)
    ev = evidence_keywords("recovery_events", evidence)
    require_columns(steps, _STEP_COLUMNS, "step")
    require_columns(traces, _TRACE_COLUMNS, "trace")
    check_unique_ids(traces)

    hit, unlabeled = _evidence_hits(steps, time=time, mapping=ev["evidence_mapping"], scope=ev["evidence_scope"])
    tid = traces["trace_id"]
    hit_t = tid.map(hit).to_numpy(dtype=float)
    answered = traces["answered"].to_numpy(dtype=bool)
    if time == "turn":
        answer_t = traces["answer_turn"].to_numpy(dtype=float)
        end_t = traces["last_turn"].to_numpy(dtype=float)
    else:
        answer_t = traces["answer_pos"].to_numpy(dtype=float)
        end_t = np.maximum(traces["n_steps"].to_numpy(dtype=float) - 1, 0)
    correct = traces["correct"].to_numpy(dtype=object)
    known_correct, unknown_correct = correctness_flags(correct)
    unknown = answered & unknown_correct

    by_evidence = ~np.isnan(hit_t) & (~answered | (hit_t <= np.where(answered, answer_t, np.inf)))
    by_answer = ~by_evidence & answered & known_correct & (recovery == "evidence_or_correct")
    stopped = answered & ~by_evidence & ~by_answer
    duration = np.where(by_evidence, hit_t, np.where(answered, answer_t, end_t))
    event = np.where(by_evidence | by_answer, "recovered", np.where(stopped, "stopped", "cut_off"))
    # numpy's stubs take no None as a choice; at run time it makes the object array wanted here.
    via = np.where(by_evidence, "evidence", np.where(by_answer, "correct_answer", None))  # type: ignore[call-overload]

    out = pd.DataFrame(
        {
            "trace_id": tid.to_numpy(),
            "agent": traces["agent"].to_numpy(),
            "duration": duration.astype("int64"),
            "event": event.astype(object),
            "via": via.astype(object),
            "answered": answered,
            "correct": correct,
            "correct_unknown": unknown,
            "unlabeled_obs": tid.map(unlabeled).fillna(0).to_numpy(dtype="int64"),
            "evidence_unknown": _unknown(steps, tid, ev["evidence_mapping"]),
        },
        columns=EVENT_COLUMNS,
    )
    out.attrs["options"] = {"recovery": recovery, "time": time, **ev}
    return out


def _unknown(steps: pd.DataFrame, trace_ids: pd.Series, mapping: str) -> np.ndarray:
    """Per trace id: its E is unknown (observations, none labeled; spec section 2)."""
    seg = trace_segments(steps)
    if not seg.n:
        return np.zeros(len(trace_ids), dtype=bool)
    pos = pd.Index(seg.uniques).get_indexer(trace_ids)
    unknown = trace_evidence_unknown(steps, mapping)  # type: ignore[arg-type]
    return (pos >= 0) & unknown[np.maximum(pos, 0)]


def known_events(events: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``events`` whose E is known (all of them without an ``evidence_unknown`` column)."""
    if "evidence_unknown" not in events.columns:
        return events
    unknown = events["evidence_unknown"].to_numpy(dtype=bool)
    return events[~unknown] if unknown.any() else events


def check_events(events: pd.DataFrame, what: str = "events") -> None:
    """Raise :class:`UserInputError` unless ``events`` looks like a :func:`recovery_events` frame."""
    require_columns(events, ("duration", "event"), what)
    bad = ~events["event"].isin(EVENT_KINDS)
    if bad.any():
        raise UserInputError(
            f"{what}: unknown event {events['event'][bad].iloc[0]!r}; choose one of: {', '.join(EVENT_KINDS)}"
        )
    d = pd.to_numeric(events["duration"], errors="coerce")
    if d.isna().any() or (d < 0).any() or not np.isfinite(d.to_numpy(dtype=float)).all():
        raise UserInputError(f"{what}: durations must be finite numbers >= 0")
