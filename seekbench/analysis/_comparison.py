"""Which agent is better: per headline metric the agents' order, and differences with paired bootstrap CIs.

The difference between agents a and b on metric M is M(a) - M(b). Its 95% percentile CI comes
from one bootstrap over both agents' traces at once (spec section 3): the resampling unit is
the question (``cluster_labels(..., cluster="question")``), so when a and b answered the same
question both of its traces enter or leave a resample together (a paired comparison); a question
only one of them answered is resampled on its own, and a trace without a question id is its own
unit. Both agents' metrics are statistics of per-trace column sums
(:mod:`seekbench.analysis._headline`), so each resample evaluates both from one matrix product
(:meth:`seekbench.metrics.Resampler.resampled_sums`). The draws depend only on the seed and on the
sorted set of units, so the difference b - a is exactly the negation of a - b, CI included.

A difference is *clear* when its CI excludes 0 (by more than 1e-12, so that rounding in sums of
equal values never makes a difference clear). The rules of spec section 3 decide the rest:

- when every bootstrap draw gives the same value for a rate (accuracy, overconfident, overcautious:
  both agents at 0, or both at 1), the percentile interval is a point that claims certainty; the
  difference gets Newcombe's hybrid score interval of the two rates instead
  (:func:`seekbench.metrics.newcombe_interval`), and its ``interval`` column says so;
- a verdict whose bootstrap bound lies within Monte Carlo error of 0 is *borderline*, not clear or
  not clear as the seed falls: borderline when the share p of draws on the far side of 0 (at or
  below 0 for a positive difference, at or above for a negative one) is within 2 standard errors of
  alpha/2, the standard error sqrt(p (1 - p) / B) (:func:`seekbench.metrics.monte_carlo_borderline`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._errors import UserInputError
from .._renamed import renamed_keyword
from ..metrics import MetricOptions, MetricsSummary, Resampler, check_bootstrap_options, evidence_prevalence
from ._differences import (
    BORDERLINE,
    CLEAR,
    NOT_CLEAR,
    TIE,
    AgentData,
    PairedDifferences,
    shared_questions,
)
from ._headline import HEADLINE_METRICS, HeadlineMetric
from ._result import Comparison
from ._statistics import analysis_statistics

DIFFERENCE_COLUMNS = [
    "metric",
    "agent",
    "other",
    "value",
    "other_value",
    "difference",
    "lower",
    "upper",
    "clear",
    "verdict",
    "interval",
    "better",
    "paired",
    "n_shared_questions",
]


def _num(x: float) -> str:
    return "n/a" if not np.isfinite(x) else (f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}")


def _signed(x: float) -> str:
    return "n/a" if not np.isfinite(x) else ("+" if x > 0 else "") + _num(x)


def _join(names: Sequence[str], *, limit: int = 4) -> str:
    """``a``, ``a and b``, ``a, b and c``; more than ``limit`` names become a count (the tables name them)."""
    names = list(names)
    if len(names) > limit:
        return f"{len(names)} agents"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _order(values: dict[str, float], better: str) -> list[str]:
    """Agents with a value, best first; ties keep the agents' order."""
    defined = [a for a, v in values.items() if np.isfinite(v)]
    sign = -1.0 if better == "higher" else 1.0
    return sorted(defined, key=lambda a: sign * values[a])


def _rank(values: dict[str, float], order: list[str], agent: str, better: str) -> float:
    """1 + the number of agents strictly better (ties share a rank); NaN without a value."""
    if agent not in order:
        return np.nan
    v = values[agent]
    ahead = [o for o in order if (values[o] - v > TIE if better == "higher" else v - values[o] > TIE)]
    return float(1 + len(ahead))


