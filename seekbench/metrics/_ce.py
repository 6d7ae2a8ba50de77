"""CE: calibration error of the answer decision, and its companions (spec section 5)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Unpack

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from .._renamed import renamed_attribute, renamed_keyword
from ._bootstrap import (
    Cluster,
    check_bootstrap_options,
    cluster_labels,
    ratio,
)
from ._decisions import (
    decision_counts,
    evidence_labeled,
    observation_label_counts,
    step_points,
    turn_points,
)
from ._evidence import evidence_unknown
from ._intervals import wilson_interval
from ._options import (
    CE_AGGREGATE_OPTIONS,
    DECISION_POINTS,
    MAPPING_OPTIONS,
    PREVALENCE_OPTIONS,
    SCOPE_OPTIONS,
    CEAggregate,
    DecisionPoints,
    EvidenceKeywords,
    EvidenceMapping,
    EvidenceOptions,
    EvidenceScope,
    Prevalence,
    check_option,
    evidence_keywords,
)
from ._resampler import Resampler, Seed

#: Ideal policy pi*(k) = 1 if k = 2 else 0.
IDEAL_POLICY = np.array([0.0, 0.0, 1.0])


def _check(aggregate: str, prevalence: str, decision_points: str, mapping: str, scope: str) -> None:
    check_option("aggregate", aggregate, CE_AGGREGATE_OPTIONS)
    check_option("prevalence", prevalence, PREVALENCE_OPTIONS)
    check_option("decision_points", decision_points, DECISION_POINTS)
    check_option("evidence_mapping", mapping, MAPPING_OPTIONS)
    check_option("evidence_scope", scope, SCOPE_OPTIONS)


def _trace_ce(counts: np.ndarray) -> np.ndarray:
    """CE_i from per-trace ``[n0, n1, n2, a0, a1, a2]`` rows (NaN without decision points).

    sum_k (n_k / n) |a_k / n_k - pi*(k)| = (a0 + a1 + n2 - a2) / n: the share of decision
    points where the agent did not do what the ideal policy does.
    """
    n = counts[:, :3].sum(axis=1)
    wrong = counts[:, 3] + counts[:, 4] + counts[:, 2] - counts[:, 5]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, wrong / np.where(n > 0, n, 1.0), np.nan)


def _state_weights(n: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """P(E = k) weights of the pooled CE per row of state counts ``n`` (rows x 3).

    ``weights`` is the prevalence (``None``: the rows' own N_k / N). States with no decision
    point in a row have no P(A = 1 | E = k) and get weight 0; the rest are renormalised to
    sum to 1 (all NaN for a row without decision points).
    """
    present = n > 0
    w = n if weights is None else np.broadcast_to(np.asarray(weights, dtype=float), n.shape)
    w = np.where(present, w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, w / np.where(total > 0, total, 1.0), np.nan)


def _pooled_ce(sums: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Pooled CE from summed ``[N0, N1, N2, A0, A1, A2]`` rows (vectorised over rows):
    sum_k w_k |A_k / N_k - pi*(k)| with the weights of :func:`_state_weights`."""
    n, a = sums[:, :3], sums[:, 3:]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, a / np.where(n > 0, n, 1.0), 0.0)
    return (_state_weights(n, weights) * np.abs(p - IDEAL_POLICY)).sum(axis=1)  # NaN rows stay NaN


