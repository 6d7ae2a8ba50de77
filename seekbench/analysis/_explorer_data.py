"""What the trace explorer shows, as plain data (dicts, lists, numbers; no HTML).

For every trace: a compact index row (agent, correctness, evidence state at the answer, audit
flags and score, disagreement count) that the page filters and sorts without loading more,
and a detail record (every step with its turn, kind, E after it, documents and label chips
naming field and rater; judge-vs-reference disagreements with the judge's explanation when
its label carries one) that the page loads on demand.
"""

from __future__ import annotations

import inspect
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from .._errors import UndefinedMetricWarning
from ..agreement import AgreementResult, align_pair, compare_annotations, normalize_annotations
from ..labels import AnnotationSet
from ..metrics import (
    FLAG_DEFINITIONS,
    FLAGS,
    audit_flag_rates,
    evidence_unknown,
    observation_evidence,
    trace_audit,
)
from ..traces import LABEL_FIELDS
from ._explorer_agreement import _explanation, explorer_agreement
from ._explorer_traces import RECOVERIES, clean, step_turns_and_evidence, trace_details, trace_index

#: Where a label chip comes from: the labels the metrics used, the reference, or a judge.
ROLES = ("labels", "reference", "judge")
#: Audit options and their defaults, read from trace_audit's signature so they never drift apart.
AUDIT_OPTION_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(trace_audit).parameters.items()
    if p.kind is p.KEYWORD_ONLY and name not in ("evidence_mapping", "evidence_scope", "recovery")
}


def flag_definitions(audit_options: dict | None = None) -> dict[str, str]:
    """Each flag's definition with the threshold values in use, e.g. ``... below answer_evidence_below (1)``."""
    opts = {**AUDIT_OPTION_DEFAULTS, **(audit_options or {})}
    out = {}
    for f, text in FLAG_DEFINITIONS.items():
        for k, v in opts.items():
            text = text.replace(k, f"{k} ({v})", 1) if not (k == "recovery_horizon" and v is None) else text
        # users have no spec: say what recovery is and name the docs page that defines it
        out[f] = text.replace(
            "recovery (spec section 4)",
            "recovery (full evidence E = 2, or by default a correct answer; docs/metrics/erf.md)",
        )
    return out


@dataclass
class ExplorerData:
    """The explorer's content: ``meta`` and ``index`` (one entry per trace), and the details on demand.

    Attributes
    ----------
    meta : dict
        Agents, flags with definitions, raters, label source, audit options, recovery kinds,
        and with judges ``agreement``: the rows of the agreement result's summary (per rater,
        field and step kind, then pooled; rule-derived labels apart), each with its
        ``n_disagree`` and the index positions of the traces where that rater disagrees
        (:func:`~seekbench.analysis._explorer_agreement.explorer_agreement`).
    index : dict of lists
        Columns of equal length, trace order: ``id, agent`` (index into ``meta["agents"]``),
        ``q`` (question), ``correct`` (1, 0, -1 unknown), ``E`` (E at the answer; -1 when not
        answered), ``flags`` (bit i = ``meta["flags"][i]``), ``score``, ``steps``, ``turns``,
        ``rec`` (index into ``meta["recovery"]``) and ``dis`` (the trace's disagreements, every
        rater's, as its detail lists them).
    """

    meta: dict
    index: dict
    _build: Callable[[], Iterator[dict]] = field(repr=False, default=lambda: iter(()))

    def __len__(self) -> int:
        return len(self.index["id"])

    def details(self) -> Iterator[dict]:
        """Each trace's detail record, in index order (built as it is read)."""
        return self._build()


def _single_raters(sets: Sequence[AnnotationSet]) -> list[AnnotationSet]:
    out: list[AnnotationSet] = []
    for s in sets:
        s = normalize_annotations(s)
        out.extend(s.for_rater(r) for r in s.raters)
    return out


