"""Prediction-powered inference of a mean (PPI++ with power tuning), the estimator behind judge-corrected metrics.

A metric that is a mean over traces of a per-trace statistic can be computed from a judge's
labels on every trace (biased by the judge's errors) or from human labels on a few traces
(unbiased, wide). PPI (Angelopoulos et al., Science 2023) adds to the judge's mean the judge's
mean error measured on the human-labeled traces; PPI++ (Angelopoulos, Duchi and Zrnic 2024)
weighs the judge by a power-tuning parameter lambda estimated from the data, so that a poor
judge costs nothing (lambda near 0: the human-only estimate) and a good one narrows the interval.
The formulas are those of the authors' package ``ppi-python`` (``ppi_py.ppi_mean_pointestimate``
and ``ppi_py.ppi_mean_ci`` with ``lam=None``), which the tests check to 1e-10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from .._errors import UserInputError
from ._intervals import wilson_interval
from ._normal_quantile import normal_quantile
from ._options import check_option
from ._resampler import Resampler, check_alpha, percentile_interval

NAN = float("nan")

#: The interval of :func:`ppi_mean`: ``"clt"`` (ppi-python's: normal quantile, variances with ddof 0),
#: ``"t"`` (small samples: Student t quantile with n - 1 degrees of freedom, variances with ddof 1),
#: ``"wilson"`` (0/1 values: the Wilson score interval at the estimate's effective sample size) or
#: ``"wilson-df"`` (the same with Korn and Graubard's degrees-of-freedom adjustment of that size).
Interval = Literal["clt", "t", "wilson", "wilson-df"]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean with its CLT interval (see :func:`ppi_mean`).

    Attributes
    ----------
    value : float
        The estimate (NaN when undefined; ``reason`` says why).
    ci : tuple of float
        The CLT confidence interval ``value -+ z * se``.
    se : float
        Its standard error.
    lam : float
        The power-tuning parameter used, in [0, 1] (0: the human-only mean; 1: plain PPI).
    n_labeled, n_unlabeled : int
        n (human-labeled traces) and N (traces with judge labels only).
    reason : str
        Empty when defined; else why the estimate is NaN, or a note on a degenerate case.
    interval : {"clt", "t", "wilson", "wilson-df"}
        How ``ci`` was made.
    n_eff : float
        For the Wilson intervals, the effective sample size the interval used; else NaN.
    """

    value: float
    ci: tuple[float, float]
    se: float
    lam: float
    n_labeled: int
    n_unlabeled: int
    reason: str = ""
    interval: str = "clt"
    n_eff: float = NAN


