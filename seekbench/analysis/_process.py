"""Per-group process metrics, ERF fits and their comparison, the CE decision tables (spec sections 4-6)."""

from __future__ import annotations

from concurrent.futures import Executor

import pandas as pd

from .._renamed import renamed_options
from ..metrics import EvidenceRecoveryFitter, compare_recovery, decision_point_table
from ._result import ProcessAnalysis
from ._statistics import analysis_statistics, summary_of

#: Reasoning types of the RQI table, in row order.
REASONING_TYPES = ["InformationSynthesis", "PlanFormation", "StateAssessment"]


def group_keys(traces: pd.DataFrame, by: tuple[str, ...]) -> pd.Series:
    """Each trace's group as one string, the ``by`` values joined by ``" / "``."""
    if not len(traces):
        return pd.Series(dtype=object)
    return traces.apply(lambda r: " / ".join(str(r[b]) for b in by), axis=1)


def analyze_process(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    by: tuple[str, ...] = ("agent",),
    statistics: pd.DataFrame | None = None,
    executor: Executor | None = None,
    **options,
) -> ProcessAnalysis:
    """Metrics per group with CIs, ERF and 1 - KM fits per group, log-rank test, RQI by type, calibration.

    ``options`` are :func:`seekbench.metrics.summarize`'s. ``statistics``: the per-trace statistics
    table of ``traces`` (:func:`seekbench.metrics.trace_statistics`, rows in the order of ``traces``)
    when already made; default reduced here. ``executor``: worker processes computing the groups'
    metrics side by side (:func:`seekbench.metrics.summarize_statistics`; the same numbers).
    """
    options = renamed_options("analyze_process", options)
    stats = analysis_statistics(steps, traces, statistics, options)
    summary = summary_of(stats, traces, by=by, executor=executor, **options)
    groups = summary.groups
    ev_opts = {k: options[k] for k in ("evidence_mapping", "evidence_scope") if k in options}
    erf_opts: dict = {**ev_opts, **{k: options[k] for k in ("recovery", "time") if k in options}}
    keys = group_keys(traces, by)
    fitters: dict = {}
    km_fitters: dict = {}
    events: dict = {}
    order: dict = dict.fromkeys(keys)
    for key in order:
        ids = traces.loc[keys == key, "trace_id"]
        s, t = steps[steps["trace_id"].isin(ids)], traces[traces["trace_id"].isin(ids)]
        fitters[key] = EvidenceRecoveryFitter(method=options.get("erf_method", "aalen_johansen"), **erf_opts).fit(
            s, t, label=key
        )
        km_fitters[key] = EvidenceRecoveryFitter(method="km", **erf_opts).fit(s, t, label=key)
        events[key] = fitters[key].events_
    recovery_test = compare_recovery(events) if len(events) >= 2 else None
    erf_rows = []
    for key, f in fitters.items():
        c = f.curve_.reset_index().rename(columns={"index": "time"})
        c.insert(0, "group", key)
        c["raw"] = f.raw_curve_.reindex(f.curve_.index).to_numpy()
        c["km"] = km_fitters[key].curve_["erf"].reindex(f.curve_.index).to_numpy()
        erf_rows.append(c)
    erf_table = pd.concat(erf_rows, ignore_index=True) if erf_rows else pd.DataFrame()

    group_names = [" / ".join(str(g[b]) for b in by) for g in groups]
    rqi_types = {name: g.get("rqi_by_type") or {} for name, g in zip(group_names, groups, strict=True)}
    rqi_by_type = pd.DataFrame(
        {n: [_v(d.get(t), "rqi") for t in REASONING_TYPES] for n, d in rqi_types.items()}, index=REASONING_TYPES
    )
    rqi_by_type_n = pd.DataFrame(
        {n: [_v(d.get(t), "n") or 0 for t in REASONING_TYPES] for n, d in rqi_types.items()}, index=REASONING_TYPES
    )

    points = decision_point_table(steps, traces, decision_points=options.get("decision_points", "turn"), **ev_opts)
    points = points.merge(pd.DataFrame({"trace_id": traces["trace_id"], "group": keys}), on="trace_id")
    calibration = points.groupby(["E", "group"])["A"].mean().unstack("group").reindex(range(3))
    calibration = calibration.reindex(columns=list(fitters))
    prevalence = (
        points.groupby("group")["E"]
        .value_counts(normalize=True)
        .unstack("E")
        .reindex(index=list(fitters), columns=range(3))
        .fillna(0.0)
    )

    unusable: dict = {}
    for g in groups:
        for k, v in (g.get("unlabeled") or {}).items():
            if isinstance(v, (int, float)):
                unusable[k] = unusable.get(k, 0) + int(v)
    return ProcessAnalysis(
        summary=summary,
        by=by,
        metrics_table=summary.to_frame(),
        erf_fitters=fitters,
        erf_km_fitters=km_fitters,
        erf_table=erf_table,
        recovery_test=recovery_test,
        rqi_by_type=rqi_by_type,
        rqi_by_type_n=rqi_by_type_n,
        calibration=calibration,
        prevalence=prevalence,
        unusable=unusable,
    )


def _v(entry, key):
    if entry is None:
        return None if key == "n" else float("nan")
    if isinstance(entry, dict):
        val = entry.get(key)
        return float("nan") if val is None and key != "n" else val
    return entry if key != "n" else None
