"""The interval rules of spec section 3: Wilson for rates, Newcombe for a degenerate difference, borderline verdicts.

Expected values come from hand derivations (written out) and from statsmodels, used here only.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench.metrics import (
    bootstrap_ci,
    far_side_share,
    monte_carlo_borderline,
    newcombe_interval,
    wilson_interval,
)

Z = 1.959963984540054  # z_{0.975}


def test_wilson_hand_derived():
    # x = 0, n = 38: the lower bound is 0 and the upper z^2 / (n + z^2) = 3.841459 / 41.841459 = 0.091810
    # (the spec's "0 of 38 does not give [0, 0]: Wilson [0, 0.092]").
    assert wilson_interval(0, 38) == pytest.approx((0.0, Z**2 / (38 + Z**2)), abs=1e-15)
    assert wilson_interval(0, 38)[1] == pytest.approx(0.091810, abs=1e-6)
    # x = n = 40: the mirror image, [n / (n + z^2), 1] = [40 / 43.841459, 1] = [0.912378, 1].
    assert wilson_interval(40, 40) == pytest.approx((40 / (40 + Z**2), 1.0), abs=1e-15)
    # x = 3, n = 10, z^2 = 3.8414588: centre (0.3 + z^2/20) / (1 + z^2/10) = 0.4920729 / 1.3841459 = 0.355507;
    # half = (z / 1.3841459) sqrt(0.021 + z^2/400) = 1.416009 * 0.174939 = 0.247716 -> [0.107791, 0.603222].
    assert wilson_interval(3, 10) == pytest.approx((0.107791, 0.603222), abs=2e-6)
    assert math.isnan(wilson_interval(0, 0)[0])


@settings(deadline=None)  # the first example imports statsmodels
@given(
    st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.sampled_from([0.01, 0.05, 0.1])
)
def test_wilson_equals_statsmodels(xn, alpha):
    from statsmodels.stats.proportion import proportion_confint

    x, n = xn
    lo, hi = wilson_interval(x, n, alpha=alpha)
    ref = proportion_confint(x, n, alpha=alpha, method="wilson")
    assert (lo, hi) == pytest.approx(ref, abs=1e-12)
    assert 0.0 <= lo <= x / n <= hi <= 1.0 and hi > lo


def test_newcombe_hand_derived():
    # Both at 0 (n = 38 and 40): d = 0, lower = -sqrt(0 + u_b^2) = -u_b, upper = u_a, with u = z^2 / (n + z^2):
    # [-3.841459 / 43.841459, 3.841459 / 41.841459] = [-0.087622, 0.091810].
    lo, hi = newcombe_interval(0, 38, 0, 40)
    assert (lo, hi) == pytest.approx((-(Z**2) / (40 + Z**2), Z**2 / (38 + Z**2)), abs=1e-15)
    # 3 of 10 vs 0 of 10: d = 0.3, Wilson(3, 10) = [0.107791, 0.603222], Wilson(0, 10) = [0, 0.277530];
    # lower = 0.3 - sqrt(0.192209^2 + 0.277530^2) = 0.3 - 0.337590 = -0.037590,
    # upper = 0.3 + sqrt(0.303222^2 + 0) = 0.603222.
    assert newcombe_interval(3, 10, 0, 10) == pytest.approx((-0.037590, 0.603222), abs=3e-6)


@settings(deadline=None)
@given(st.integers(1, 200), st.integers(1, 200), st.data())
def test_newcombe_equals_statsmodels(n_a, n_b, data):
    from statsmodels.stats.proportion import confint_proportions_2indep

    x_a, x_b = data.draw(st.integers(0, n_a)), data.draw(st.integers(0, n_b))
    ref = confint_proportions_2indep(x_a, n_a, x_b, n_b, method="newcomb", compare="diff")
    assert newcombe_interval(x_a, n_a, x_b, n_b) == pytest.approx(ref, abs=1e-10)
    lo, hi = newcombe_interval(x_a, n_a, x_b, n_b)
    assert newcombe_interval(x_b, n_b, x_a, n_a) == pytest.approx((-hi, -lo), abs=1e-15)


def test_far_side_share_and_borderline_hand_derived():
    # 1000 draws, 27 at or below 0: p = 0.027, 2 SE = 2 sqrt(0.027 * 0.973 / 1000) = 0.010251 > |0.027 - 0.025|.
    draws = np.r_[np.full(27, -0.1), np.zeros(0), np.full(973, 0.2)]
    assert far_side_share(draws) == pytest.approx(0.027)
    assert monte_carlo_borderline(0.027, 1000)
    # p = 0.010 of 2000: 2 SE = 0.00445 < 0.015: not borderline (clear whatever the seed); p = 0: never.
    assert not monte_carlo_borderline(0.010, 2000) and not monte_carlo_borderline(0.0, 2000)
    # p = 0.040 of 2000: 2 SE = 0.00876 < 0.015: not borderline (not clear whatever the seed).
    assert not monte_carlo_borderline(0.040, 2000)
    # A draw at 0 counts on the far side of either sign (it does not exclude 0); NaN draws are left out.
    assert far_side_share(np.array([0.0, 1.0, 2.0, np.nan])) == pytest.approx(1 / 3)
    assert far_side_share(np.array([-1.0, -2.0, -3.0, 4.0])) == pytest.approx(1 / 4)


def test_wilson_covers_at_the_boundary_where_the_bootstrap_does_not():
    # Monte Carlo coverage with a known generator: n = 38 traces, true rate 0.01, 2000 replicates (seed 0).
    # Wilson's 95% interval covers 0.01 in at least 93% of them. The percentile bootstrap cannot do better
    # than P(x >= 1) = 1 - 0.99^38 = 0.317: at x = 0 every resample is 0 and its interval is [0, 0].
    n, p, reps = 38, 0.01, 2000
    x = np.random.default_rng(0).binomial(n, p, size=reps)
    wilson = np.array([wilson_interval(k, n) for k in range(n + 1)])  # the interval depends on x only
    covered = (wilson[x, 0] <= p) & (p <= wilson[x, 1])
    assert covered.mean() >= 0.93
    boot = {}
    for k in np.unique(x):  # the percentile interval of x successes of n (one seed per x: up to the seed)
        boot[k] = bootstrap_ci(np.r_[np.ones(k), np.zeros(n - k)], n_boot=500, seed=1)
    boot_cov = np.mean([boot[k][0] <= p <= boot[k][1] for k in x])
    assert boot[0] == (0.0, 0.0)
    assert boot_cov <= 1 - 0.99**38 + 0.03 and boot_cov < covered.mean() - 0.5  # about 0.32 against 0.94