def _metric_label_chips(steps: pd.DataFrame, trace_dicts: Sequence[dict], labels: AnnotationSet | None) -> dict:
    """(trace_id, step) -> chips of the labels the metrics used: the step table's label columns.

    The rater is the annotation set's (``--labels``), else each trace's ``inline_labels.rater``
    (``inline:traces`` when it names none, as :meth:`AnnotationSet.from_traces` does).
    """
    cols = [c for c in LABEL_FIELDS if c in steps.columns]
    if labels is not None:
        names = labels.raters
        fixed = str(names[0]) if len(names) == 1 else labels.name
        rater_of = None
    else:
        fixed = None
        rater_of = {
            str(t["trace_id"]): (t.get("inline_labels") or {}).get("rater") or "inline:traces" for t in trace_dicts
        }
    chips: dict = defaultdict(list)
    tids = steps["trace_id"].astype(str).tolist()
    idx = steps["step"].tolist()
    values = {c: steps[c].tolist() for c in cols}
    for k, (tid, step) in enumerate(zip(tids, idx, strict=True)):
        for c in cols:
            v = values[c][k]
            if v is not None and v == v:  # not None, not NaN
                rater = fixed or (rater_of or {}).get(tid, "inline:traces")
                chips[(tid, int(step))].append([c, str(v), rater, "labels"])
    return chips


def _chips(chips: dict, sets: list[tuple[str, AnnotationSet]]) -> dict:
    """Add the chips of ``sets`` (role, single-rater set) to ``chips``; each (field, value, rater) once per step."""
    seen = {(key, c[0], c[1], c[2]) for key, cs in chips.items() for c in cs}
    for role, s in sets:
        r = s.records
        r = r[r["value"].notna()]
        for tid, step, fld, value, rater in zip(
            r["trace_id"].astype(str).tolist(),
            r["step"].tolist(),
            r["field"].tolist(),
            r["value"].tolist(),
            r["rater"].tolist(),
            strict=True,
        ):
            key = (tid, int(step))
            mark = (key, fld, str(value), str(rater))
            if mark in seen:
                continue
            seen.add(mark)
            chips[key].append([fld, str(value), str(rater), role])
    return chips


def _disagreements(reference: AnnotationSet, judges: list[AnnotationSet]) -> tuple[dict, list[dict]]:
    """(trace_id -> [disagreement dicts]) and per (judge, field) counts of compared and disagreeing labels.

    Not the explorer's (it shows :func:`compare_annotations`'s, per step kind and with the rule-derived
    labels apart: :func:`explorer_agreement`); kept for :func:`disagreement_examples`.
    """
    by_trace: dict = defaultdict(list)
    summary = []
    fields = list(dict.fromkeys(reference.records["field"]))
    for judge in judges:
        recs = judge.records
        prov = {
            (str(t), int(s), f): (p, u)
            for t, s, f, p, u in zip(
                recs["trace_id"], recs["step"], recs["field"], recs["provenance"], recs["unscored_reason"], strict=True
            )
        }
        for fld in fields:
            a = align_pair(reference, judge, fld)
            compared = a[a["status"] == "compared"]
            dis = compared[compared["reference"] != compared["rater"]]
            summary.append(
                {"rater": judge.name, "field": fld, "compared": int(len(compared)), "disagree": int(len(dis))}
            )
            for tid, step, ref, val in zip(
                dis["trace_id"].astype(str), dis["step"], dis["reference"], dis["rater"], strict=True
            ):
                p, u = prov.get((tid, int(step), fld), (None, None))
                by_trace[tid].append(
                    {
                        "step": int(step),
                        "field": fld,
                        "reference": str(ref),
                        "judge": str(val),
                        "rater": judge.name,
                        "explanation": _explanation(p, u),
                    }
                )
    for items in by_trace.values():
        items.sort(key=lambda d: (d["step"], d["field"], d["rater"]))
    return by_trace, summary


