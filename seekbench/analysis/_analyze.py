"""``analyze``: compute everything a report shows, once, into one :class:`Analysis`."""

from __future__ import annotations

import datetime as _dt
import warnings
from collections.abc import Sequence
from concurrent.futures import Executor

import pandas as pd

from .._errors import UndefinedMetricWarning
from .._renamed import renamed_options
from .._version import __version__
from ..env.conformal import evaluate_conformal
from ..labels import AnnotationSet
from ._agreement import analyze_agreement
from ._audit import analyze_audit
from ._comparison import compare_agents
from ._completeness import analyze_completeness
from ._episode_conformal import agent_self_conformal
from ._explorer_data import explorer_data
from ._judge_records import judge_records
from ._outcome import analyze_outcome
from ._process import analyze_process
from ._result import Analysis, Provenance
from ._statistics import analysis_statistics, summary_of

_EVIDENCE = ("evidence_mapping", "evidence_scope")


def analyze(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    trace_dicts: Sequence[dict],
    by: tuple[str, ...] = ("agent",),
    inputs: dict | None = None,
    audit_options: dict | None = None,
    worst_n: int = 5,
    reference: AnnotationSet | None = None,
    raters: Sequence[AnnotationSet] = (),
    tiebreaker: str | None = None,
    estimates: pd.DataFrame | None = None,
    alpha: float = 0.1,
    explorer: bool = True,
    labels: AnnotationSet | None = None,
    label_source: str = "inline labels",
    baseline: str | None = None,
    statistics: pd.DataFrame | None = None,
    executor: Executor | None = None,
    **options,
) -> Analysis:
    """Compute the process audit of a set of traces: everything the report renders.

    Parameters
    ----------
    steps, traces : DataFrame
        The tables of :func:`seekbench.traces.build_tables` (labels attached).
    trace_dicts : sequence of dict
        The canonical traces (answer-judge votes, evidence sets, episodes, step text).
    by : tuple of str, default ("agent",)
        Grouping of the process metrics.
    inputs : dict, optional
        Description of the inputs, kept in the provenance.
    audit_options : dict, optional
        Flag thresholds of :func:`seekbench.metrics.trace_audit`; ``worst_n`` worst traces per agent are kept.
    reference, raters : AnnotationSet, optional
        With raters: judge agreement with the reference (:func:`seekbench.agreement.compare_annotations`,
        ``tiebreaker`` breaks majority-panel ties); the explorer lists their disagreements.
    estimates : DataFrame, optional
        Completeness estimates of synthetic belief states (:func:`seekbench.env.conformal.read_estimates`):
        adds split-conformal coverage at level ``alpha``. Each seeking agent's q_hat and coverage beside
        its completeness come from its own per-step self-estimates, calibrated at the same ``alpha``.
    explorer : bool, default True
        Also compute the trace explorer's data; ``labels`` and ``label_source`` name the labels' raters.
    baseline : str, optional
        The agent the comparison's pairwise table compares with (default: the first agent);
        an unknown name raises :class:`~seekbench._errors.UserInputError` listing the agents.
    statistics : DataFrame, optional
        The per-trace statistics table of ``traces`` (:func:`seekbench.metrics.trace_statistics`, or
        :func:`seekbench.scale.reduce_traces` on many cores), one row per trace in the order of
        ``traces``, made with the same metric options. Default: reduced here from the tables. Either
        way the reduction is made once: every per-group summary of the analysis (the process metrics,
        the comparison's per-agent values, the seeking episodes') is aggregated from this one table.
    executor : concurrent.futures.Executor, optional
        Worker processes computing the process metrics' groups side by side (a ``ProcessPoolExecutor``,
        e.g. :func:`seekbench.scale.local_workers`); default this process. The same numbers either way.
    **options
        Metric options of :func:`seekbench.metrics.summarize` (``n_boot``, ``seed``, ``evidence_mapping``, ...).

    Returns
    -------
    Analysis
        Frozen; completeness is None without seeking-environment episodes, conformal without
        ``estimates``, agreement without ``raters``, explorer without ``explorer``.

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> from seekbench.traces import build_tables, read_traces
    >>> traces = read_traces(sample_traces_path()).traces
    >>> a = analyze(*build_tables(traces), trace_dicts=traces, n_boot=20)
    >>> a.n_traces, sorted(a.process.erf_fitters)
    (48, ['careful-planner', 'eager-answerer', 'looper', 'synthesizer'])
    >>> a.provenance.analysis_version, a.completeness is None, a.agreement is None
    ('1', True, True)
    """
    options = renamed_options("analyze", options)
    generated = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    agreement = None
    if raters:
        if reference is None:
            raise ValueError("raters need a reference annotation set to be compared with")
        agreement = analyze_agreement(reference, raters, traces=list(trace_dicts), tiebreaker=tiebreaker, **options)
    conformal = None
    if estimates is not None:
        conformal = evaluate_conformal(estimates, alpha=alpha, **{k: options[k] for k in ("seed",) if k in options})
    stats = analysis_statistics(steps, traces, statistics, options)
    process = analyze_process(steps, traces, by=by, statistics=stats, executor=executor, **options)
    comparison = _comparison(steps, traces, stats, process.summary, by=by, baseline=baseline, options=options)
    ev_opts = {k: options[k] for k in _EVIDENCE if k in options}
    audit = analyze_audit(
        steps,
        traces,
        audit_options=audit_options,
        worst_n=worst_n,
        **ev_opts,
        recovery=options.get("recovery", "evidence_or_correct"),
    )
    outcome = analyze_outcome(steps, traces, trace_dicts)
    completeness = _completeness(
        steps,
        traces,
        trace_dicts,
        stats,
        process=process.summary if by == ("agent",) else None,
        conformal=conformal,
        alpha=alpha,
        options=options,
    )
    data = None
    if explorer:
        ev = {k: options[k] for k in (*_EVIDENCE, "recovery") if k in options}
        data = explorer_data(
            trace_dicts,
            steps,
            traces,
            audit=audit.table,
            audit_options=audit_options,
            labels=labels,
            label_source=label_source,
            reference=reference,
            raters=raters,
            agreement=None if agreement is None else agreement.result,
            **ev,
        )
    inputs = {**(inputs or {}), "labeled_steps": labeled_steps_line(steps)}
    provenance = Provenance(
        seekbench_version=__version__,
        generated=generated,
        options=process.summary.options,
        audit_options=dict(audit_options or {}),
        inputs=dict(inputs or {}),
    )
    return Analysis(
        provenance=provenance,
        n_traces=len(audit.table),
        n_steps=len(steps),
        process=process,
        audit=audit,
        outcome=outcome,
        completeness=completeness,
        conformal=conformal,
        agreement=agreement,
        explorer=data,
        comparison=comparison,
        judge_records=judge_records([*([labels] if labels is not None else []), *raters]),
    )