def evidence_prevalence(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    decision_points: DecisionPoints = "turn",
    **evidence: Unpack[EvidenceKeywords],
) -> pd.Series:
    """P(E = k), k = 0, 1, 2, over all decision points of the traces given.

    Computed on the whole corpus (all agents) it is the global prevalence that
    ``answer_calibration(..., aggregate="pooled", prevalence="global", global_prevalence=...)``
    uses for one group. All NaN when there are observations and none is labeled.
    ``evidence_mapping`` and ``evidence_scope`` as in :func:`answer_calibration`.

    Returns a Series indexed 0, 1, 2 summing to 1 (all NaN when there is no decision point).

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> obs = {"kind": "search_result", "labels": {"clarity": "Unclear", "sufficiency": "Sufficient"}}
    >>> steps, traces = build_tables([{"trace_id": "x", "agent": "a", "steps": [
    ...     {"index": 0, "kind": "search", "query": "q"}, dict(obs, index=1), {"index": 2, "kind": "answer"}]}])
    >>> evidence_prevalence(steps, traces).tolist()  # turn 0 at E = 0, the answer turn 1 at E = 1
    [0.5, 0.5, 0.0]
    """
    check_option("decision_points", decision_points, DECISION_POINTS)
    ev = evidence_keywords("evidence_prevalence", evidence)
    return prevalence_from_columns(calibration_trace_columns(steps, traces, decision_points, ev))


def prevalence_from_columns(per: pd.DataFrame) -> pd.Series:
    """P(E = k) from the :func:`calibration_trace_columns` of the traces (sums of ``n0, n1, n2``).

    All NaN when the traces have observations and none is labeled, or no decision point.
    """
    used = per if evidence_labeled(per) else per.iloc[:0]
    n_k = used[["n0", "n1", "n2"]].sum().to_numpy(dtype=float)
    total = n_k.sum()
    return pd.Series(n_k / total if total > 0 else np.full(3, np.nan), index=[0, 1, 2], name="prevalence")


@dataclass
class CalibrationResult:
    """What :func:`answer_calibration` computes for one group of traces.

    Attributes
    ----------
    ce : float
        Calibration error in [0, 1], lower is better; NaN when undefined.
    ci : tuple of float
        Percentile bootstrap CI of ``ce`` resampling whole traces.
    per_trace : Series
        CE_i by trace id (NaN for traces left out); the trace-level values whatever ``aggregate``.
    answer_table : DataFrame
        Columns ``E, n, answers, answer_rate, ideal, prevalence, term``: pooled decision points and
        answers by state, P(answer | E = k), pi*(k), the weight P(E = k) of the pooled CE (group
        or global, renormalised over the states present) and its term; the terms sum to the
        pooled CE (with ``aggregate="trace"`` the table shows the group's pooled view).
    overconfident_rate : float
        Share of answered traces whose answer came with E < 2 (traces whose E is unknown left out).
    overcautious_rate : float
        Share of traces that reached E = 2 and did not answer within ``overcautious_window`` turns of it
        (a trace that never answers counts when it ever held E = 2); denominator: the traces
        whose E is known.
    overcautious_given_e2 : float
        The same count over the traces that reached E = 2 (``overcautious_given_e2`` in the
        summary; ``overcautious_given_evidence`` is its old name, a ``FutureWarning``).
    overconfident_ci, overcautious_ci : tuple of float
        Wilson score intervals of the two rates over their denominators (spec section 3: a
        per-agent rate gets the Wilson interval, which does not collapse to [0, 0] at 0).
    n_answered : int
        Answered traces whose E is known (the overconfident rate's denominator).
    n_reached_e2 : int
        Traces that reached E = 2 (``n_reached_evidence`` is its old name, a ``FutureWarning``).
    n_traces_all_unlabeled : int
        Traces whose E is unknown (observations, none labeled; spec section 2): left out of
        every number here, CE included.
    accuracy_by_evidence : DataFrame
        Columns ``E, n, n_known, accuracy``: answered traces by E at the answer turn.
    """

    ce: float
    ci: tuple[float, float]
    aggregate: str
    prevalence: str
    decision_points: str
    per_trace: pd.Series
    answer_table: pd.DataFrame
    overconfident_rate: float
    overcautious_rate: float
    overcautious_given_e2: float
    accuracy_by_evidence: pd.DataFrame
    n_traces: int
    n_decision_points: int
    n_answered: int
    n_reached_e2: int
    n_traces_all_unlabeled: int
    options: dict = field(default_factory=dict)
    overconfident_ci: tuple[float, float] = (np.nan, np.nan)
    overcautious_ci: tuple[float, float] = (np.nan, np.nan)

    @property
    def overcautious_given_evidence(self) -> float:
        """Deprecated: the old name of :attr:`overcautious_given_e2` (removed in the next release)."""
        return renamed_attribute(self, "overcautious_given_evidence", "overcautious_given_e2")

    @property
    def n_reached_evidence(self) -> int:
        """Deprecated: the old name of :attr:`n_reached_e2` (removed in the next release)."""
        return renamed_attribute(self, "n_reached_evidence", "n_reached_e2")

    @property
    def summary(self) -> pd.DataFrame:
        """One row per quantity: estimate, CI bounds and n."""
        rows = {
            "ce": (self.ce, self.ci[0], self.ci[1], self.n_traces),
            "overconfident_rate": (self.overconfident_rate, *self.overconfident_ci, self.n_answered),
            "overcautious_rate": (self.overcautious_rate, *self.overcautious_ci, self.n_traces),
        }
        return pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "lower", "upper", "n"])