def _as_1d(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if not np.isfinite(a).all():
        raise UserInputError(f"ppi_mean: {name} must be finite; drop the traces where the statistic is undefined")
    return a


def power_tuning(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """PPI++'s lambda for a mean, clipped to [0, 1] (``ppi_py.ppi._calc_lam_glm`` for d = 1).

    lambda = [(1/n) sum_i (Y_i - Ybar)(f_i - fbar)] / [(1 + n/N) s_f^2], with s_f^2 the sample
    variance (ddof 1) of the judge's values on all n + N traces. 0 when the judge's values do
    not vary (any lambda then gives the same estimate) and when N = 0 (nothing to impute).
    """
    n, big_n = len(y), len(yhat_unlabeled)
    if big_n == 0 or n == 0:
        return 0.0
    var_f = float(np.var(np.concatenate([yhat, yhat_unlabeled]), ddof=1))
    if not var_f > 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    return float(np.clip(cov / ((1.0 + n / big_n) * var_f), 0.0, 1.0))


def ppi_mean(
    y,
    yhat,
    yhat_unlabeled,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    interval: Interval = "clt",
) -> PPIEstimate:
    """The PPI++ estimate of a mean and its CLT confidence interval.

    With human values Y_i and judge values f_i on the n human-labeled traces, and judge values
    f~_j on the N other traces::

        theta = lambda * mean_j(f~_j) + mean_i(Y_i - lambda * f_i)
        se^2  = lambda^2 * var(f~) / N + var(Y - lambda * f) / n      (var with ddof 0)
        CI    = theta -+ z_(1 - alpha/2) * se                         (normal quantile, not t)

    and lambda from :func:`power_tuning` (clipped to [0, 1]) unless given. With
    ``interval="t"`` both variances have ddof 1 and the quantile is Student's t with n - 1
    degrees of freedom (wider at small n; the default of
    :func:`~seekbench.metrics.corrected_metrics`, whose per-agent n is often under 20). The
    ``"clt"`` estimate and interval are
    ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci`` with ``lam=None`` (their
    lambda is computed around the lambda = 1 estimate, which centring cancels): equal to
    1e-10 (tests/metrics/test_ppi.py). The interval is asymptotic: its coverage needs n large
    enough for the CLT (docs/metrics/ppi.md gives the simulated coverage at n = 20, 40, 80).

    With ``interval="wilson"`` (0/1 values only) the interval is the Wilson score
    interval (Wilson 1927, :func:`~seekbench.metrics.wilson_interval`) of a proportion theta seen
    on n_eff traces, the estimate's effective sample size (the design-effect idea of Kish,
    applied to intervals for proportions by Korn and Graubard 1998)::

        n_eff = theta (1 - theta) / se0^2      (se0^2: the ddof-0 variance above, ppi-python's)
        CI    = Wilson(p = theta, n = n_eff)

    n_eff is the size of a simple random sample whose variance theta (1 - theta) / n equals
    PPI++'s. At lambda = 0, se0^2 = Ybar (1 - Ybar) / n, so n_eff = n and the interval is exactly
    the human values' Wilson interval; whenever PPI++'s variance is below the classical one,
    n_eff > n and the interval is narrower. Unlike theta -+ q se it does not collapse when theta
    nears 0 or 1 (the score interval's reason for being). Guard: when theta is not strictly
    inside (0, 1), or se0 = 0, the ratio says nothing (0 / 0, or a negative n_eff), and
    n_eff = n, the human-labeled traces, with p = theta clipped to [0, 1]: at theta <= 0 the
    interval of 0 of n, [0, z^2 / (n + z^2)]. ``se`` is then the ``"t"`` one (ddof 1), which
    :func:`ppi_difference` uses.

    ``interval="wilson-df"`` (the default of :func:`~seekbench.metrics.corrected_metrics` for
    rates) shrinks n_eff by Korn and Graubard's degrees-of-freedom factor, as the t interval
    widens the normal one for a variance estimated from n labeled traces::

        n_eff_df = n_eff * (z_(1 - alpha/2) / t_(n - 1, 1 - alpha/2))^2

    (at n = 8: 0.69 n_eff). It is wider than ``"wilson"`` and no longer the human-only Wilson
    interval at lambda = 0 (:func:`~seekbench.metrics.corrected_metrics` shows that one then);
    the plain ``"wilson"`` undercovers with 3 to 8 labeled traces (0.918 for a flag at 8 per
    agent, docs/metrics/ppi.md). The guard is the same, without the factor.

    References: E. B. Wilson, "Probable inference, the law of succession, and statistical
    inference", JASA 22 (1927) 209-212; E. L. Korn and B. I. Graubard, "Confidence intervals for
    proportions with small expected number of positive counts estimated from survey data",
    Survey Methodology 24 (1998) 193-201.

    Parameters
    ----------
    y : array of float
        The statistic from human labels on the human-labeled traces.
    yhat : array of float
        The same statistic from the judge's labels on the same traces, in the same order.
    yhat_unlabeled : array of float
        The statistic from the judge's labels on the traces without human labels.
    alpha : float, default 0.05
        The interval's level is 1 - alpha.
    lam : float in [0, 1], optional
        A fixed lambda (1: PPI without power tuning; 0: the classical CLT interval of the human values).
    interval : {"clt", "t", "wilson", "wilson-df"}, default "clt"
        The interval (the estimate and lambda are the same). The Wilson ones need every value of
        ``y``, ``yhat`` and ``yhat_unlabeled`` to be 0 or 1.

    Returns
    -------
    PPIEstimate
        NaN with a reason when n < 2 (no variance to estimate). With N = 0 (every trace
        human-labeled) lambda is 0: the human mean.

    Examples
    --------
    A judge that is right on 4 of 5 labeled traces, and 10 traces it labeled alone:

    >>> est = ppi_mean([1, 0, 1, 1, 0], [1, 0, 1, 1, 1], [1, 1, 0, 1, 0, 1, 1, 0, 1, 1])
    >>> round(est.value, 4), round(est.lam, 4)
    (0.5618, 0.3818)
    """
    check_alpha(alpha)
    check_option("interval", interval, ("clt", "t", "wilson", "wilson-df"))
    y, yhat, yu = _as_1d(y, "y"), _as_1d(yhat, "yhat"), _as_1d(yhat_unlabeled, "yhat_unlabeled")
    if interval.startswith("wilson") and not all(np.isin(a, (0.0, 1.0)).all() for a in (y, yhat, yu)):
        raise UserInputError('ppi_mean: interval="wilson" is for 0/1 values; use "t" for other values')
    if len(y) != len(yhat):
        raise UserInputError(f"ppi_mean: y has {len(y)} values and yhat {len(yhat)}; they pair trace by trace")
    n, big_n = len(y), len(yu)
    if n < 2:
        return PPIEstimate(NAN, (NAN, NAN), NAN, NAN, n, big_n, f"{n} human-labeled trace(s): at least 2 needed")
    if lam is None:
        lam = power_tuning(y, yhat, yu)
    elif not 0.0 <= float(lam) <= 1.0:
        raise UserInputError(f"ppi_mean: lam must be in [0, 1], got {lam!r}")
    lam = float(lam) if big_n else 0.0
    rect = y - lam * yhat
    value = float(rect.mean() + (lam * yu.mean() if big_n else 0.0))
    if interval.startswith("wilson"):
        se = float(np.sqrt(_variance(rect, lam * yu, ddof=1)))
        df = n - 1 if interval == "wilson-df" else None
        ci, n_eff = _wilson_at_n_eff(value, _variance(rect, lam * yu, ddof=0), n, alpha, df=df)
        return PPIEstimate(value, ci, se, lam, n, big_n, "", interval, n_eff)
    se = float(np.sqrt(_variance(rect, lam * yu, ddof=1 if interval == "t" else 0)))
    z = normal_quantile(1.0 - alpha / 2.0) if interval == "clt" else _t_quantile(1.0 - alpha / 2.0, n - 1)
    reason = "" if se > 0 else "zero standard error: every labeled trace gives the same value"
    return PPIEstimate(value, (value - z * se, value + z * se), se, lam, n, big_n, reason, interval)


def _variance(rect: np.ndarray, imputed: np.ndarray, *, ddof: int) -> float:
    """var(Y - lambda f) / n + var(lambda f~) / N (the second term only where N > ddof)."""
    var = float(np.var(rect, ddof=ddof)) / len(rect)
    if len(imputed) > ddof:
        var += float(np.var(imputed, ddof=ddof)) / len(imputed)
    return var


def _wilson_at_n_eff(
    theta: float, var0: float, n: int, alpha: float, *, df: int | None = None
) -> tuple[tuple[float, float], float]:
    """The Wilson interval of theta at n_eff = theta (1 - theta) / var0 (times (z / t_df)^2 with ``df``), and n_eff."""
    if 0.0 < theta < 1.0 and var0 > 0:
        n_eff = theta * (1.0 - theta) / var0
        if df is not None:
            n_eff *= (normal_quantile(1.0 - alpha / 2.0) / _t_quantile(1.0 - alpha / 2.0, df)) ** 2
    else:  # theta at or beyond 0 or 1, or no variance: the ratio is 0 / 0 or negative; the labeled n
        n_eff, theta = float(n), min(max(theta, 0.0), 1.0)
    return wilson_interval(theta * n_eff, n_eff, alpha=alpha), float(n_eff)


def _t_quantile(p: float, df: int) -> float:
    from scipy.special import stdtrit  # here: slow to import; stdtrit is what scipy.stats.t.ppf computes

    return float(stdtrit(df, p))


def ppi_difference(a: PPIEstimate, b: PPIEstimate, *, alpha: float = 0.05) -> tuple[float, tuple[float, float], float]:
    """``(a - b, CI, se)`` of two PPI estimates from disjoint traces (independent samples).

    se = sqrt(se_a^2 + se_b^2); CI = difference -+ q se, q the normal quantile, or for two ``"t"``
    or Wilson estimates (whose ``se`` has ddof 1) Student's t with min(n_a, n_b) - 1
    degrees of freedom (conservative). Unpaired: traces of two agents that
    answer the same question are treated as independent, which ignores any positive
    correlation between them and so errs wide, not narrow.

    Examples
    --------
    >>> a = PPIEstimate(0.6, (0.4, 0.8), 0.1, 0.5, 10, 30)
    >>> b = PPIEstimate(0.5, (0.3, 0.7), 0.1, 0.5, 10, 30)
    >>> d, ci, se = ppi_difference(a, b)
    >>> round(d, 3), round(se, 4)
    (0.1, 0.1414)
    """
    check_alpha(alpha)
    d = a.value - b.value
    se = float(np.hypot(a.se, b.se))
    if a.interval != "clt" and b.interval != "clt":
        z = _t_quantile(1.0 - alpha / 2.0, min(a.n_labeled, b.n_labeled) - 1)
    else:
        z = normal_quantile(1.0 - alpha / 2.0)
    return float(d), (float(d - z * se), float(d + z * se)), se


def ppi_bootstrap_interval(
    y,
    yhat,
    yhat_unlabeled,
    *,
    resampler: Resampler | None = None,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the PPI++ estimate (a check on the CLT interval).

    The labeled and the unlabeled traces are resampled separately (each its own
    :class:`Resampler` draw, the unlabeled with the seed ``[seed, 1]`` for an int seed, a child
    of it otherwise) and lambda is estimated
    again in every resample, from the resampled sums of Y, f, Y f, f^2 (labeled) and f, f^2
    (unlabeled).

    Examples
    --------
    >>> lo, hi = ppi_bootstrap_interval([1, 0, 1, 1, 0], [1, 0, 1, 1, 1], [1, 1, 0, 1, 0, 1, 1, 0, 1, 1],
    ...                                 resampler=Resampler(n_boot=500, seed=0))
    >>> bool(lo < 0.5618 < hi)
    True
    """
    check_alpha(alpha)
    r = resampler if resampler is not None else Resampler()
    y, yhat, yu = _as_1d(y, "y"), _as_1d(yhat, "yhat"), _as_1d(yhat_unlabeled, "yhat_unlabeled")
    n, big_n = len(y), len(yu)
    if n < 2 or r.n_boot == 0:
        return (NAN, NAN)
    lab = r.resampled_sums(np.column_stack([y, yhat, y * yhat, yhat**2]))
    if big_n:
        unl = Resampler(n_boot=r.n_boot, seed=_other_seed(r.seed), method=r.method)
        u = unl.resampled_sums(np.column_stack([yu, yu**2]))
    else:
        u = np.zeros((r.n_boot, 2))
    sy, sf, syf, sff = (lab[:, k] for k in range(4))
    uf, uff = u[:, 0], u[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = syf / n - (sy / n) * (sf / n)
        tot, tot2, m = sf + uf, sff + uff, n + big_n
        var_f = (tot2 - tot**2 / m) / (m - 1)
        lam = np.where(var_f > 0, cov / ((1.0 + n / max(big_n, 1)) * var_f), 0.0) if big_n else np.zeros(len(sy))
        lam = np.clip(np.nan_to_num(lam), 0.0, 1.0)
        theta = (sy - lam * sf) / n + (lam * uf / big_n if big_n else 0.0)
    return percentile_interval(theta, alpha=alpha)


def _other_seed(seed):
    """A second seed, independent of ``seed`` and fixed by it (None stays fresh entropy)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return [int(seed), 1]
    if seed is None:
        return None
    base = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return base.spawn(1)[0]
