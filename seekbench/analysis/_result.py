"""The analysis result: every number a report shows, as frozen dataclasses (no HTML, no plotting).

A report renders an :class:`Analysis`; it never computes. The tables are DataFrames and the
ERF curves fitted :class:`~seekbench.metrics.EvidenceRecoveryFitter` objects, so a figure is
drawn from the result alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from ..agreement import AgreementResult
    from ..env.conformal import ConformalResult
    from ..metrics import CorrectedMetrics, MetricsSummary
    from ._explorer_data import ExplorerData

#: Version of the result's layout; bumped when a field is renamed, removed or changes meaning.
ANALYSIS_VERSION = "1"


@dataclass(frozen=True)
class Provenance:
    """What produced an analysis: the seekbench version, when, with which options, from which inputs.

    Attributes
    ----------
    seekbench_version : str
    generated : str
        UTC time the analysis was computed (``YYYY-MM-DD HH:MM UTC``).
    options : dict
        The metric options as :func:`seekbench.metrics.summarize` resolved them.
    audit_options : dict
        The flag thresholds of :func:`seekbench.metrics.trace_audit` given by the caller.
    inputs : dict
        Free-form description of the inputs (files, label source, skipped records).
    analysis_version : str
        :data:`ANALYSIS_VERSION` of the result's layout.
    """

    seekbench_version: str
    generated: str
    options: dict
    audit_options: dict
    inputs: dict
    analysis_version: str = ANALYSIS_VERSION


@dataclass(frozen=True)
class ProcessAnalysis:
    """Per-group process metrics, ERF fits with the log-rank comparison, and the CE decision tables.

    Attributes
    ----------
    summary : MetricsSummary
        :func:`seekbench.metrics.summarize` per group, with bootstrap CIs.
    by : tuple of str
        The grouping columns.
    metrics_table : DataFrame
        ``summary.to_frame()``.
    erf_fitters, erf_km_fitters : dict of str to EvidenceRecoveryFitter
        Per group key (``" / "``-joined group values): the ERF fit with the chosen method, and
        1 - Kaplan-Meier with stops censored (for comparison only).
    erf_table : DataFrame
        Per group and time: ``erf, lower, upper, raw, km``.
    recovery_test : object or None
        :func:`seekbench.metrics.compare_recovery` over the groups; None with fewer than two.
    rqi_by_type, rqi_by_type_n : DataFrame
        RQI and its count per reasoning type (rows) and group (columns).
    calibration : DataFrame
        P(answer | E = k) at decision points, E (rows) by group (columns).
    prevalence : DataFrame
        Share of decision points at each E, group (rows) by E (columns).
    unusable : dict of str to int
        Steps or traces the metrics could not use, by reason, summed over groups.
    """

    summary: MetricsSummary
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
    unusable: dict


@dataclass(frozen=True)
class AuditAnalysis:
    """The per-trace audit: flags, per-agent rates and the worst traces.

    Attributes
    ----------
    table : DataFrame
        :func:`seekbench.metrics.trace_audit`, one row per trace.
    rates : DataFrame
        :func:`seekbench.metrics.audit_flag_rates` per agent.
    worst : DataFrame
        :func:`seekbench.metrics.worst_traces`, ``worst_n`` per agent.
    worst_n : int
    options : dict
        Every threshold in use (defaults filled in).
    flags : tuple of str
        The flags in their fixed order (:data:`seekbench.metrics.FLAGS`).
    flag_definitions : dict of str to str
        Each flag's definition with its thresholds.
    n_flagged, n_multi_flagged : int
        Traces raising at least one flag, and at least two.
    """

    table: pd.DataFrame
    rates: pd.DataFrame
    worst: pd.DataFrame
    worst_n: int
    options: dict
    flags: tuple[str, ...]
    flag_definitions: dict
    n_flagged: int
    n_multi_flagged: int


@dataclass(frozen=True)
class OutcomeAnalysis:
    """Outcomes beside what they cost, who decided correctness, answer-judge panels, evidence sets.

    Attributes
    ----------
    efficiency : DataFrame
        :func:`seekbench.metrics.efficiency_table` per agent.
    correctness_sources : DataFrame
        Per agent, traces whose correctness each source decided (``unknown`` = nobody).
    panel : DataFrame or None
        Per agent, answer-judge panel decisions and disagreements; None without panel votes.
    evidence_set : DataFrame or None
        :func:`seekbench.metrics.evidence_set_summary` per agent; None without evidence sets.
    max_runs : int
        Most runs of one question by one agent (Pass@k needs more than one).
    """

    efficiency: pd.DataFrame
    correctness_sources: pd.DataFrame
    panel: pd.DataFrame | None
    evidence_set: pd.DataFrame | None
    max_runs: int


@dataclass(frozen=True)
class CompletenessAnalysis:
    """Seeking-environment episodes: completeness beside the process metrics of the same agents.

    Attributes
    ----------
    episodes : DataFrame
        :func:`seekbench.env.episode_table`.
    summary, per_agent : DataFrame
        :func:`seekbench.env.completeness_summary` by agent and belief, and by agent.
    by_agent : DataFrame
        Per agent: ``episodes, completeness, ci_low, ci_high, self_estimate_error``, the
        conformal columns (the agent's own self-estimates calibrated: ``self_estimates, q_hat,
        coverage, coverage_ci_lower, coverage_ci_upper, width, conformal_note``), and the process
        metrics ``rqi, recovered_by_8, ce`` each with ``<name>_ci_lo`` and ``<name>_ci_hi``.
    conformal_columns : tuple of str
        Which columns of ``by_agent`` came from the conformal result.
    curves, diversity, topics : DataFrame
        Completeness curves with their band, query diversity per step, final completeness per
        topic (rows) and agent (columns).
    band : {"ci", "std"}
    topic_belief : str
        The belief the topic table uses.
    settings : tuple of (str, float)
        The (embedder, theta) pairs of the episodes.
    n_documents, n_topics : int
    max_steps : int or float
    """

    episodes: pd.DataFrame
    summary: pd.DataFrame
    per_agent: pd.DataFrame
    by_agent: pd.DataFrame
    conformal_columns: tuple[str, ...]
    curves: pd.DataFrame
    diversity: pd.DataFrame
    topics: pd.DataFrame
    band: str
    topic_belief: str
    settings: tuple[tuple[str, float], ...]
    n_documents: int
    n_topics: int
    max_steps: object


@dataclass(frozen=True)
class AgreementAnalysis:
    """Judge agreement with the reference, and each judge's place against its cost.

    Attributes
    ----------
    result : AgreementResult
        :func:`seekbench.agreement.compare_annotations`.
    kappa_cost : DataFrame
        The pooled rows of judges with a cost row: ``rater, cost_per_trace, latency_s_per_trace,
        tokens_per_trace, score, lower, upper``, ``known`` (a value on ``cost_axis``) and
        ``on_front`` (on the Pareto front of that axis and the score).
    score : {"kappa", "ac1"}
        The score ``kappa_cost`` holds.
    cost_axis : str or None
        The column of ``kappa_cost`` to plot the score against (cost, else latency, else
        tokens per trace); None when no judge recorded any of them.
    examples : DataFrame or None
        :func:`seekbench.analysis.disagreement_examples`: a few steps per (judge, field, step kind)
        where judge and reference differ; None when the traces were not at hand.
    """

    result: AgreementResult
    kappa_cost: pd.DataFrame
    score: str = "kappa"
    cost_axis: str | None = None
    examples: pd.DataFrame | None = None


@dataclass(frozen=True)
class Comparison:
    """Which agent is better on each headline metric, and by how much, with paired bootstrap CIs.

    Made by :func:`seekbench.analysis.compare_agents`; the metrics are
    :data:`seekbench.analysis.HEADLINE_METRICS`.

    Attributes
    ----------
    baseline : str
        The agent the pairwise table compares with, or ``"best"``: each metric's best agent (its
        ``metrics`` row names it in ``baseline``; :meth:`baseline_of`).
    agents : tuple of str
    metrics : DataFrame
        One row per metric: ``metric, name, better`` ("higher" or "lower"), ``direction`` (in
        words), ``order`` (agents with a value, best first, ``" > "``-joined), ``best`` (the best
        agent, or the tied best ones), ``n_agents`` and ``sentence`` (who is best and how sure).
    values : DataFrame
        One row per (metric, agent): ``value`` and its own CI ``lower, upper`` (NaN where the
        summary has none), ``rank`` (1 = best; tied agents share the better rank) and ``best``.
    differences : DataFrame
        One row per computed (metric, agent, other): ``value, other_value, difference`` (agent -
        other), its 95% CI ``lower, upper``, ``clear`` (the verdict is clear: the CI excludes 0),
        ``verdict`` ("clear", "borderline": a bootstrap bound within Monte Carlo error of 0, or
        "not clear"), ``interval`` (how the CI was computed: "paired bootstrap", or "Newcombe
        hybrid score" where every draw of a rate's difference was the same), ``better`` (the agent
        is better than the other in the metric's direction), ``paired`` and
        ``n_shared_questions`` (questions both answered). Every agent has a row against the
        baseline (the baseline's own row is 0 with CI [0, 0]), and each metric's best agent(s)
        one against every other agent.
    options : dict
        ``n_boot, seed, alpha, cluster`` ("question") and ``overcautious_window``.
    """

    baseline: str
    agents: tuple[str, ...]
    metrics: pd.DataFrame
    values: pd.DataFrame
    differences: pd.DataFrame
    options: dict

    def to_dict(self) -> dict:
        """JSON-ready: the tables as lists of records, NaN as None.

        >>> import json
        >>> from seekbench.analysis import analyze
        >>> from seekbench.data import sample_traces_path
        >>> from seekbench.traces import build_tables, read_traces
        >>> traces = read_traces(sample_traces_path()).traces
        >>> c = analyze(*build_tables(traces), trace_dicts=traces, n_boot=20, explorer=False).comparison
        >>> d = json.loads(json.dumps(c.to_dict()))
        >>> first = d["metrics"].pop(0)
        >>> d["baseline"], first["metric"], first["better"]
        ('careful-planner', 'rqi', 'higher')
        """
        import json

        def records(df: pd.DataFrame) -> list:
            return json.loads(df.to_json(orient="records"))

        return {
            "baseline": self.baseline,
            "agents": list(self.agents),
            "metrics": records(self.metrics),
            "values": records(self.values),
            "differences": records(self.differences),
            "options": dict(self.options),
        }

    def baseline_of(self, metric: str) -> str:
        """The agent ``metric``'s differences are taken against: the baseline, or with ``baseline="best"``
        that metric's best agent."""
        if self.baseline != "best" or "baseline" not in self.metrics.columns:
            return self.baseline
        return str(self.metrics.set_index("metric").loc[metric, "baseline"])

    def against_baseline(self) -> pd.DataFrame:
        """The rows of ``differences`` against the baseline (each metric's own with ``baseline="best"``),
        renamed for a table: ``baseline`` and ``baseline_value`` instead of ``other`` and ``other_value``,
        in metric and agent order."""
        d = self.differences
        base = d["metric"].map(self.baseline_of)
        rows = d[d["other"] == base].rename(columns={"other": "baseline", "other_value": "baseline_value"})
        return rows.reset_index(drop=True)


@dataclass(frozen=True)
class Analysis:
    """Everything a report shows, computed once by :func:`analyze`.

    Attributes
    ----------
    provenance : Provenance
    n_traces, n_steps : int
    process : ProcessAnalysis
    audit : AuditAnalysis
    outcome : OutcomeAnalysis or None
        None when there are no traces.
    completeness : CompletenessAnalysis or None
        None when no trace is a seeking-environment episode.
    conformal : ConformalResult or None
        :func:`seekbench.env.conformal.evaluate_conformal`, when estimates were given.
    agreement : AgreementAnalysis or None
        When raters were given.
    explorer : ExplorerData or None
        The trace explorer's data, when asked for.
    comparison : Comparison or None
        The agents compared on the headline metrics; None with fewer than two agents.
    judge_records : list of JudgeRecord
        The judges whose labels feed the metrics or the agreement, with their validation records
        (:func:`seekbench.analysis.judge_records`); empty when every label is a human's.
    corrected : CorrectedMetrics or None
        Judge-corrected (PPI++) metrics (:func:`seekbench.metrics.judge_corrected_metrics`), when asked for.
    """

    provenance: Provenance
    n_traces: int
    n_steps: int
    process: ProcessAnalysis
    audit: AuditAnalysis
    outcome: OutcomeAnalysis | None
    completeness: CompletenessAnalysis | None
    conformal: ConformalResult | None
    agreement: AgreementAnalysis | None
    explorer: ExplorerData | None
    comparison: Comparison | None = None
    judge_records: list = field(default_factory=list)
    corrected: CorrectedMetrics | None = None
