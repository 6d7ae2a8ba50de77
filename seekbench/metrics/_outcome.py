"""Outcome and efficiency metrics (spec section 6): accuracy, EM/F1, tool use, duplicates, Pass@k."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ._bootstrap import Cluster, check_bootstrap_options
from ._decisions import steps_of
from ._evidence import SEARCH, step_kinds, trace_segments
from ._intervals import wilson_interval


def _warn(what: str, why: str) -> None:
    warnings.warn(f"{what} is undefined ({why}); returning NaN", UndefinedMetricWarning, stacklevel=3)


def _correct(traces: pd.DataFrame) -> pd.Series:
    """``correct`` as 1.0 / 0.0, NaN where unknown."""
    col = traces["correct"]
    if len(col) and pd.api.types.infer_dtype(col, skipna=True) in ("boolean", "empty"):  # as build_tables makes it
        values = col.to_numpy(dtype=object)
        unknown = pd.isna(values)
        out = np.full(len(values), np.nan)
        out[~unknown] = values[~unknown].astype(bool).astype(float)
        return pd.Series(out, index=col.index, name=col.name)
    return col.map(lambda v: np.nan if pd.isna(v) else float(bool(v)))


def accuracy_score(traces: pd.DataFrame) -> float:
    """Answer accuracy: mean of ``correct`` over the traces where it is known (spec section 6).

    ``correct`` is the trace's judged correctness, else exact match (``build_tables``).

    Returns
    -------
    float
        In [0, 1], higher is better; NaN with an ``UndefinedMetricWarning`` when no trace's
        correctness is known.

    Examples
    --------
    >>> accuracy_score(pd.DataFrame({"correct": [True, False, None, True]}))  # 2 / 3 known
    0.6666666666666666
    """
    c = _correct(traces)
    if c.notna().any():
        return float(c.mean())
    _warn("accuracy", "no trace has a known correctness")
    return float("nan")


def _duplicate_share(steps: pd.DataFrame, column: str) -> pd.Series:
    """Per trace with at least one value in ``column`` among its search steps: share repeated.

    A value repeats when an earlier search step of the same trace has it; traces in order of
    first appearance, as a pandas groupby gives them.
    """
    seg = trace_segments(steps)
    per, has = _duplicate_counts(steps, column)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = per[0] / np.where(has, per[1], 1.0)
    return pd.Series(share[has], index=pd.Index(seg.uniques[has], name="trace_id"), name=f"duplicate_{column}")


def _duplicate_counts(steps: pd.DataFrame, column: str) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Per trace (segment order): repeated and all non-empty values of ``column`` on search steps."""
    seg = trace_segments(steps)
    values = steps[column].to_numpy(dtype=object)
    valid = (step_kinds(steps) == SEARCH) & (seg.codes >= 0) & pd.notna(values)
    valid[valid] = values[valid] != ""
    codes = pd.factorize(values[valid])[0].astype(np.int64)
    key = seg.codes[valid] * (int(codes.max()) + 1 if len(codes) else 1) + codes  # (trace, value) as one int
    repeated = np.zeros(len(steps), dtype=bool)
    repeated[np.flatnonzero(valid)] = pd.Series(key).duplicated().to_numpy()
    total = seg.count(valid)
    return (seg.count(repeated).astype(float), total.astype(float)), total > 0


def duplicate_query_rate(steps: pd.DataFrame) -> float:
    """Mean over traces with at least one query of the share of queries repeating an earlier one.

    Per trace: share of its search queries whose normalised text (``query_norm``, SQuAD
    normalisation) equals that of an earlier query of the same trace. In [0, 1), lower is
    better; NaN with an ``UndefinedMetricWarning`` when no trace has a query.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["a"] * 3 + ["b"], "kind": ["search"] * 4,
    ...                       "query_norm": ["x", "y", "x", "z"]})
    >>> duplicate_query_rate(steps)  # (1/3 + 0) / 2
    0.16666666666666666
    """
    return _duplicate_rate(steps, "query_norm", "duplicate-query rate", "no trace has a search query")


def duplicate_visit_rate(steps: pd.DataFrame) -> float:
    """As :func:`duplicate_query_rate`, on visited URLs / document ids (``visit_id``).

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["a", "a"], "kind": ["search"] * 2, "visit_id": ["u", "u"]})
    >>> duplicate_visit_rate(steps)
    0.5
    """
    return _duplicate_rate(steps, "visit_id", "duplicate-visit rate", "no trace visits a URL or document")


