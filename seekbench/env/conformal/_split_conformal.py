"""Split conformal calibration of completeness estimates, and the stopping rule it licenses (spec section 8).

Nonconformity of a calibration state: e = |c - c_hat|. With n calibration
scores and miscoverage alpha, q_hat is the k-th smallest score,
k = ceil((n + 1)(1 - alpha)), and q_hat = 1 when k > n (completeness lives in
[0, 1], so a half-width of 1 is the trivial interval). The interval
[c_hat - q_hat, c_hat + q_hat] clipped to [0, 1] then covers a new
exchangeable state's c with probability >= 1 - alpha (and < 1 - alpha +
1 / (n + 1) when scores have no ties). Stopping rule: stop when
c_hat - q_hat >= delta, i.e. when the interval's lower end reaches delta.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._errors import SeekbenchWarning, UserInputError


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise UserInputError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return float(alpha)


def conformal_rank(n: int, alpha: float) -> int:
    """k = ceil((n + 1)(1 - alpha)), the rank of q_hat among n calibration scores.

    Computed with a small tolerance so that, e.g., (19 + 1)(1 - 0.1) = 18 is not
    rounded up to 19 by floating point.

    >>> conformal_rank(19, 0.1)
    18
    >>> conformal_rank(5, 0.1)
    6
    """
    alpha = _check_alpha(alpha)
    return math.ceil((n + 1) * (1 - alpha) - 1e-9)


def conformal_quantile(scores, alpha: float = 0.1) -> float | np.ndarray:
    """q_hat: the k-th smallest nonconformity score, k = ceil((n + 1)(1 - alpha)); 1 if k > n.

    Spec section 8. Vectorised over leading axes: ``scores`` of shape
    (..., n) gives q_hat of shape (...).

    Parameters
    ----------
    scores : array-like, shape (..., n)
        Nonconformity scores e = |c - c_hat| of the calibration set (no NaN).
    alpha : float, default 0.1
        Target miscoverage, 0 < alpha < 1.

    Returns
    -------
    float or ndarray
        q_hat in [0, 1] for scores in [0, 1]; smaller is a tighter interval.
        With n = 0 (or k > n) the trivial 1.0.

    Examples
    --------
    >>> conformal_quantile(np.arange(1, 20) / 100, 0.1)   # n = 19: k = 18
    0.18
    >>> conformal_quantile([0.1, 0.2], 0.1)               # k = 3 > n = 2
    1.0
    """
    arr = np.asarray(scores, dtype=float)
    if arr.ndim == 0:
        raise UserInputError("scores must be a 1-D array (one score per calibration state)")
    if np.isnan(arr).any():
        raise UserInputError("nonconformity scores contain NaN; drop unscored states first")
    n = arr.shape[-1]
    k = conformal_rank(n, alpha)
    if k > n or n == 0:
        out = np.ones(arr.shape[:-1])
    else:
        out = np.partition(arr, k - 1, axis=-1)[..., k - 1]
    return float(out) if out.ndim == 0 else out


def nonconformity(c, c_hat) -> np.ndarray:
    """e = |c - c_hat| (absolute residual)."""
    return np.abs(np.asarray(c, dtype=float) - np.asarray(c_hat, dtype=float))


def conformal_interval(c_hat, q_hat) -> tuple[np.ndarray, np.ndarray]:
    """[c_hat - q_hat, c_hat + q_hat] clipped to [0, 1]; returns (lower, upper)."""
    c_hat = np.asarray(c_hat, dtype=float)
    q = np.asarray(q_hat, dtype=float)
    return np.clip(c_hat - q, 0.0, 1.0), np.clip(c_hat + q, 0.0, 1.0)


@dataclass
class SplitConformal:
    """Split conformal calibration of a completeness estimator.

    Parameters
    ----------
    alpha : float, default 0.1
        Target miscoverage; intervals aim at 1 - alpha coverage.

    Attributes
    ----------
    q_hat_ : float
        Half-width from :func:`conformal_quantile`.
    scores_ : ndarray
        Calibration nonconformity scores.
    n_ : int
        Calibration size.

    Examples
    --------
    >>> sc = SplitConformal(alpha=0.1).fit([0.2, 0.5, 0.9] * 7, [0.3, 0.5, 0.7] * 7)
    >>> round(sc.q_hat_, 2), sc.n_
    (0.2, 21)
    """

    alpha: float = 0.1

    def fit(self, c, c_hat) -> SplitConformal:
        """Compute q_hat from calibration completeness ``c`` and estimates ``c_hat``; return self."""
        self.scores_ = nonconformity(c, c_hat)
        self.n_ = int(self.scores_.size)
        self.q_hat_ = float(conformal_quantile(self.scores_, self.alpha))
        return self

    def covers(self, c, c_hat) -> np.ndarray:
        """Whether each true c lies in its interval (|c - c_hat| <= q_hat)."""
        return nonconformity(c, c_hat) <= self.q_hat_ + 1e-12

    def should_stop(self, c_hat, delta: float) -> np.ndarray:
        """The stopping rule: c_hat - q_hat >= delta."""
        return np.asarray(c_hat, dtype=float) - self.q_hat_ >= delta


# -- the stopping rule on episodes ---------------------------------------------------------------------------

STOP_COLUMNS = [
    "trace_id",
    "agent",
    "belief",
    "document",
    "q_hat",
    "delta",
    "n_steps",
    "stopped",
    "stop_step",
    "completeness_at_stop",
    "final_completeness",
    "steps_saved",
    "completeness_lost",
    "n_decisions",
]


def _episode_decisions(trace: dict) -> tuple[int, list[tuple[int, float, float]], float] | None:
    """(M, decisions, final completeness) of an episode; a decision is (t, c_{t-1}, c_hat_t).

    The seeking environment records, per env step t = 1..M, the agent's
    estimate c_hat_t of the completeness of the belief it was shown at the
    start of t, i.e. of c_{t-1}. Read from ``metadata.completeness_curve``
    (c_0..c_M) and ``metadata.self_estimates`` (one per step, null allowed)
    when both are there; otherwise from the steps: each step carrying a
    ``self_estimate`` opens env step t (t counting such steps) and its
    ``completeness`` (else the latest one before it, else 0) is c_{t-1};
    M = ``env.max_steps`` (at least the number of estimates).
    Returns None when the trace has no completeness at all.
    """
    env: dict = trace.get("env") or {}
    meta: dict = trace.get("metadata") or {}
    curve, ests = meta.get("completeness_curve"), meta.get("self_estimates")
    if isinstance(curve, list) and isinstance(ests, list) and len(curve) == len(ests) + 1 and curve:
        decisions = [(t, float(curve[t - 1]), float(e)) for t, e in enumerate(ests, start=1) if e is not None]
        final = env["final_completeness"] if "final_completeness" in env else curve[-1]
        return len(ests), decisions, float(final)
    decisions, latest, seen_any = [], 0.0, False
    for step in trace.get("steps") or []:
        if step.get("completeness") is not None:
            latest, seen_any = float(step["completeness"]), True
        if step.get("self_estimate") is not None:
            decisions.append((len(decisions) + 1, latest, float(step["self_estimate"])))
    final = env.get("final_completeness")
    if final is None and not seen_any:
        return None
    n_steps = max(int(env.get("max_steps") or 0), len(decisions))
    return n_steps, decisions, float(final if final is not None else latest)


def evaluate_stopping(
    traces: Iterable[dict], q_hat: float | Mapping[str, float], *, delta: float = 0.5
) -> pd.DataFrame:
    """Apply the stopping rule c_hat - q_hat >= delta to episodes with per-step self-estimates.

    At the start of env step t the agent holds a belief of true completeness
    c_{t-1} and estimates it as c_hat_t. It stops at the first t with
    c_hat_t - q_hat >= delta, before step t's queries: completeness at stop
    is c_{t-1} (the value the interval is about), steps saved = M - t + 1,
    completeness lost = c_M - c_{t-1}. An episode that never meets the rule
    runs all M steps (stopped = False, steps saved 0, stop step M + 1).

    Parameters
    ----------
    traces : iterable of dict
        Canonical traces from the seeking environment (``env``, per-step
        ``completeness`` and ``self_estimate``; see :func:`_episode_decisions`).
        Traces without any completeness are skipped with a :class:`SeekbenchWarning`.
    q_hat : float or mapping agent -> float
        Calibrated half-width; a mapping gives each agent its own (agents
        missing from it are skipped with a warning).
    delta : float, default 0.5
        Completeness the lower interval end must reach, 0 <= delta <= 1.

    Returns
    -------
    DataFrame
        One row per episode, columns :data:`STOP_COLUMNS`.
    """
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta <= 1:
        raise UserInputError(f"delta must be a number in [0, 1], got {delta!r}")
    rows, no_path, no_q = [], 0, set()
    for tr in traces:
        parsed = _episode_decisions(tr)
        if parsed is None:
            no_path += 1
            continue
        n_steps, decisions, final = parsed
        agent = tr.get("agent")
        if isinstance(q_hat, Mapping):
            q = q_hat.get(agent) if isinstance(agent, str) else None  # the mapping is keyed by agent name
        else:
            q = float(q_hat)
        if q is None:
            no_q.add(agent)
            continue
        env = tr.get("env") or {}
        stop = next(((t, c) for t, c, e in decisions if e - q >= delta), None)
        t_stop, c_stop = (n_steps + 1, final) if stop is None else stop
        rows.append(
            {
                "trace_id": tr.get("trace_id"),
                "agent": agent,
                "belief": env.get("belief"),
                "document": env.get("document_id"),
                "q_hat": q,
                "delta": float(delta),
                "n_steps": n_steps,
                "stopped": stop is not None,
                "stop_step": t_stop,
                "completeness_at_stop": c_stop,
                "final_completeness": final,
                "steps_saved": n_steps - t_stop + 1,
                "completeness_lost": final - c_stop,
                "n_decisions": len(decisions),
            }
        )
    if no_path:
        warnings.warn(
            f"{no_path} trace(s) carry no per-step completeness and were left out of the stopping "
            "rule (run them in the seeking environment: `seekbench env run`)",
            SeekbenchWarning,
            stacklevel=2,
        )
    if no_q:
        warnings.warn(
            f"no q_hat for agent(s) {', '.join(sorted(map(str, no_q)))}; their episodes were left "
            "out of the stopping rule",
            SeekbenchWarning,
            stacklevel=2,
        )
    return pd.DataFrame(rows, columns=STOP_COLUMNS)


def summarize_stopping(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per (agent, belief): episodes, share stopped, mean completeness at stop and final, steps saved.

    ``stop_valid`` is the share of stopped episodes whose true completeness at
    the stop was >= delta (what the rule promises with probability about
    1 - alpha per decision when the estimator is calibrated on the agent's states).
    """
    cols = [
        "agent",
        "belief",
        "n_episodes",
        "stopped_share",
        "completeness_at_stop",
        "final_completeness",
        "steps_saved",
        "completeness_lost",
        "stop_valid",
    ]
    if episodes.empty:
        return pd.DataFrame(columns=cols)
    ep = episodes.assign(
        belief=episodes["belief"].fillna("n/a"),
        valid=np.where(episodes["stopped"], episodes["completeness_at_stop"] >= episodes["delta"], np.nan),
    )
    g = ep.groupby(["agent", "belief"], sort=True, dropna=False)
    out = pd.DataFrame(
        {
            "n_episodes": g.size(),
            "stopped_share": g["stopped"].mean(),
            "completeness_at_stop": g["completeness_at_stop"].mean(),
            "final_completeness": g["final_completeness"].mean(),
            "steps_saved": g["steps_saved"].mean(),
            "completeness_lost": g["completeness_lost"].mean(),
            "stop_valid": g["valid"].mean(),
        }
    ).reset_index()
    return out[cols]
