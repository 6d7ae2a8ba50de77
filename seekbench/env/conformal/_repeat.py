"""One repeat of the conformal evaluation: an estimator's q_hat on the calibration half, and on the test
half its coverage (with a Clopper-Pearson CI), interval width, R^2 and coverage per completeness bin.

:func:`seekbench.env.conformal.evaluate_conformal` runs it for every split, seed and estimator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._split_conformal import conformal_interval, conformal_quantile, nonconformity


def clopper_pearson(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial CI for k successes in n trials.

    lower = Beta^{-1}(a / 2; k, n - k + 1) (0 when k = 0),
    upper = Beta^{-1}(1 - a / 2; k + 1, n - k) (1 when k = n), a = 1 - confidence.
    Returns (nan, nan) for n = 0.

    Examples
    --------
    >>> [round(x, 4) for x in clopper_pearson(9, 10)]
    [0.555, 0.9975]
    """
    from scipy.stats import beta

    if n <= 0:
        return float("nan"), float("nan")
    a = 1.0 - confidence
    lo = 0.0 if k <= 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k >= n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def _r2(c: np.ndarray, c_hat: np.ndarray) -> float:
    ss_tot = float(np.sum((c - c.mean()) ** 2)) if c.size else 0.0
    return float("nan") if c.size < 2 or ss_tot == 0 else 1.0 - float(np.sum((c - c_hat) ** 2)) / ss_tot


@dataclass(frozen=True)
class States:
    """The states evaluated, in the table's order: ids, documents, true completeness c, and the
    equal-width bin of c each falls in (for conditional coverage)."""

    sid: np.ndarray
    docs: np.ndarray
    c: np.ndarray
    bin_idx: np.ndarray
    bin_labels: list[str]

    @classmethod
    def of(cls, table: pd.DataFrame, n_bins: int) -> States:
        """From a table with ``state_id, doc_id, true_completeness``, with ``n_bins`` bins of [0, 1]."""
        c = table["true_completeness"].to_numpy(dtype=float)
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        return cls(
            sid=table["state_id"].to_numpy(),
            docs=table["doc_id"].to_numpy(),
            c=c,
            bin_idx=np.clip(np.searchsorted(edges, c, side="left") - 1, 0, n_bins - 1),
            bin_labels=[f"{edges[i]:.2f}-{edges[i + 1]:.2f}" for i in range(n_bins)],
        )


@dataclass(frozen=True)
class Repeat:
    """One estimator on one calibration/test split: the summary ``row``, the per-bin ``bins`` rows, the
    calibration ``scores``, and what :meth:`states_frame` lists per test state."""

    row: dict
    bins: list[dict]
    scores: np.ndarray
    states: States
    test: np.ndarray  # the test half's rows with an estimate
    c_hat: np.ndarray
    interval: tuple[np.ndarray, np.ndarray]
    covered: np.ndarray

    def states_frame(self, name: str) -> pd.DataFrame:
        """Per test state: its estimate, interval and whether it covers the true completeness."""
        t, st = self.test, self.states
        return pd.DataFrame(
            {
                "estimator": name,
                "state_id": st.sid[t],
                "doc_id": st.docs[t],
                "true_completeness": st.c[t],
                "c_hat": self.c_hat[t],
                "lower": self.interval[0],
                "upper": self.interval[1],
                "covered": self.covered,
                "q_hat": self.row["q_hat"],
            }
        )


def evaluate_repeat(states: States, c_hat: np.ndarray, cal: np.ndarray, *, alpha: float, confidence: float) -> Repeat:
    """Calibrate on the rows of ``cal`` and test on the others (rows without an estimate left out of both)."""
    c = states.c
    ok = np.isfinite(c_hat)
    cal_i, test_i = cal & ok, ~cal & ok
    scores = nonconformity(c[cal_i], c_hat[cal_i])
    q = float(conformal_quantile(scores, alpha))
    e_test = nonconformity(c[test_i], c_hat[test_i])
    covered = e_test <= q + 1e-12
    lo, hi = conformal_interval(c_hat[test_i], q)
    n_test = int(test_i.sum())
    ci = clopper_pearson(int(covered.sum()), n_test, confidence=confidence)
    row = {
        "n_cal": int(cal_i.sum()),
        "n_test": n_test,
        "q_hat": q,
        "coverage": covered.mean() if n_test else np.nan,
        "coverage_ci_lower": ci[0],
        "coverage_ci_upper": ci[1],
        "width": float(np.mean(hi - lo)) if n_test else np.nan,
        "r2": _r2(c[test_i], c_hat[test_i]),
    }
    b = states.bin_idx[test_i]
    bins = []
    for i, label in enumerate(states.bin_labels):
        m = b == i
        bins.append({"bin": label, "n": int(m.sum()), "coverage": covered[m].mean() if m.any() else np.nan})
    return Repeat(row, bins, scores, states, test_i, c_hat, (lo, hi), covered)