def _sentence(
    m: HeadlineMetric, order: list[str], values: dict, leaders: list[str], diffs: dict, *, alpha: float
) -> str:
    """One plain sentence: who is best on ``m``, and whether its differences from the others are clear
    (an agent is clearly behind when its difference from every best agent is clear; borderline when
    none is worse than borderline and one is borderline: a bound within Monte Carlo error of 0)."""
    level = f"{100 * (1 - alpha):g}"
    missing = [a for a in values if a not in order]
    tail = f" (n/a for {_join(missing)}: not enough labels or answers)" if missing else ""
    if len(order) < 2:
        return f"Fewer than two agents have a {m.name}; nothing to compare{tail}."
    if len(leaders) == len(order):
        return f"All agents tie on {m.name} ({_num(values[order[0]])}){tail}."
    rest = [a for a in order if a not in leaders]
    whom = "every other agent" if len(rest) == len(order) - 1 and len(rest) > 1 else _join(rest)
    subject = leaders[0] if len(leaders) == 1 else f"{_join(leaders)} (tied at {_num(values[leaders[0]])}) each"
    pairs = [(lead, o) for lead in leaders for o in rest]
    cis = [diffs[p][:2] for p in pairs]
    if not all(np.isfinite(lo) and np.isfinite(hi) for lo, hi in cis):
        clarity = "no CI was computed (n_boot = 0)"
    else:

        def status(o: str) -> str:
            verdicts = {diffs[(lead, o)][2] for lead in leaders}
            return CLEAR if verdicts == {CLEAR} else (BORDERLINE if NOT_CLEAR not in verdicts else NOT_CLEAR)

        by = {v: [o for o in rest if status(o) == v] for v in (CLEAR, BORDERLINE, NOT_CLEAR)}
        runner = rest[0]
        lo, hi, _ = diffs[(leaders[0], runner)]
        gap = f"{_signed(values[leaders[0]] - values[runner])} [{_signed(lo)}, {_signed(hi)}]"
        note = f"{level}% CI includes 0; vs {runner}: {gap}"
        if not by[NOT_CLEAR] and not by[BORDERLINE]:
            clarity = ("each difference is clear" if len(pairs) > 1 else "the difference is clear") + (
                f" ({level}% CI excludes 0; vs {runner}: {gap})"
            )
        elif not by[CLEAR] and not by[BORDERLINE]:
            clarity = ("no difference is clear" if len(pairs) > 1 else "the difference is not clear") + f" ({note})"
        elif not by[CLEAR] and not by[NOT_CLEAR]:
            clarity = (
                "each difference is borderline" if len(pairs) > 1 else "the difference is borderline"
            ) + f" (a CI bound within Monte Carlo error of 0; vs {runner}: {gap})"
        else:
            parts = []
            if by[CLEAR]:
                parts.append(f"clearly so against {_join(by[CLEAR])}")
            if by[BORDERLINE]:
                parts.append(f"borderline against {_join(by[BORDERLINE])} (a CI bound within Monte Carlo error of 0)")
            if by[NOT_CLEAR]:
                parts.append(f"not clearly against {_join(by[NOT_CLEAR])}")
            what = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) == 3 else ", ".join(parts)
            clarity = f"{what} ({f'{level}% CI includes 0; ' if by[NOT_CLEAR] else ''}vs {runner}: {gap})"
    return f"{subject} {m.comparative} than {whom}; {clarity}{tail}."


def _baseline(baseline: str | None, traces: pd.DataFrame, groups: dict) -> tuple[str, bool]:
    """The baseline agent, and whether it is each metric's best (``"best"``, unless an agent has that name)."""
    if baseline is None:  # the first agent of the input, as the report orders them
        baseline = next(
            (str(a) for a in dict.fromkeys(traces["agent"].astype(str)) if str(a) in groups), list(groups)[0]
        )
    best_baseline = baseline == "best" and "best" not in groups  # an agent named "best" keeps its name
    if baseline not in groups and not best_baseline:
        raise UserInputError(
            f"--baseline {baseline!r} is not an agent of these traces; choose one of: best, {', '.join(groups)}"
        )
    return baseline, best_baseline