def _completeness(steps, traces, trace_dicts, stats, *, process, conformal, alpha, options):
    """The seeking episodes' completeness (None without episodes), with each seeking agent's own
    completeness estimates calibrated at ``alpha``; agents that never estimated fall back to a
    synthetic-state estimator named like them
    (:meth:`~seekbench.env.conformal.ConformalResult.for_agents`), when ``conformal`` (from estimates) is given."""
    per_agent = agent_self_conformal(trace_dicts, alpha=alpha, seed=options.get("seed", 0))
    if per_agent.empty:
        per_agent = conformal.for_agents(sorted(traces["agent"].unique())) if conformal is not None else None
    return analyze_completeness(
        steps,
        traces,
        list(trace_dicts),
        process=process,
        conformal=per_agent,
        metric_options={k: v for k, v in options.items() if k != "n_boot"},
        statistics=stats,
    )


def _comparison(steps, traces, stats, summary, *, by, baseline, options):
    """The agents compared (:func:`compare_agents`) on the per-agent summary; one more summary without
    CIs, from the same statistics table, when the metrics are grouped otherwise."""
    if by != ("agent",):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # the grouped summary reported them
            summary = summary_of(stats, traces, by=("agent",), **{**options, "n_boot": 0})
    boot = {k: options[k] for k in ("n_boot", "seed", "alpha", "overcautious_window") if k in options}
    metric = {
        k: v for k, v in options.items() if k not in ("n_boot", "seed", "alpha", "overcautious_window", "cluster")
    }
    return compare_agents(steps, traces, summary, baseline=baseline, statistics=stats, **boot, **metric)


def labeled_steps_line(steps: pd.DataFrame) -> str:
    """``"N of M labelable steps labeled"``: steps with at least one label, of the reasoning, search and
    search-result steps (the kinds that take labels), for the report header."""
    from ..traces import FIELDS_BY_KIND

    fields = sorted({f for fs in FIELDS_BY_KIND.values() for f in fs if f in steps.columns})
    labelable = steps["kind"].isin([k for k, fs in FIELDS_BY_KIND.items() if fs])
    labeled = steps[fields].notna().any(axis=1) & labelable if fields else labelable & False
    return f"{int(labeled.sum())} of {int(labelable.sum())} labelable steps labeled"