#: Why a trace counts in ``e_unknown`` (the metrics' own wording, metrics.md section 2).
E_UNKNOWN_REASON = "E unknown: no labeled observation (the trace has observations, none with evidence labels)"


def _evidence_unknown_ids(steps: pd.DataFrame, mapping: Literal["sum", "sufficiency_first"]) -> set[str]:
    """The traces whose E is unknown: observations, none labeled (left out of every E-based number)."""
    obs = steps[steps["kind"] == "search_result"]
    if not len(obs):
        return set()
    e = observation_evidence(obs["clarity"], obs["sufficiency"], mapping=mapping)
    per = pd.DataFrame({"t": obs["trace_id"].astype(str), "u": e.isna()}).groupby("t", sort=False)["u"]
    n_obs, n_unl = per.size(), per.sum()
    return set(n_obs.index[evidence_unknown(n_obs.to_numpy(), n_unl.reindex(n_obs.index).to_numpy())])


def _agent_rates(
    audit: pd.DataFrame, agents: list[str], unknown: set[str] | frozenset[str] = frozenset()
) -> list[dict]:
    """Per agent (in ``agents`` order): traces, share correct, share flagged and of each flag, mean score,
    and ``e_unknown``, the number of its traces whose E is unknown (reason in ``meta["e_unknown_reason"]``)."""
    rates = audit_flag_rates(audit.assign(agent=audit["agent"].astype(str))).set_index("agent")
    correct = (
        audit.assign(agent=audit["agent"].astype(str))
        .groupby("agent")["correct"]
        .agg(lambda c: float(pd.to_numeric(c, errors="coerce").mean()))
    )
    ids = audit.assign(agent=audit["agent"].astype(str)).groupby("agent")["trace_id"].agg(lambda t: set(map(str, t)))
    return [
        {
            "agent": a,
            "n": int(rates.loc[a, "n_traces"]),
            "correct": clean(correct.get(a)),
            "flagged": float(rates.loc[a, "flagged"]),
            "mean_score": float(rates.loc[a, "mean_score"]),
            "flags": [float(rates.loc[a, f]) for f in FLAGS],
            "e_unknown": int(sum(1 for t in ids.get(a, ()) if t in unknown)),
        }
        for a in agents
    ]


def _agreement(
    reference: AnnotationSet,
    raters: Sequence[AnnotationSet],
    agreement: AgreementResult | None,
    trace_dicts: Sequence[dict],
    ref: list[AnnotationSet],
) -> AgreementResult:
    """The agreement of the raters with the reference: ``agreement`` when given (it must compare that
    reference, ``ref[0]``), else :func:`~seekbench.agreement.compare_annotations` with its defaults."""
    if agreement is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # the rows carry their notes
            agreement = compare_annotations(reference, *raters, traces=list(trace_dicts))
    if agreement.reference != ref[0].name:
        raise ValueError(f"agreement compares {agreement.reference!r}, not the reference {ref[0].name!r}")
    return agreement