def _agent_data(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    statistics: pd.DataFrame | None,
    opts: MetricOptions,
    *,
    overcautious_window: int,
    agents: list[str],
    values: dict[str, dict[str, float]],
) -> dict[str, AgentData]:
    """Per agent its traces and each headline metric's columns and statistic (``values``: which are defined)."""
    prevalence = None
    if opts.ce_aggregate == "pooled" and opts.ce_prevalence == "global":
        prevalence = evidence_prevalence(
            steps, traces, decision_points=opts.decision_points, **opts.evidence
        ).to_numpy()
    stats = analysis_statistics(steps, traces, statistics, dict(opts.as_dict()))
    agent_of = traces["agent"].astype(str).to_numpy()
    rows = {a: np.flatnonzero(agent_of == a) for a in agents}
    return {
        a: AgentData(
            stats.iloc[rows[a]],
            traces.iloc[rows[a]],
            opts,
            overcautious_window,
            prevalence,
            {m.key: bool(np.isfinite(values[m.key][a])) for m in HEADLINE_METRICS},
        )
        for a in agents
    }


def _difference_row(m: HeadlineMetric, vals: dict, a: str, b: str, differences: PairedDifferences) -> dict:
    """One row of :attr:`Comparison.differences`: M(a) - M(b) with its interval and verdict."""
    lo, hi, how, verdict = differences.interval(a, b, m.key)
    d = vals[a] - vals[b]
    shared = shared_questions(differences.data[a], differences.data[b])
    return {
        "metric": m.key,
        "agent": a,
        "other": b,
        "value": vals[a],
        "other_value": vals[b],
        "difference": d,
        "lower": lo,
        "upper": hi,
        "clear": verdict == CLEAR,
        "verdict": verdict,
        "interval": how,
        "better": bool(d > TIE if m.better == "higher" else d < -TIE),
        "paired": bool(shared),
        "n_shared_questions": shared,
    }


def _value_row(m: HeadlineMetric, vals: dict, order: list[str], leaders: list[str], agent: str, group: dict) -> dict:
    """One row of :attr:`Comparison.values`: the agent's value, its CI from the summary, its rank."""
    lo, hi = group.get(f"{m.key}_ci") or (np.nan, np.nan)
    return {
        "metric": m.key,
        "agent": agent,
        "value": vals[agent],
        "lower": np.nan if lo is None else float(lo),
        "upper": np.nan if hi is None else float(hi),
        "rank": _rank(vals, order, agent, m.better),
        "best": agent in leaders,
    }


