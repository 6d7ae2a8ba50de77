"""ERF, the evidence recovery function (spec section 4), as a lifelines-style estimator.

ERF(t) is the cumulative incidence of recovery (first E = 2, or a correct answer)
by time t, with answering without recovery as a competing event and traces cut
off without answering as right-censored. The default estimate is the
Aalen-Johansen estimator computed exactly in discrete time (turns are integers,
so ties are the rule; lifelines' ``AalenJohansenFitter`` would jitter them).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from .._renamed import renamed_attribute
from ._erf_plot import plot_erf
from ._normal_quantile import normal_quantile
from ._options import (
    MAPPING_OPTIONS,
    METHOD_OPTIONS,
    RECOVERY_OPTIONS,
    SCOPE_OPTIONS,
    TIME_OPTIONS,
    EvidenceMapping,
    EvidenceScope,
    Method,
    Recovery,
    TimeScale,
    check_option,
)
from ._recovery_events import check_events, known_events, recovery_events

_CODES = {"recovered": 1, "stopped": 2, "cut_off": 0}


def incidence_from_counts(
    recovered: np.ndarray, stopped: np.ndarray, at_risk: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The discrete Aalen-Johansen estimator from counts at sorted distinct times: ERF and survival.

    The one implementation of the estimator: :class:`EvidenceRecoveryFitter` evaluates it on
    one sample, the bootstrap (:func:`~seekbench.metrics.erf_at_columns`) on B resampled count
    vectors at once. With d1_j recovering, d2_j stopping and n_j at risk at time t_j,

        S(t_j) = prod_{i <= j} (1 - (d1_i + d2_i) / n_i),
        ERF(t_j) = sum_{i <= j} S(t_{i-1}) d1_i / n_i,   S(t_0-) = 1.

    A time with nobody at risk adds nothing.

    Parameters
    ----------
    recovered, stopped, at_risk : ndarray, shape (..., k)
        Counts per time (the last axis), for any number of leading (resample) axes.

    Returns
    -------
    (erf, survival) : ndarrays of shape (..., k)
        ERF in [0, 1] (rounding clipped) and the all-cause survival.

    Examples
    --------
    >>> erf, surv = incidence_from_counts(np.array([1, 1, 0]), np.array([0, 1, 0]), np.array([4, 3, 1]))
    >>> erf.round(4).tolist(), surv.round(4).tolist()  # 1/4, then + (3/4)(1/3)
    ([0.25, 0.5, 0.5], [0.75, 0.25, 0.25])
    """
    recovered = np.asarray(recovered, dtype=float)
    at_risk = np.asarray(at_risk, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(at_risk > 0, at_risk, 1.0)
        surv = np.cumprod(1.0 - (recovered + np.asarray(stopped, dtype=float)) / safe, axis=-1)
        surv_prev = np.concatenate([np.ones_like(surv[..., :1]), surv[..., :-1]], axis=-1)
        erf = np.clip(np.cumsum(surv_prev * recovered / safe, axis=-1), 0.0, 1.0)  # rounding can overshoot 1
    return erf, surv


def _aalen_johansen(durations: np.ndarray, codes: np.ndarray, alpha: float = 0.05) -> pd.DataFrame:
    """Exact Aalen-Johansen cumulative incidence of cause 1 at each distinct time.

    ``codes``: 1 = recovered (the cause of interest), 2 = stopped (competing), 0 = censored.
    At a time where events and censorings tie, the censored traces are still at risk
    (events before censoring). Returns a frame indexed by the sorted distinct times with
    columns ``at_risk, recovered, stopped, cut_off, survival, erf, variance, lower, upper``.

    Variance: the delta-method (Greenwood-type) estimator, with d_j = d1_j + d2_j,

        Var F(t) = sum_{j: t_j <= t} [ (F(t) - F(t_j))^2 d_j / (n_j (n_j - d_j))
                                       + S(t_j-)^2 d1_j (n_j - d1_j) / n_j^3
                                       - 2 (F(t) - F(t_j)) S(t_j-) d1_j / n_j^2 ],

    obtained by the delta method from the multinomial variances of the discrete cause
    hazards d1_j / n_j and d2_j / n_j (Marubini & Valsecchi 1995; Collett 2015, sec. 12.2;
    the same formula as lifelines). The first term is 0 where n_j = d_j (nothing is left
    at risk, so F(t) = F(t_j) for every later t). Bounds use the log(-log) transform,
    F^{exp(+-z se / (F |log F|))}, which keeps them in [0, 1].
    """
    durations = np.asarray(durations, dtype=float)
    codes = np.asarray(codes, dtype=int)
    times, idx = np.unique(durations, return_inverse=True)
    m = len(times)
    d1 = np.bincount(idx[codes == 1], minlength=m).astype(float)
    d2 = np.bincount(idx[codes == 2], minlength=m).astype(float)
    c = np.bincount(idx[codes == 0], minlength=m).astype(float)
    removed = d1 + d2 + c
    n = len(durations) - np.concatenate([[0.0], np.cumsum(removed)[:-1]])
    d = d1 + d2
    f, surv = incidence_from_counts(d1, d2, n)
    surv_prev = np.concatenate([[1.0], surv[:-1]])

    # Var F(t_k) = F_k^2 A_k - 2 F_k B_k + C_k + D_k - 2 (F_k E_k - G_k), with cumulative sums
    # A = sum a, B = sum a F_j, C = sum a F_j^2 (first term), D = sum b (second term),
    # E = sum c, G = sum c F_j (third term); algebraically identical to the formula above.
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(n > d, d / (n * (n - d)), 0.0)
    b = surv_prev**2 * d1 * (n - d1) / n**3
    cc = surv_prev * d1 / n**2
    var = (
        f**2 * np.cumsum(a)
        - 2 * f * np.cumsum(a * f)
        + np.cumsum(a * f**2)
        + np.cumsum(b)
        - 2 * (f * np.cumsum(cc) - np.cumsum(cc * f))
    )
    var = np.maximum(var, 0.0)
    lower, upper = _loglog_bounds(f, var, alpha)
    return pd.DataFrame(
        {
            "at_risk": n,
            "recovered": d1,
            "stopped": d2,
            "cut_off": c,
            "survival": surv,
            "erf": f,
            "variance": var,
            "lower": lower,
            "upper": upper,
        },
        index=times,
    )


def _loglog_bounds(f: np.ndarray, var: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise bounds F^{exp(+-z se/(F |log F|))}; [0, 0] at F = 0 and [1, 1] at F = 1."""
    z = normal_quantile(1 - alpha / 2)
    f = np.asarray(f, dtype=float)
    inner = (f > 1e-15) & (f < 1 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(inner, np.sqrt(var) / (f * np.abs(np.log(np.where(inner, f, 0.5)))), 0.0)
        lower = np.where(inner, f ** np.exp(z * se), np.clip(np.round(f), 0, 1))
        upper = np.where(inner, f ** np.exp(-z * se), np.clip(np.round(f), 0, 1))
    return lower, upper


def _time_grid(durations: np.ndarray) -> np.ndarray:
    """0, 1, ..., max for integer durations; else 0 and the distinct durations."""
    if len(durations) == 0:
        return np.array([0])
    if np.all(durations == np.floor(durations)):
        return np.arange(0, int(durations.max()) + 1)
    return np.union1d([0.0], durations)


def _step_lookup(times: np.ndarray, values: np.ndarray, at: np.ndarray, before: float) -> np.ndarray:
    """Right-continuous step function through (times, values), ``before`` left of times[0]."""
    pos = np.searchsorted(times, at, side="right") - 1
    return np.where(pos >= 0, values[np.clip(pos, 0, None)], before)


class EvidenceRecoveryFitter:
    """Evidence recovery function ERF(t): the share of traces recovered by time t.

    Recovery time T_i is the first turn with evidence state E = 2 or the turn of a
    correct answer, whichever comes first; answering without recovery is a competing
    event and ending without an answer is right-censoring (spec section 4, see
    :func:`recovery_events`). The default estimate is the Aalen-Johansen cumulative
    incidence, computed exactly in discrete time:

        ERF(t) = sum_{u <= t} S(u-) d_rec(u) / n(u),

    with n(u) the traces still at risk at u, d_rec(u) those recovering at u and S the
    all-cause Kaplan-Meier survival (recovered and stopped both end the risk; cut-off
    traces tied at u are still at risk at u). When nothing is cut off this equals the
    paper's raw curve ERF(t) = (1/N) sum_i 1(T_i <= t), kept in ``raw_curve_``.

    Parameters
    ----------
    method : {"aalen_johansen", "km"}, default "aalen_johansen"
        ``"km"`` gives 1 - S(t) from lifelines' Kaplan-Meier with stopped traces treated
        as censored (the paper's wording). It OVERSTATES recovery: it estimates recovery
        in a world where stopping is impossible, and tends to 1 when agents answer early.
        Report it only beside the default.
    recovery, time, evidence_mapping, evidence_scope
        Passed to :func:`recovery_events`.
    alpha : float, default 0.05
        Pointwise confidence bands have level 1 - alpha. Aalen-Johansen: delta-method
        (Greenwood-type) variance with a log(-log) transform (see ``_aalen_johansen``).
        KM: lifelines' exponential Greenwood bounds.
    horizon : float, default 8
        The time at which ``summary`` reports the share recovered.

    Attributes
    ----------
    curve_ : DataFrame
        Indexed by time 0..max duration (index name ``"time"``; turns, or steps with
        ``time="step"``), columns ``erf, lower, upper`` in [0, 1],
        ``erf`` non-decreasing (higher = more traces recovered by then).
    raw_curve_ : Series
        (1/N) sum_i 1(T_i <= t) on the same index.
    events_ : DataFrame
        The :func:`recovery_events` rows that were fitted: those whose E is known (a trace with
        observations and none labeled has an unknown E and is left out, spec section 2).
    n_evidence_unknown_ : int
        The traces left out because their E is unknown.
    event_table_ : DataFrame
        ``at_risk, recovered, stopped, cut_off`` per time.
    median_recovery_turn_ : float
        First t with ERF(t) >= 0.5 (a turn; a step index with ``time="step"``); NaN when it is not
        reached. ``median_recovery_time_`` is its old name (a ``FutureWarning``; removed in the
        next release).
    label_ : str

    Notes
    -----
    With no traces the curve is NaN and an :class:`UndefinedMetricWarning` is issued.
    Durations that are not integers (only through :meth:`fit_events`) give a curve
    indexed by 0 and the distinct durations.

    Examples
    --------
    >>> import pandas as pd
    >>> ev = pd.DataFrame({"duration": [1, 2, 2, 3], "event": ["recovered", "stopped", "recovered", "cut_off"]})
    >>> f = EvidenceRecoveryFitter().fit_events(ev)
    >>> f.curve_["erf"].round(3).tolist()
    [0.0, 0.25, 0.5, 0.5]
    >>> f.recovered_by(10), f.median_recovery_turn_
    (0.5, 2.0)
    """

    def __init__(
        self,
        *,
        method: Method = "aalen_johansen",
        recovery: Recovery = "evidence_or_correct",
        time: TimeScale = "turn",
        evidence_mapping: EvidenceMapping = "sum",
        evidence_scope: EvidenceScope = "cumulative",
        alpha: float = 0.05,
        horizon: float = 8,
    ) -> None:
        check_option("method", method, METHOD_OPTIONS)
        check_option("recovery", recovery, RECOVERY_OPTIONS)
        check_option("time", time, TIME_OPTIONS)
        check_option("evidence_mapping", evidence_mapping, MAPPING_OPTIONS)
        check_option("evidence_scope", evidence_scope, SCOPE_OPTIONS)
        if not 0 < alpha < 1:
            raise UserInputError(f"alpha must be in (0, 1), got {alpha!r}")
        self.method = method
        self.recovery = recovery
        self.time = time
        self.evidence_mapping = evidence_mapping
        self.evidence_scope = evidence_scope
        self.alpha = alpha
        self.horizon = horizon

    def __repr__(self) -> str:
        if not hasattr(self, "curve_"):
            return f"<EvidenceRecoveryFitter(method={self.method!r}), not fitted>"
        return f"<EvidenceRecoveryFitter: {self.label_!r}, method={self.method!r}, {len(self.events_)} traces>"

    def fit(self, steps: pd.DataFrame, traces: pd.DataFrame, *, label: str | None = None) -> EvidenceRecoveryFitter:
        """Fit on one group of traces (the caller splits by agent); returns self.

        Parameters
        ----------
        steps, traces : DataFrame
            Step and trace tables of :func:`seekbench.traces._tables.build_tables`.
        label : str, optional
            Name of the curve; default the agent when ``traces`` holds one, else "all".
        """
        events = recovery_events(
            steps,
            traces,
            recovery=self.recovery,
            time=self.time,
            evidence_mapping=self.evidence_mapping,
            evidence_scope=self.evidence_scope,
        )
        return self.fit_events(events, label=label)

    def fit_events(self, events: pd.DataFrame, *, label: str | None = None) -> EvidenceRecoveryFitter:
        """Fit on a :func:`recovery_events` frame (columns ``duration`` and ``event`` suffice); returns self."""
        check_events(events)
        if label is None:
            agents = events["agent"].unique() if "agent" in events else []
            label = str(agents[0]) if len(agents) == 1 else "all"
        self.label_ = label
        kept = known_events(events)
        self.n_evidence_unknown_ = len(events) - len(kept)
        events = self.events_ = kept
        durations = events["duration"].to_numpy(dtype=float)
        codes = events["event"].map(_CODES).to_numpy(dtype=int)
        grid = _time_grid(durations)
        index = pd.Index(grid, name="time")
        gidx = np.searchsorted(grid, durations)
        counts = {k: np.bincount(gidx[codes == v], minlength=len(grid)) for k, v in _CODES.items()}
        ending = counts["recovered"] + counts["stopped"] + counts["cut_off"]
        at_risk = len(durations) - np.concatenate([[0], np.cumsum(ending)[:-1]])
        self.event_table_ = pd.DataFrame({"at_risk": at_risk, **counts}, index=index)

        if len(durations) == 0:
            warnings.warn(f"ERF of {label!r}: no traces to fit; the curve is NaN", UndefinedMetricWarning, stacklevel=2)
            self.curve_ = pd.DataFrame({"erf": [np.nan], "lower": [np.nan], "upper": [np.nan]}, index=index)
            self.raw_curve_ = pd.Series([np.nan], index=index, name="raw_erf")
            self.median_recovery_turn_ = np.nan
            return self

        rec_times = np.sort(durations[codes == 1])
        raw = np.searchsorted(rec_times, grid, side="right") / len(durations)
        self.raw_curve_ = pd.Series(raw, index=index, name="raw_erf")
        if self.method == "aalen_johansen":
            aj = _aalen_johansen(durations, codes, self.alpha)
            t = aj.index.to_numpy()
            curve = {col: _step_lookup(t, aj[col].to_numpy(), grid, 0.0) for col in ("erf", "lower", "upper")}
        else:
            curve = self._km_curve(durations, codes == 1, grid, label)
        self.curve_ = pd.DataFrame(curve, index=index, columns=["erf", "lower", "upper"])
        reached = np.flatnonzero(self.curve_["erf"].to_numpy() >= 0.5 - 1e-12)
        self.median_recovery_turn_ = float(grid[reached[0]]) if len(reached) else np.nan
        return self

    def _km_curve(self, durations: np.ndarray, observed: np.ndarray, grid: np.ndarray, label: str) -> dict:
        from lifelines import KaplanMeierFitter

        km = KaplanMeierFitter(alpha=self.alpha).fit(durations, event_observed=observed, timeline=grid, label="S")
        s = km.survival_function_["S"].to_numpy()
        ci = km.confidence_interval_
        s_lo = ci.filter(like="_lower_").iloc[:, 0].to_numpy()
        s_hi = ci.filter(like="_upper_").iloc[:, 0].to_numpy()
        erf = 1.0 - s
        lower = np.where(erf > 0, 1.0 - np.nan_to_num(s_hi, nan=1.0), 0.0)
        upper = np.where(erf > 0, 1.0 - np.nan_to_num(s_lo, nan=1.0), 0.0)
        return {"erf": erf, "lower": np.clip(lower, 0, 1), "upper": np.clip(upper, 0, 1)}

    def _check_fitted(self) -> None:
        if not hasattr(self, "curve_"):
            raise UserInputError("this EvidenceRecoveryFitter is not fitted yet; call fit(steps, traces) first")

    @property
    def median_recovery_time_(self) -> float:
        """Deprecated: the old name of :attr:`median_recovery_turn_` (removed in the next release)."""
        return renamed_attribute(self, "median_recovery_time_", "median_recovery_turn_")

    def recovered_by(self, t: float | np.ndarray) -> float | np.ndarray:
        """ERF at time t (a step function; 0 before time 0, the last value beyond the last time).

        Accepts a scalar (returns float) or an array (returns an ndarray).
        """
        self._check_fitted()
        at = np.asarray(t, dtype=float)
        if np.isnan(at).any():
            raise UserInputError("recovered_by: t must be a number, got NaN")
        out = _step_lookup(self.curve_.index.to_numpy(dtype=float), self.curve_["erf"].to_numpy(), at, 0.0)
        return float(out) if out.ndim == 0 else out

    @property
    def summary(self) -> pd.DataFrame:
        """One row (indexed by label): counts, options, ERF at ``horizon`` with CI, raw ERF, median."""
        self._check_fitted()
        ev = self.events_
        h = float(self.horizon)
        at_h = (
            _step_lookup(self.curve_.index.to_numpy(dtype=float), self.curve_.to_numpy(), np.array([h]), 0.0)[0]
            if len(ev)
            else np.full(3, np.nan)
        )
        row = {
            "method": self.method,
            "recovery": self.recovery,
            "time": self.time,
            "evidence_mapping": self.evidence_mapping,
            "evidence_scope": self.evidence_scope,
            "n_traces": len(ev),
            "n_recovered": int((ev["event"] == "recovered").sum()),
            "n_recovered_by_evidence": int((ev.get("via") == "evidence").sum()) if "via" in ev else np.nan,
            "n_recovered_by_answer": int((ev.get("via") == "correct_answer").sum()) if "via" in ev else np.nan,
            "n_stopped": int((ev["event"] == "stopped").sum()),
            "n_cut_off": int((ev["event"] == "cut_off").sum()),
            "n_correct_unknown": int(ev["correct_unknown"].sum()) if "correct_unknown" in ev else 0,
            "n_unlabeled_obs": int(ev["unlabeled_obs"].sum()) if "unlabeled_obs" in ev else 0,
            "n_evidence_unknown": self.n_evidence_unknown_,
            "horizon": h,
            "erf_at_horizon": float(at_h[0]),
            "lower_at_horizon": float(at_h[1]),
            "upper_at_horizon": float(at_h[2]),
            "raw_at_horizon": float(
                _step_lookup(
                    self.raw_curve_.index.to_numpy(dtype=float), self.raw_curve_.to_numpy(), np.array([h]), 0.0
                )[0]
            ),
            "erf_final": float(self.curve_["erf"].iloc[-1]),
            "ever_recovered": float((ev["event"] == "recovered").mean()) if len(ev) else np.nan,
            "median_recovery_turn": self.median_recovery_turn_,
            "median_reached": bool(np.isfinite(self.median_recovery_turn_)),
            "alpha": self.alpha,
        }
        return pd.DataFrame([row], index=pd.Index([self.label_], name="label"))

    def plot(self, ax=None, ci: bool = True, **kw):
        """Step plot of ERF(t) with its pointwise CI band; returns the matplotlib Axes.

        Delegates to :func:`seekbench.metrics._erf_plot.plot_erf` (matplotlib is imported there,
        only when plotting).
        """
        self._check_fitted()
        return plot_erf(self, ax=ax, ci=ci, **kw)