def _duplicate_rate(steps: pd.DataFrame, column: str, what: str, why: str) -> float:
    """Mean of :func:`_duplicate_share` over the traces that have one; NaN with a warning when none does."""
    per = _duplicate_share(steps, column)
    if per.empty:
        warnings.warn(f"{what} is undefined ({why}); returning NaN", UndefinedMetricWarning, stacklevel=3)
        return float("nan")
    return float(per.mean())


@dataclass
class OutcomeResult:
    """What :func:`outcome_metrics` computes for one group of traces.

    Attributes
    ----------
    accuracy, accuracy_ci : float, (float, float)
        Mean of ``correct`` over the ``n_known`` traces where it is known, with its Wilson score
        interval (spec section 3).
    em, f1 : float
        Mean exact match and token F1 over the traces with a final answer and gold answers.
    tool_calls : float
        Mean number of tool calls (search steps) per trace.
    searches_before_answer : float
        Mean number of tool calls before the answer step, over answered traces.
    duplicate_query_rate, duplicate_visit_rate : float
        See :func:`duplicate_query_rate`, :func:`duplicate_visit_rate`.
    per_trace : DataFrame
        Indexed by trace id: ``correct, em, f1, tool_calls, searches_before_answer,
        duplicate_query_norm, duplicate_visit_id`` (NaN where undefined).
    """

    accuracy: float
    accuracy_ci: tuple[float, float]
    em: float
    f1: float
    tool_calls: float
    searches_before_answer: float
    duplicate_query_rate: float
    duplicate_visit_rate: float
    n_traces: int
    n_known: int
    n_answered: int
    n_scored: int
    per_trace: pd.DataFrame

    @property
    def summary(self) -> pd.DataFrame:
        """One row per metric: estimate, CI bounds (accuracy only), n."""
        pt = self.per_trace
        rows = {
            "accuracy": (self.accuracy, *self.accuracy_ci, self.n_known),
            "em": (self.em, np.nan, np.nan, self.n_scored),
            "f1": (self.f1, np.nan, np.nan, self.n_scored),
            "tool_calls": (self.tool_calls, np.nan, np.nan, self.n_traces),
            "searches_before_answer": (self.searches_before_answer, np.nan, np.nan, self.n_answered),
            "duplicate_query_rate": (
                self.duplicate_query_rate,
                np.nan,
                np.nan,
                int(pt["duplicate_query_norm"].notna().sum()),
            ),
            "duplicate_visit_rate": (
                self.duplicate_visit_rate,
                np.nan,
                np.nan,
                int(pt["duplicate_visit_id"].notna().sum()),
            ),
        }
        return pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "lower", "upper", "n"])


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if values.notna().any() else float("nan")


def outcome_metrics(
    steps: pd.DataFrame,
    traces: pd.DataFrame,
    *,
    n_boot: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    cluster: Cluster = "trace",
) -> OutcomeResult:
    """Outcome and efficiency metrics of one group of traces (spec section 6).

    accuracy = mean of ``correct`` where known; EM and F1 = means of the trace table's ``em``
    and ``f1`` (SQuAD normalisation, max over gold answers) where defined; tool calls per
    trace = search steps per trace (all traces); searches before answer = search steps
    before the first answer step (answered traces); duplicate rates as in
    :func:`duplicate_query_rate` and :func:`duplicate_visit_rate`.

    Parameters
    ----------
    steps, traces : DataFrame
        Step and trace tables of ``build_tables``; ``traces`` lists the group's traces.
    n_boot, seed, alpha, cluster :
        ``alpha`` sets the level of the accuracy's Wilson score interval (spec section 3: a per-agent
        rate gets the Wilson interval, not the percentile bootstrap); ``n_boot``, ``seed`` and
        ``cluster`` are checked and otherwise unused (a rate's interval needs no resampling).

    Returns
    -------
    OutcomeResult
        Undefined means are NaN with an ``UndefinedMetricWarning``.

    Examples
    --------
    >>> steps = pd.DataFrame({"trace_id": ["a", "a", "a"], "pos": [0, 1, 2],
    ...                       "kind": ["search", "search_result", "answer"],
    ...                       "query_norm": ["q", None, None], "visit_id": [None, None, None]})
    >>> traces = pd.DataFrame({"trace_id": ["a"], "question_id": ["q"], "answered": [True],
    ...                        "answer_pos": [2.0], "correct": [True], "em": [1.0], "f1": [1.0]})
    >>> res = outcome_metrics(steps, traces, n_boot=0)
    >>> res.accuracy, res.tool_calls, res.searches_before_answer
    (1.0, 1.0, 1.0)
    """
    check_bootstrap_options(n_boot, alpha, cluster)
    return outcome_from_columns(outcome_trace_columns(steps, traces), alpha=alpha)