def compare_agents(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    summary: MetricsSummary,
    *,
    baseline: str | None = None,
    overcautious_window: int = 15,
    horizon: int | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    resampler: Resampler | None = None,
    statistics: pd.DataFrame | None = None,
    **metric_options,
) -> Comparison | None:
    """Per headline metric the agents' order and a sentence, and the paired differences between agents.

    For each metric M of :data:`HEADLINE_METRICS` (direction: ``better``) and agents a, b:
    difference = M(a) - M(b) with a 95% percentile bootstrap CI resampling questions (see the
    module docstring); *clear* when the CI excludes 0. The differences computed are those against
    ``baseline`` and those of each metric's best agent(s) against the others (what the sentences state).

    Parameters
    ----------
    steps, traces : DataFrame
        The tables of :func:`seekbench.traces.build_tables` (labels attached).
    summary : MetricsSummary
        :func:`seekbench.metrics.summarize` of the same tables grouped by ``agent`` (the values shown).
    baseline : str, optional
        The agent the pairwise table compares with (default: the first agent of ``traces``, the
        input's order), or
        ``"best"``: each metric's best agent (ties: the first in order).
    overcautious_window : int
        H of the overcautious rate.
    horizon : int, optional
        Deprecated spelling of ``overcautious_window`` (a ``FutureWarning``; removed in the next release).
    n_boot, seed, alpha : bootstrap resamples (0 skips CIs), seed, 1 - confidence level.
    resampler : Resampler, optional
        The resampling in place of ``n_boot`` and ``seed`` (without clusters: the units are the
        questions of each pair of agents).
    statistics : DataFrame, optional
        The per-trace statistics table ``summary`` was aggregated from (:func:`seekbench.metrics.trace_statistics`
        of ``traces``, rows in its order); the differences' columns are read from it. Default: reduced here.
    **metric_options
        The metric options (:class:`~seekbench.metrics.MetricOptions` keywords).

    Returns
    -------
    Comparison or None
        None with fewer than two agents.

    Raises
    ------
    UserInputError
        ``baseline`` is not one of the agents (the message lists them).

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> from seekbench.metrics import summarize
    >>> from seekbench.traces import build_tables, read_traces
    >>> steps, traces = build_tables(read_traces(sample_traces_path()).traces)
    >>> c = compare_agents(steps, traces, summarize(steps, traces, n_boot=0), n_boot=50)
    >>> c.baseline, len(c.agents), list(c.metrics["metric"][:3])
    ('careful-planner', 4, ['rqi', 'ce', 'recovered_by_8'])
    >>> t = c.against_baseline().set_index(["metric", "agent"])
    >>> t.loc[("rqi", "careful-planner"), ["difference", "lower", "upper"]].tolist()  # the baseline itself
    [0.0, 0.0, 0.0]
    >>> r = t.loc[("rqi", "looper")]
    >>> bool(r["lower"] <= r["difference"] <= r["upper"]), bool(r["clear"] == (r["lower"] > 0 or r["upper"] < 0))
    (True, True)
    """
    overcautious_window = renamed_keyword("compare_agents", "horizon", horizon, overcautious_window, default=15)
    check_bootstrap_options(n_boot, alpha)
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="compare_agents")
    opts = MetricOptions.resolve(None, **{k: v for k, v in metric_options.items() if k in MetricOptions().as_dict()})
    if list(summary.options.get("by", ["agent"])) != ["agent"]:
        raise ValueError("compare_agents needs a summary grouped by agent")
    groups = {str(g["agent"]): g for g in summary.groups}
    agents = list(groups)
    if len(agents) < 2:
        return None
    baseline, best_baseline = _baseline(baseline, traces, groups)
    values = {m.key: {a: float(groups[a][m.key]) for a in agents} for m in HEADLINE_METRICS}
    data = _agent_data(
        steps, traces, statistics, opts, overcautious_window=overcautious_window, agents=agents, values=values
    )
    differences = PairedDifferences(data, resampler=resampler, alpha=alpha)
    metric_rows, value_rows, diff_rows = [], [], []
    for m in HEADLINE_METRICS:
        vals = values[m.key]
        order = _order(vals, m.better)
        leaders = [a for a in order if abs(vals[a] - vals[order[0]]) <= TIE] if order else []
        base = (leaders[0] if leaders else agents[0]) if best_baseline else baseline
        wanted = [(a, base) for a in agents] + [(lead, o) for lead in leaders for o in order if o not in leaders]
        rows = [_difference_row(m, vals, a, b, differences) for a, b in dict.fromkeys(wanted)]
        diff_rows += rows
        value_rows += [_value_row(m, vals, order, leaders, a, groups[a]) for a in agents]
        diffs = {(r["agent"], r["other"]): (r["lower"], r["upper"], r["verdict"]) for r in rows}
        metric_rows.append(
            {
                "metric": m.key,
                "name": m.name,
                "better": m.better,
                "direction": m.direction,
                "order": " > ".join(order),
                "best": ", ".join(leaders),
                "n_agents": len(order),
                "sentence": _sentence(m, order, vals, leaders, diffs, alpha=alpha),
                **({"baseline": base} if best_baseline else {}),
            }
        )
    return Comparison(
        baseline=baseline,
        agents=tuple(agents),
        metrics=pd.DataFrame(metric_rows),
        values=pd.DataFrame(value_rows),
        differences=pd.DataFrame(diff_rows, columns=DIFFERENCE_COLUMNS),
        options={
            **resampler.as_options(),
            "alpha": alpha,
            "cluster": "question",
            "overcautious_window": overcautious_window,
        },
    )
