"""What the report shows, computed once from the step and trace tables (no plotting here)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

import pandas as pd

from .._version import __version__
from ..metrics import (EvidenceRecoveryFitter, compare_recovery, decision_point_table, summarize, trace_audit)


@dataclass
class ReportContent:
    """Every table the report renders, plus the fitted ERF curves per group."""

    summary: object
    by: tuple[str, ...]
    metrics_table: pd.DataFrame
    erf_fitters: dict
    erf_km_fitters: dict
    erf_table: pd.DataFrame
    recovery_test: object | None
    rqi_by_type: pd.DataFrame
    rqi_by_type_n: pd.DataFrame
    calibration: pd.DataFrame
    prevalence: pd.DataFrame
    audit: pd.DataFrame
    unusable: dict
    inputs: dict
    options: dict
    audit_options: dict = field(default_factory=dict)
    generated: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    version: str = __version__


def _group_key(row: pd.Series, by: tuple[str, ...]) -> str:
    return " / ".join(str(row[b]) for b in by)


def build_content(steps: pd.DataFrame, traces: pd.DataFrame, *, by: tuple[str, ...] = ("agent",),
                  inputs: dict | None = None, audit_options: dict | None = None, **options) -> ReportContent:
    """Compute everything the report shows; ``options`` are :func:`seekbench.metrics.summarize`'s.

    ``audit_options`` are the flag thresholds of :func:`seekbench.metrics.trace_audit`.
    """
    summary = summarize(steps, traces, by=by, **options)
    groups = summary.groups
    metrics_table = summary.to_frame()
    ev_opts = {k: options[k] for k in ("evidence_mapping", "evidence_scope") if k in options}
    erf_opts = {**ev_opts, **{k: options[k] for k in ("recovery", "time") if k in options}}
    keys = traces.apply(lambda r: _group_key(r, by), axis=1) if len(traces) else pd.Series(dtype=object)
    fitters, km_fitters, events = {}, {}, {}
    for key in dict.fromkeys(keys):
        ids = traces.loc[keys == key, "trace_id"]
        s, t = steps[steps["trace_id"].isin(ids)], traces[traces["trace_id"].isin(ids)]
        fitters[key] = EvidenceRecoveryFitter(method=options.get("erf_method", "aalen_johansen"), **erf_opts).fit(
            s, t, label=key)
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

    group_names = [_group_key(pd.Series(g), by) for g in groups]
    rqi_types = {name: g.get("rqi_by_type") or {} for name, g in zip(group_names, groups)}
    types = ["InformationSynthesis", "PlanFormation", "StateAssessment"]
    rqi_by_type = pd.DataFrame({n: [(_v(d.get(t), "rqi")) for t in types] for n, d in rqi_types.items()},
                               index=types)
    rqi_by_type_n = pd.DataFrame({n: [(_v(d.get(t), "n") or 0) for t in types] for n, d in rqi_types.items()},
                                 index=types)

    points = decision_point_table(steps, traces, decision_points=options.get("decision_points", "turn"), **ev_opts)
    points = points.merge(pd.DataFrame({"trace_id": traces["trace_id"], "group": keys}), on="trace_id")
    calibration = points.groupby(["E", "group"])["A"].mean().unstack("group").reindex(range(3))
    calibration = calibration.reindex(columns=list(fitters))
    prevalence = points.groupby("group")["E"].value_counts(normalize=True).unstack("E").reindex(
        index=list(fitters), columns=range(3)).fillna(0.0)

    audit = trace_audit(steps, traces, **ev_opts, recovery=options.get("recovery", "evidence_or_correct"),
                        **(audit_options or {}))
    unusable: dict = {}
    for g in groups:
        for k, v in (g.get("unlabeled") or {}).items():
            if isinstance(v, (int, float)):
                unusable[k] = unusable.get(k, 0) + int(v)
    return ReportContent(summary=summary, by=by, metrics_table=metrics_table, erf_fitters=fitters,
                         erf_km_fitters=km_fitters, erf_table=erf_table, recovery_test=recovery_test,
                         rqi_by_type=rqi_by_type, rqi_by_type_n=rqi_by_type_n, calibration=calibration,
                         prevalence=prevalence, audit=audit, unusable=unusable, inputs=inputs or {},
                         options=summary.options, audit_options=dict(audit_options or {}))


def _v(entry, key):
    if entry is None:
        return None if key == "n" else float("nan")
    if isinstance(entry, dict):
        val = entry.get(key)
        return float("nan") if val is None and key != "n" else val
    return entry if key != "n" else None