def _warn(what: str, why: str) -> None:
    warnings.warn(f"{what} is undefined ({why}); returning NaN", UndefinedMetricWarning, stacklevel=3)


def _weights(
    aggregate: CEAggregate, prevalence: Prevalence, given: Sequence[float] | pd.Series | None, per: pd.DataFrame
) -> np.ndarray | None:
    """The P(E = k) weights of the pooled CE (None: the group's own prevalence or trace CE);
    ``given`` (else the prevalence of the traces ``per`` describes) when they are global."""
    if aggregate != "pooled" or prevalence != "global":
        return None
    weights = np.asarray(prevalence_from_columns(per) if given is None else given, dtype=float).reshape(-1)
    if weights.shape != (3,):
        raise UserInputError(f"global_prevalence must hold P(E=k) for k = 0, 1, 2, got {weights.size} values")
    return weights


#: Columns of :func:`calibration_trace_columns`: decision points and answers by E, the
#: observation label counts, and what the companions need.
CALIBRATION_COLUMNS = (
    "n0", "n1", "n2", "a0", "a1", "a2", "n_obs", "n_obs_unlabeled",
    "answered", "answer_turn", "correct", "e_answer", "first_e2",
)  # fmt: skip


def calibration_trace_columns(
    steps: pd.DataFrame, traces: pd.DataFrame, decision_points: DecisionPoints, ev: EvidenceOptions
) -> pd.DataFrame:
    """Per trace of ``traces`` (indexed by trace id, in its order): :data:`CALIBRATION_COLUMNS`.

    ``n0..n2, a0..a2``: decision points and answers by E (``decision_points``);
    ``n_obs, n_obs_unlabeled``: observations and those without E; ``answered, answer_turn,
    correct`` (1.0 / 0.0 / NaN) from the trace table; ``e_answer``: E at the answer turn and
    ``first_e2``: the first turn with E = 2 up to the answer (NaN if none), from the turn
    decision points (E under the options ``ev``). Every CE number of a group is a function of these rows
    (:func:`calibration_from_columns`).
    """
    ids = pd.Index(traces["trace_id"])
    cov = observation_label_counts(steps, traces, evidence_mapping=ev["evidence_mapping"])
    turns = turn_points(steps, traces, ev)
    points = turns if decision_points == "turn" else step_points(steps, traces, ev)
    out = decision_counts(points, ids)
    out["n_obs"] = cov["n_obs"].to_numpy(dtype=float)
    out["n_obs_unlabeled"] = cov["n_obs_unlabeled"].to_numpy(dtype=float)
    out["answered"] = traces["answered"].astype(bool).to_numpy()
    out["answer_turn"] = traces["answer_turn"].to_numpy(dtype=float)
    correct = traces["correct"] if "correct" in traces.columns else pd.Series(np.nan, index=traces.index)
    out["correct"] = pd.to_numeric(correct.map({True: 1.0, False: 0.0}), errors="coerce").to_numpy()
    # Turn points come in trace order, t increasing: a trace's first E = 2 point is its earliest.
    uniq = ids if ids.is_unique else pd.Index(pd.unique(ids))
    code = uniq.get_indexer(turns["trace_id"])
    e, t, a = (turns[c].to_numpy() for c in ("E", "t", "A"))
    first_e2 = np.full(len(uniq), np.nan)
    hit = np.flatnonzero((e == 2) & (code >= 0))
    found, first = np.unique(code[hit], return_index=True)
    first_e2[found] = t[hit[first]]
    e_answer = np.full(len(uniq), np.nan)
    ans = (a == 1) & (code >= 0)
    e_answer[code[ans]] = e[ans]
    back = uniq.get_indexer(ids)
    out["e_answer"], out["first_e2"] = e_answer[back], first_e2[back]
    return out


