"""Score intervals for rates and their differences, and the Monte Carlo error of a bootstrap verdict.

The rules for every interval (spec section 3): a per-agent *rate* (accuracy, the overconfident
and overcautious rates, a flag's share) gets the Wilson score interval over its n traces, which
stays honest at 0 and 1 where the percentile bootstrap collapses to [0, 0] or [1, 1]; a difference
whose paired bootstrap is degenerate (every draw the same value) gets Newcombe's hybrid score
interval; and a verdict whose bootstrap bound lies within Monte Carlo error of 0 is borderline.
"""

from __future__ import annotations

import math

import numpy as np

from ._normal_quantile import normal_quantile


def wilson_interval(successes: float, n: float, *, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (Wilson 1927).

    With p = x / n and z = z_{1 - alpha/2}:

        centre = (p + z^2 / (2n)) / (1 + z^2 / n),
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2)),
        [centre - half, centre + half].

    It is the set of p0 that a score test of H0: p = p0 does not reject, so it never collapses
    to a point: at x = 0 it is [0, z^2 / (n + z^2)] (0 of 38 at 95%: [0, 0.0918]), at x = n
    [n / (n + z^2), 1]. Spec section 3, "Rules for every interval".

    Parameters
    ----------
    successes : float
        x, the number of traces where the rate's event holds (0 <= x <= n; a whole number).
    n : float
        The rate's denominator (traces).
    alpha : float
        1 - confidence level.

    Returns
    -------
    (lower, upper) : tuple of float in [0, 1]
        ``(nan, nan)`` when n = 0 (the rate is undefined).

    Examples
    --------
    >>> lo, hi = wilson_interval(0, 38)
    >>> lo, round(hi, 4)  # 1.96^2 / (38 + 1.96^2)
    (0.0, 0.0918)
    >>> [round(v, 4) for v in wilson_interval(19, 38)]  # centred at 1/2
    [0.3485, 0.6515]
    """
    if n <= 0:
        return (float("nan"), float("nan"))
    z = normal_quantile(1.0 - alpha / 2.0)
    z2 = z * z
    p = successes / n
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z / denom * math.sqrt(max(p * (1.0 - p) / n + z2 / (4.0 * n * n), 0.0))
    lower = 0.0 if successes <= 0 else max(0.0, centre - half)
    upper = 1.0 if successes >= n else min(1.0, centre + half)
    return (float(lower), float(upper))


def newcombe_interval(
    successes_a: float, n_a: float, successes_b: float, n_b: float, *, alpha: float = 0.05
) -> tuple[float, float]:
    """Newcombe's hybrid score interval of the difference p_a - p_b (Newcombe 1998, method 10).

    With the Wilson intervals [l_a, u_a] of p_a and [l_b, u_b] of p_b (:func:`wilson_interval`)
    and d = p_a - p_b:

        lower = d - sqrt((p_a - l_a)^2 + (u_b - p_b)^2),
        upper = d + sqrt((u_a - p_a)^2 + (p_b - l_b)^2).

    Seekbench uses it where the paired bootstrap of a difference of rates is degenerate (every
    draw the same value, both rates at 0 or both at 1), spec section 3. Newcombe's interval for
    *paired* proportions (Newcombe 1998, Stat. Med. 17:2635, method 10) adds a correlation term phi
    to the two squared distances; when both rates are at 0 (or both at 1) every pair is
    concordant, phi is 0/0 and Newcombe sets it to 0, so the paired interval is this one.

    Parameters
    ----------
    successes_a, n_a, successes_b, n_b : float
        Each rate's count and denominator.
    alpha : float
        1 - confidence level.

    Returns
    -------
    (lower, upper) : tuple of float in [-1, 1]
        ``(nan, nan)`` when either denominator is 0.

    Examples
    --------
    >>> lo, hi = newcombe_interval(0, 38, 0, 40)  # both at 0: [-u_b, u_a]
    >>> round(lo, 4), round(hi, 4)  # -(1.96^2 / (40 + 1.96^2)), 1.96^2 / (38 + 1.96^2)
    (-0.0876, 0.0918)
    """
    if n_a <= 0 or n_b <= 0:
        return (float("nan"), float("nan"))
    pa, pb = successes_a / n_a, successes_b / n_b
    la, ua = wilson_interval(successes_a, n_a, alpha=alpha)
    lb, ub = wilson_interval(successes_b, n_b, alpha=alpha)
    d = pa - pb
    lower = d - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    upper = d + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    return (float(max(-1.0, lower)), float(min(1.0, upper)))


def far_side_share(draws: np.ndarray, *, tie: float = 1e-12) -> float:
    """Share of bootstrap draws of a difference on the far side of 0: min(P(d <= 0), P(d >= 0)).

    A draw within ``tie`` of 0 counts as 0 (it does not exclude 0). The percentile CI excludes 0
    exactly when this share is below alpha/2 (up to the interpolation between order statistics).
    NaN draws (undefined resamples) are left out, as the percentile interval leaves them; NaN when
    none is finite.

    Examples
    --------
    >>> far_side_share(np.array([-0.1, 0.0, 0.2, 0.3]))  # 2 of 4 at or below 0, 3 at or above
    0.5
    """
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if not d.size:
        return float("nan")
    return float(min(np.mean(d <= tie), np.mean(d >= -tie)))


def monte_carlo_borderline(share: float, n_draws: int, *, alpha: float = 0.05) -> bool:
    """Whether a bootstrap verdict is within Monte Carlo error of flipping (spec section 3).

    Borderline when the share p of draws on the far side of 0 (:func:`far_side_share`) is within
    2 standard errors of alpha/2, the standard error being sqrt(p (1 - p) / B) with B the number of
    draws: |p - alpha/2| <= 2 sqrt(p (1 - p) / B). The spec leaves open whose p the standard error
    uses; here it is the observed share (so a bootstrap with no draw across 0, p = 0, is never
    borderline: no seed puts a bound across 0 that none of B draws reached).

    Examples
    --------
    >>> monte_carlo_borderline(0.027, 2000)  # 2 SE = 0.0072
    True
    >>> monte_carlo_borderline(0.010, 2000), monte_carlo_borderline(0.0, 2000)
    (False, False)
    """
    if not n_draws or not np.isfinite(share):
        return False
    se = math.sqrt(share * (1.0 - share) / n_draws)
    return bool(abs(share - alpha / 2.0) <= 2.0 * se)