def explorer_data(
    trace_dicts: Sequence[dict],
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    labels: AnnotationSet | None = None,
    label_source: str = "inline labels",
    reference: AnnotationSet | None = None,
    raters: Sequence[AnnotationSet] = (),
    agreement: AgreementResult | None = None,
    audit: pd.DataFrame | None = None,
    evidence_mapping: Literal["sum", "sufficiency_first"] = "sum",
    evidence_scope: Literal["cumulative", "latest"] = "cumulative",
    recovery: Literal["evidence_or_correct", "evidence"] = "evidence_or_correct",
    audit_options: dict | None = None,
) -> ExplorerData:
    """Compute what the explorer shows for every trace.

    Parameters
    ----------
    trace_dicts : sequence of dict
        The canonical traces (step text and documents come from here).
    steps, traces : DataFrame
        The tables of :func:`seekbench.traces.build_tables` with the labels the metrics use.
    labels : AnnotationSet, optional
        Those labels as a set (for the chips' rater names); default the traces' inline labels.
    reference, raters : AnnotationSet, optional
        With both: the agreement table (per rater, field and step kind, the judges' rule-derived
        labels apart as the rater ``rule-derived``) and, per trace, every label a rater gives
        differently from the reference, side by side.
    agreement : AgreementResult, optional
        :func:`seekbench.agreement.compare_annotations` of ``reference`` and ``raters`` (the
        report passes its own, so the explorer shows the report's numbers); computed here with
        its defaults, those of ``seekbench agree``, when None.
    audit : DataFrame, optional
        :func:`seekbench.metrics.trace_audit` of the tables; computed with ``audit_options`` if None.

    Returns
    -------
    ExplorerData
        ``meta`` and ``index`` at once; ``details()`` builds each trace's record as it is read.

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> from seekbench.traces import build_tables, read_traces
    >>> traces = read_traces(sample_traces_path()).traces
    >>> data = explorer_data(traces, *build_tables(traces))
    >>> len(data), data.meta["flags"][0]
    (48, 'ungrounded')
    >>> step = next(data.details())["steps"][1]
    >>> step["kind"], step["turn"], step["E"], sorted((c[0], c[2]) for c in step["chips"])
    ('search', 1, 0, [('grounding', 'sample-annotator'), ('search_type', 'sample-annotator')])
    """
    audit_options = dict(audit_options or {})
    ev: dict[str, Any] = {"evidence_mapping": evidence_mapping, "evidence_scope": evidence_scope}
    if audit is None:
        audit = trace_audit(steps, traces, **ev, recovery=recovery, **audit_options)
    order = [str(t["trace_id"]) for t in trace_dicts]
    label_sets: list[tuple[str, AnnotationSet]] = []
    by_trace_dis: dict = {}
    agree_meta: dict | None = None
    judges: list[AnnotationSet] = []
    if reference is not None and raters:
        ref = _single_raters([reference])
        judges = _single_raters(raters)
        label_sets = [("reference", s) for s in ref] + [("judge", s) for s in judges]
        agreement = _agreement(reference, raters, agreement, trace_dicts, ref)
        agree_meta, by_trace_dis = explorer_agreement(agreement, judges, order)
    chips = _chips(_metric_label_chips(steps, trace_dicts, labels), label_sets)
    step_info = step_turns_and_evidence(steps, evidence_mapping, evidence_scope)
    agents = list(dict.fromkeys(str(a) for a in audit["agent"]))
    rows = {str(r["trace_id"]): r for r in audit.to_dict("records")}
    last_turn = traces.set_index(traces["trace_id"].astype(str))["last_turn"]
    index = trace_index(trace_dicts, rows, agents, last_turn, by_trace_dis)

    def build() -> Iterator[dict]:
        return trace_details(trace_dicts, rows, step_info, chips, by_trace_dis)

    rater_names = sorted({c[2] for cs in chips.values() for c in cs})
    meta = {
        "n_traces": len(order),
        "agents": agents,
        "flags": list(FLAGS),
        "flag_definitions": flag_definitions(audit_options),
        "audit_options": {k: clean(v) for k, v in {**AUDIT_OPTION_DEFAULTS, **audit_options}.items()},
        "recovery": list(RECOVERIES),
        "fields": list(agreement.fields) if agreement is not None and judges else [],
        "label_source": label_source,
        "raters": list(dict.fromkeys(rater_names)),
        "reference": label_sets[0][1].name if judges else None,
        "judges": [j.name for j in judges],
        "agreement": agree_meta,
        "evidence": ev,
        "recovery_option": recovery,
        "agent_rates": _agent_rates(audit, agents, _evidence_unknown_ids(steps, evidence_mapping)),
        "e_unknown_reason": E_UNKNOWN_REASON,
    }
    return ExplorerData(meta=meta, index=index, _build=build)