def ce_sums(
    counts: np.ndarray, aggregate: CEAggregate, weights: np.ndarray | None
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """CE of traces with decision counts ``counts`` (rows ``[n0, n1, n2, a0, a1, a2]``) as
    per-trace columns and the statistic of their sums: [CE_i, 1] where CE_i is defined
    (trace aggregate, the ratio of the sums), or the counts themselves (pooled, with the
    P(E = k) ``weights``, None for the resample's own). The columns every CE bootstrap
    resamples (:func:`~seekbench.metrics.ce_columns` too).
    """
    if aggregate == "pooled":
        return counts, lambda s: _pooled_ce(s, weights)
    per = _trace_ce(counts)
    ok = np.isfinite(per)
    return np.column_stack([np.where(ok, per, 0.0), ok.astype(float)]), ratio


def _point_estimate(c: np.ndarray, aggregate: str, weights: np.ndarray | None) -> float:
    if not len(c):
        return float("nan")
    if aggregate == "trace":
        per = _trace_ce(c)
        return float(np.nanmean(per)) if np.isfinite(per).any() else float("nan")
    return float(_pooled_ce(c.sum(axis=0, keepdims=True), weights)[0])


def answer_calibration(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    aggregate: CEAggregate = "trace",
    prevalence: Prevalence = "global",
    decision_points: DecisionPoints = "turn",
    evidence_mapping: EvidenceMapping = "sum",
    evidence_scope: EvidenceScope = "cumulative",
    global_prevalence: Sequence[float] | pd.Series | None = None,
    overcautious_window: int = 15,
    horizon: int | None = None,
    n_boot: int = 2000,
    seed: Seed = 0,
    alpha: float = 0.05,
    cluster: Cluster = "trace",
    resampler: Resampler | None = None,
) -> CalibrationResult:
    """Calibration error of the answer decision with its companions (spec section 5).

    At each decision point (see :mod:`seekbench.metrics._decisions`) of trace i record the
    evidence state E_{i,t} and A_{i,t} = 1 if the agent answers there. With the ideal
    policy pi*(k) = 1[k = 2]:

    - ``aggregate="trace"`` (default, the paper's Def. 3.5):
      CE_i = sum_k P_i(E = k) |P_i(A = 1 | E = k) - pi*(k)| over the states seen in trace i
      (equivalently the share of its decision points where it acts against pi*), and
      CE = mean_i CE_i.
    - ``aggregate="pooled"`` (the released code): CE = sum_k P(E = k) |P(A = 1 | E = k) - pi*(k)|
      with P(A = 1 | E = k) a ratio of sums over the group's traces and P(E = k) the
      prevalence over all decision points of all agents (``prevalence="global"``) or of this
      group (``prevalence="group"``). States the group never visits are left out and the
      weights renormalised over the states it visits.

    Parameters
    ----------
    steps, traces : DataFrame
        Step and trace tables (``build_tables``); ``traces`` lists the traces of the group.
    aggregate : {"trace", "pooled"}
    prevalence : {"global", "group"}
        Only used with ``aggregate="pooled"``.
    decision_points : {"turn", "step"}
    evidence_mapping : {"sum", "sufficiency_first"}
    evidence_scope : {"cumulative", "latest"}
    global_prevalence : sequence of 3 floats, optional
        P(E = k) over the whole corpus (:func:`evidence_prevalence`), for computing one
        group's pooled CE with the global prevalence. When None, the traces given are taken
        to be the whole corpus.
    overcautious_window : int
        H of the overcautious rate (15).
    horizon : int, optional
        Deprecated spelling of ``overcautious_window`` (a ``FutureWarning``; removed in the next release).
    n_boot, seed, alpha, cluster :
        Percentile bootstrap of CE over whole traces (``cluster="question"``: whole questions);
        ``n_boot=0`` skips it. The global prevalence is held fixed in the resamples. The two
        rates get Wilson score intervals at level 1 - ``alpha`` (spec section 3).
    resampler : Resampler, optional
        As in :func:`~seekbench.metrics.reasoning_quality`: one value in place of ``n_boot`` and ``seed``.

    Returns
    -------
    CalibrationResult
        ``ce`` in [0, 1], lower is better.

    Notes
    -----
    An unlabeled observation keeps the previous evidence state (spec section 2); a trace whose
    observations are all unlabeled has an unknown E: it is left out of CE and of both rates and
    counted in ``n_traces_all_unlabeled``. When the group
    has observations and none is labeled (e.g. no labels at all) nothing is known about E:
    every number here is NaN with an ``UndefinedMetricWarning``, never 0.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["x"] * 3, "pos": [0, 1, 2], "turn": [1, 1, 1],
    ...                       "kind": ["search", "search_result", "answer"],
    ...                       "clarity": [None, "Clear", None], "sufficiency": [None, "Sufficient", None]})
    >>> traces = pd.DataFrame({"trace_id": ["x"], "question_id": ["q"], "answered": [True],
    ...                        "answer_turn": [1.0], "correct": [True]})
    >>> answer_calibration(steps, traces, n_boot=0).ce
    0.0
    """
    overcautious_window = renamed_keyword("answer_calibration", "horizon", horizon, overcautious_window, default=15)
    _check(aggregate, prevalence, decision_points, evidence_mapping, evidence_scope)
    check_bootstrap_options(n_boot, alpha, cluster)
    resampler = Resampler.resolve(resampler, n_boot=n_boot, seed=seed, where="answer_calibration")
    _check_window(overcautious_window)
    ev: EvidenceOptions = {"evidence_mapping": evidence_mapping, "evidence_scope": evidence_scope}
    per = calibration_trace_columns(steps, traces, decision_points, ev)
    weights = _weights(aggregate, prevalence, global_prevalence, per)
    clusters = cluster_labels(traces["trace_id"], traces.get("question_id"), cluster=cluster)
    res = calibration_from_columns(
        per,
        aggregate=aggregate,
        prevalence=prevalence,
        weights=weights,
        overcautious_window=overcautious_window,
        resampler=resampler.with_clusters(clusters),
        alpha=alpha,
    )
    res.decision_points = decision_points
    res.options = {
        "aggregate": aggregate,
        "prevalence": prevalence,
        "overcautious_window": overcautious_window,
        "decision_points": decision_points,
        **ev,
    }
    return res


def _check_window(overcautious_window: object) -> None:
    if (
        isinstance(overcautious_window, bool)
        or not isinstance(overcautious_window, (int, np.integer))
        or overcautious_window < 0
    ):
        raise UserInputError(
            f"overcautious_window must be a non-negative integer number of turns, got {overcautious_window!r}"
        )


def calibration_from_columns(
    per: pd.DataFrame,
    *,
    aggregate: CEAggregate,
    prevalence: Prevalence,
    weights: np.ndarray | None,
    overcautious_window: int,
    resampler: Resampler,
    alpha: float = 0.05,
) -> CalibrationResult:
    """The :class:`CalibrationResult` of a group from its :func:`calibration_trace_columns`.

    ``weights``: the global P(E = k) of the pooled CE (None: the group's own, or trace CE);
    ``resampler`` resamples the rows (its clusters one per row) for CE's CI; the CIs have level
    1 - ``alpha``. When the group's observations are all unlabeled no trace is used (every number
    NaN). The one aggregation behind :func:`answer_calibration` and
    :func:`~seekbench.metrics.summarize_statistics`.
    """
    labeled = evidence_labeled(per)
    tr = per if labeled else per.iloc[:0]  # all traces or none
    c = tr[["n0", "n1", "n2", "a0", "a1", "a2"]].to_numpy(dtype=float)
    per_trace = pd.Series(_trace_ce(c), index=tr.index, name="ce")
    ce = _point_estimate(c, aggregate, weights)
    ci = resampler.subset(np.full(len(per), labeled)).interval(*ce_sums(c, aggregate, weights), alpha=alpha)
    why = "no observation has evidence labels" if len(per) else "no traces"
    if np.isnan(ce):
        _warn("CE", why)

    n_k, a_k = c[:, :3].sum(axis=0), c[:, 3:].sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        answer_rate = np.where(n_k > 0, a_k / np.where(n_k > 0, n_k, 1.0), np.nan)
    w = _state_weights(n_k[None, :], weights)[0]
    answer_table = pd.DataFrame(
        {
            "E": [0, 1, 2],
            "n": n_k.astype(int),
            "answers": a_k.astype(int),
            "answer_rate": answer_rate,
            "ideal": IDEAL_POLICY,
            "prevalence": w,
            "term": w * np.abs(answer_rate - IDEAL_POLICY),
        }
    )

    answered, e_answer, reached, overcautious_i = _companions(tr, overcautious_window=overcautious_window)
    known = ~evidence_unknown(tr["n_obs"].to_numpy(), tr["n_obs_unlabeled"].to_numpy())
    answered_known = answered & known
    n_answered, n_reached, n_known = int(answered_known.sum()), int(reached.sum()), int(known.sum())
    # Means of 0/1 values: exact integer sums over a count, as pandas' means of the same columns.
    n_over, n_caut = int((e_answer[answered_known] < 2).sum()), int(overcautious_i[known].sum())
    overconfident = n_over / n_answered if n_answered else np.nan
    overcautious = n_caut / n_known if n_known else np.nan
    given = float(overcautious_i[reached].mean()) if n_reached else np.nan
    over_ci = wilson_interval(n_over, n_answered, alpha=alpha)
    caut_ci = wilson_interval(n_caut, n_known, alpha=alpha)
    why_known = why if not len(tr) else "E unknown for every trace: no labeled observation"
    if not n_answered:
        _warn("overconfident rate", why_known if not n_known else "no answered trace")
    if not n_known:
        _warn("overcautious rate", why_known)
    acc = _accuracy_by_evidence(e_answer[answered_known], tr["correct"].to_numpy(dtype=float)[answered_known])
    all_unlabeled = evidence_unknown(per["n_obs"].to_numpy(), per["n_obs_unlabeled"].to_numpy())
    return CalibrationResult(
        ce=ce,
        ci=ci,
        aggregate=aggregate,
        prevalence=prevalence,
        decision_points="turn",
        per_trace=per_trace.reindex(per.index),
        answer_table=answer_table,
        overconfident_rate=overconfident,
        overcautious_rate=overcautious,
        overcautious_given_e2=given,
        accuracy_by_evidence=acc,
        n_traces=len(tr),
        n_decision_points=int(c[:, :3].sum()),
        n_answered=n_answered,
        n_reached_e2=n_reached,
        n_traces_all_unlabeled=int(all_unlabeled.sum()),
        overconfident_ci=over_ci,
        overcautious_ci=caut_ci,
    )


def _companions(
    per: pd.DataFrame, *, overcautious_window: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per trace, from its columns: answered, E at the answer turn, reached E = 2 (a first turn
    with E = 2), overcautious (reached and not answered within ``overcautious_window`` turns of it)."""
    answered = per["answered"].to_numpy().astype(bool)
    first_e2 = per["first_e2"].to_numpy(dtype=float)
    reached = ~np.isnan(first_e2)
    late = per["answer_turn"].to_numpy(dtype=float) - first_e2 > overcautious_window  # NaN (never answered) is not late
    return answered, per["e_answer"].to_numpy(dtype=float), reached, reached & (~answered | late)


def companion_values(per: pd.DataFrame, *, overcautious_window: int) -> tuple[np.ndarray, np.ndarray]:
    """Per trace of :func:`calibration_trace_columns` rows: overconfident (1.0 / 0.0, NaN when
    unanswered) and overcautious (1.0 / 0.0), both NaN where the trace's E is unknown (spec
    section 2), whose means are the two companion rates (the values a paired bootstrap of a
    difference of them resamples)."""
    answered, e_answer, _, overcautious = _companions(per, overcautious_window=overcautious_window)
    known = ~evidence_unknown(per["n_obs"].to_numpy(), per["n_obs_unlabeled"].to_numpy())
    over = np.where(answered & known, (e_answer < 2).astype(float), np.nan)
    return over, np.where(known, overcautious.astype(float), np.nan)


def _accuracy_by_evidence(e_answer: np.ndarray, correct: np.ndarray) -> pd.DataFrame:
    """``E, n, n_known, accuracy`` of answered traces by E at the answer (E = 0, 1, 2).

    Correctness is 0 or 1 (NaN unknown), so a state's accuracy is an exact integer count over
    ``n_known``: the mean pandas' grouped mean gives, whatever the order of the sum."""
    known = ~np.isnan(correct)
    rows: dict[str, list[float]] = {"n": [], "n_known": [], "accuracy": []}
    for k in range(3):
        at = e_answer == k
        n_known = int((at & known).sum())
        rows["n"].append(int(at.sum()))
        rows["n_known"].append(n_known)
        rows["accuracy"].append(correct[at & known].sum() / n_known if n_known else np.nan)
    return pd.DataFrame({"E": np.arange(3), **{c: np.asarray(v) for c, v in rows.items()}})


def calibration_error(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    global_prevalence: Sequence[float] | pd.Series | None = None,
    aggregate: CEAggregate = "trace",
    prevalence: Prevalence = "global",
    decision_points: DecisionPoints = "turn",
    **evidence: Unpack[EvidenceKeywords],
) -> float:
    """CE of the answer decision (spec section 5): a float in [0, 1], lower is better.

    See :func:`answer_calibration` for the formula and the options (the same keywords,
    ``evidence_mapping`` and ``evidence_scope`` included); this is its ``ce`` without
    companions or CI. NaN with an ``UndefinedMetricWarning`` when the traces have
    observations and none has evidence labels.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["x", "x"], "pos": [0, 1], "turn": [0, 0],
    ...                       "kind": ["reasoning", "answer"], "clarity": [None, None],
    ...                       "sufficiency": [None, None]})
    >>> traces = pd.DataFrame({"trace_id": ["x"], "answered": [True], "answer_turn": [0.0]})
    >>> calibration_error(steps, traces)  # answered at turn 0 holding E = 0
    1.0
    """
    ev = evidence_keywords("calibration_error", evidence)
    _check(aggregate, prevalence, decision_points, ev["evidence_mapping"], ev["evidence_scope"])
    per = calibration_trace_columns(steps, traces, decision_points, ev)
    weights = _weights(aggregate, prevalence, global_prevalence, per)
    counts = per[["n0", "n1", "n2", "a0", "a1", "a2"]] if evidence_labeled(per) else per.iloc[:0, :6]
    ce = _point_estimate(counts.to_numpy(), aggregate, weights)
    if np.isnan(ce):
        _warn("CE", "no observation has evidence labels" if len(traces) else "no traces")
    return ce