#: Columns of :func:`outcome_trace_columns`.
OUTCOME_COLUMNS = (
    "answered",
    "correct",
    "em",
    "f1",
    "tool_calls",
    "searches_before_answer",
    "duplicate_query_norm",
    "duplicate_visit_id",
)


def outcome_trace_columns(steps: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """Per trace of ``traces`` (indexed by trace id, in its order): :data:`OUTCOME_COLUMNS`.

    ``correct`` 1.0 / 0.0 / NaN; ``tool_calls`` the search steps; ``searches_before_answer``
    those before the answer step (NaN when unanswered); the duplicate shares of
    :func:`duplicate_query_rate` and :func:`duplicate_visit_rate` (NaN without a query or visit).
    """
    ids = pd.Index(traces["trace_id"])
    sub = steps_of(steps, traces)
    seg = trace_segments(sub)
    pos = pd.Index(seg.uniques).get_indexer(ids) if seg.n else np.full(len(ids), -1)
    found = pos >= 0

    def by_trace(per_segment: np.ndarray, missing: float) -> np.ndarray:
        return np.where(found, per_segment[np.maximum(pos, 0)] if seg.n else missing, missing)

    search = step_kinds(sub) == SEARCH
    answer_pos = traces["answer_pos"].to_numpy(dtype=float)
    # Each step's trace answer position (NaN: unanswered, or a trace not in ``traces``).
    at = pd.Index(ids).get_indexer(seg.uniques) if seg.n else np.zeros(0, dtype=np.int64)
    step_answer = np.where(at >= 0, answer_pos[np.maximum(at, 0)], np.nan)[seg.codes] if seg.n else np.zeros(0)
    before = search & (seg.codes >= 0) & (sub["pos"].to_numpy() < step_answer)
    answered = traces["answered"].astype(bool).to_numpy()
    per = pd.DataFrame(index=ids)
    per["answered"] = answered
    per["correct"] = _correct(traces).to_numpy()
    per["em"] = traces["em"].astype(float).to_numpy()
    per["f1"] = traces["f1"].astype(float).to_numpy()
    per["tool_calls"] = by_trace(seg.count(search).astype(float), 0.0)
    per["searches_before_answer"] = np.where(answered, by_trace(seg.count(before).astype(float), 0.0), np.nan)
    for column in ("query_norm", "visit_id"):
        (repeated, total), has = _duplicate_counts(sub, column)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(has, repeated / np.where(has, total, 1.0), np.nan)
        per[f"duplicate_{column}"] = by_trace(share, np.nan)
    return per


def outcome_from_columns(per: pd.DataFrame, *, alpha: float = 0.05) -> OutcomeResult:
    """The :class:`OutcomeResult` of a group from its :func:`outcome_trace_columns`.

    The accuracy is a per-agent rate, so its interval is the Wilson score interval at level
    1 - ``alpha`` over the traces of known correctness (spec section 3): nothing is resampled.
    The one aggregation behind :func:`outcome_metrics` and
    :func:`~seekbench.metrics.summarize_statistics`.
    """
    n_known = int(per["correct"].notna().sum())
    if not n_known:
        _warn("accuracy", "no trace has a known correctness")
    for col, what in (("duplicate_query_norm", "duplicate-query rate"), ("duplicate_visit_id", "duplicate-visit rate")):
        if per[col].isna().all():
            _warn(what, f"no trace has a {'search query' if col == 'duplicate_query_norm' else 'visited URL'}")
    correct = per["correct"].to_numpy(dtype=float)
    ci = wilson_interval(float(np.nansum(correct)), n_known, alpha=alpha)
    return OutcomeResult(
        accuracy=_mean(per["correct"]),
        accuracy_ci=ci,
        em=_mean(per["em"]),
        f1=_mean(per["f1"]),
        tool_calls=_mean(per["tool_calls"]),
        searches_before_answer=_mean(per["searches_before_answer"]),
        duplicate_query_rate=_mean(per["duplicate_query_norm"]),
        duplicate_visit_rate=_mean(per["duplicate_visit_id"]),
        n_traces=len(per),
        n_known=n_known,
        n_answered=int(per["answered"].sum()),
        n_scored=int(per["em"].notna().sum()),
        per_trace=per.drop(columns="answered"),
    )


def _pass_at_k_one(n: int, c: int, k: int) -> float:
    """1 - prod_{i = n-c+1..n} (1 - k / i) for one question with n >= k (1 when n - c < k)."""
    if k == 1:
        return c / n  # the product telescopes to (n - c) / n; exact in this form
    if n - c < k:
        return 1.0  # every k-subset holds a correct run
    i = np.arange(n - c + 1, n + 1, dtype=float)
    return float(1.0 - np.prod(1.0 - k / i))


def pass_at_k(n_runs: int | np.ndarray, n_correct: int | np.ndarray, k: int) -> float | np.ndarray:
    """Unbiased Pass@k of one question from n runs with c correct (spec section 6).

    Pass@k = 1 - C(n - c, k) / C(n, k) for n >= k (n = k: 1 if any run is correct;
    k = 1: c / n, the accuracy over runs): the chance that k runs drawn without
    replacement from the n include a correct one. Computed in the stable product form

        1 - prod_{i = n-c+1}^{n} (1 - k / i),

    never as a ratio of binomials, which overflows for n in the thousands.

    Parameters
    ----------
    n_runs, n_correct : int or array of int
        Runs of the question and how many were correct (0 <= c <= n).
    k : int
        k >= 1.

    Returns
    -------
    float or ndarray
        In [0, 1], higher is better; NaN with an ``UndefinedMetricWarning`` where n < k.

    Examples
    --------
    >>> pass_at_k(5, 2, 1), pass_at_k(5, 2, 2)  # 2/5; 1 - C(3,2)/C(5,2) = 1 - 3/10
    (0.4, 0.7)
    >>> pass_at_k(1040, 1, 520)  # 1 - (1 - 520/1040); the binomial ratio would be inf / inf
    0.5
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise UserInputError(f"k must be an integer >= 1, got {k!r}")
    n = np.asarray(n_runs)
    c = np.asarray(n_correct)
    if (c < 0).any() or (c > n).any():
        raise UserInputError("pass_at_k: need 0 <= n_correct <= n_runs")
    enough = n >= k
    if not enough.all():
        warnings.warn(
            f"Pass@{k} is undefined with fewer than {k} runs; returning NaN", UndefinedMetricWarning, stacklevel=2
        )
    flat_n, flat_c, flat_ok = n.reshape(-1), c.reshape(-1), enough.reshape(-1)
    out = np.array(
        [
            _pass_at_k_one(int(ni), int(ci), int(k)) if ok else np.nan
            for ni, ci, ok in zip(flat_n, flat_c, flat_ok, strict=True)
        ],
        dtype=float,
    ).reshape(n.shape)
    out = np.clip(out, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def pass_at_k_score(traces: pd.DataFrame, *, k: int = 1) -> float:
    """Pass@k of a trace table: mean over questions of :func:`pass_at_k` (spec section 6).

    The runs of a question are the traces sharing ``agent`` and ``question_id``; runs with
    unknown correctness are left out. Questions with fewer than k known runs are left out
    (with an ``UndefinedMetricWarning``); NaN when none is left.

    Examples
    --------
    >>> t = pd.DataFrame({"agent": "x", "question_id": ["q1"] * 3 + ["q2"] * 2,
    ...                   "correct": [True, False, False, False, False]})
    >>> round(pass_at_k_score(t, k=2), 4)  # q1: 1 - C(2,2)/C(3,2) = 2/3; q2: 0
    0.3333
    """
    c = _correct(traces)
    known = traces.assign(_c=c)[c.notna()]
    keys = ["agent", "question_id"] if "agent" in traces.columns else ["question_id"]
    runs = known.groupby(keys, sort=False, dropna=False)["_c"].agg(["size", "sum"])
    if runs.empty:
        _warn(f"Pass@{k}", "no run with known correctness")
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        per = pass_at_k(runs["size"].to_numpy(), runs["sum"].to_numpy(), k)
    per = np.atleast_1d(per)
    if np.isnan(per).any():
        warnings.warn(
            f"Pass@{k}: {int(np.isnan(per).sum())} question(s) have fewer than {k} runs and are left out",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    if np.isnan(per).all():
        return float("nan")
    return float(np.nanmean(per))
