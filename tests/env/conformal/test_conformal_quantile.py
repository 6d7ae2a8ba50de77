"""q_hat as an order statistic, intervals, and the coverage guarantee by Monte Carlo."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench import UserInputError
from seekbench.env.conformal import (
    SplitConformal,
    conformal_interval,
    conformal_quantile,
    conformal_rank,
    evaluate_conformal,
)


def test_q_hat_hand_n19_alpha01_is_18th_smallest():
    # k = ceil((19 + 1) * (1 - 0.1)) = ceil(18) = 18 -> the 18th smallest of 19 scores.
    scores = np.array([0.31, 0.02, 0.77, 0.15, 0.64, 0.09, 0.48, 0.90, 0.26, 0.53,
                       0.11, 0.38, 0.70, 0.05, 0.84, 0.44, 0.19, 0.59, 0.33])
    assert conformal_rank(19, 0.1) == 18
    assert conformal_quantile(scores, 0.1) == np.sort(scores)[17] == 0.84
    # order does not matter
    assert conformal_quantile(scores[::-1], 0.1) == 0.84


def test_q_hat_is_one_when_k_exceeds_n():
    # n = 8, alpha = 0.1: k = ceil(9 * 0.9) = ceil(8.1) = 9 > 8 -> trivial interval.
    assert conformal_rank(8, 0.1) == 9
    assert conformal_quantile(np.full(8, 0.01), 0.1) == 1.0
    # n = 9: k = ceil(10 * 0.9) = 9 = n -> the largest score.
    assert conformal_quantile(np.arange(1, 10) / 100, 0.1) == 0.09
    assert conformal_quantile(np.array([]), 0.1) == 1.0


def test_other_ranks():
    # n = 99, alpha = 0.05: k = ceil(100 * 0.95) = 95.  n = 10, alpha = 0.2: k = ceil(8.8) = 9.
    s = np.arange(1, 100) / 1000
    assert conformal_quantile(s, 0.05) == s[94]
    assert conformal_quantile(np.arange(10) / 10, 0.2) == 0.8


def test_vectorised_over_rows():
    rng = np.random.default_rng(3)
    scores = rng.random((7, 19))
    q = conformal_quantile(scores, 0.1)
    assert q.shape == (7,)
    assert np.array_equal(q, np.sort(scores, axis=1)[:, 17])


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, True, "0.1"])
def test_bad_alpha_is_a_user_error(alpha):
    with pytest.raises(UserInputError, match="alpha"):
        conformal_quantile([0.1, 0.2], alpha)


def test_nan_scores_refused():
    with pytest.raises(UserInputError, match="NaN"):
        conformal_quantile([0.1, np.nan], 0.1)


def test_interval_clipped_and_split_conformal():
    lo, hi = conformal_interval([0.05, 0.5, 0.97], 0.1)
    assert np.allclose(lo, [0.0, 0.4, 0.87]) and np.allclose(hi, [0.15, 0.6, 1.0])
    sc = SplitConformal(alpha=0.1).fit(np.linspace(0, 1, 19), np.linspace(0, 1, 19) + np.linspace(0, 0.18, 19))
    assert sc.n_ == 19 and sc.q_hat_ == pytest.approx(0.17)  # 18th smallest of 0, 0.01, ..., 0.18
    assert sc.covers([0.5], [0.66]).tolist() == [True]
    assert sc.covers([0.5], [0.68]).tolist() == [False]
    assert sc.should_stop([0.8, 0.6], 0.5).tolist() == [True, False]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60),
       st.floats(0.01, 0.5), st.randoms(use_true_random=False))
def test_properties_order_statistic(scores, alpha, rnd):
    q = conformal_quantile(scores, alpha)
    n = len(scores)
    if conformal_rank(n, alpha) > n:
        assert q == 1.0
    else:
        assert q in scores
        # at least k scores are <= q_hat
        assert sum(s <= q for s in scores) >= conformal_rank(n, alpha)
    shuffled = list(scores)
    rnd.shuffle(shuffled)
    assert conformal_quantile(shuffled, alpha) == q


def test_monte_carlo_coverage_500_random_splits():
    # Exchangeable data with continuous scores: a fixed pool, 500 random calibration/test splits.
    # For distinct scores, E[coverage] = k / (n + 1) in [1 - alpha, 1 - alpha + 1 / (n + 1)).
    rng = np.random.default_rng(20250901)
    alpha, n_pool, n_cal, n_rep = 0.1, 200, 99, 500
    c = rng.random(n_pool)
    c_hat = np.clip(c + rng.normal(0, 0.15, n_pool), 0, 1)
    e = np.abs(c - c_hat)
    perm = np.argsort(rng.random((n_rep, n_pool)), axis=1)
    cal, test = e[perm[:, :n_cal]], e[perm[:, n_cal:]]
    q = conformal_quantile(cal, alpha)
    coverage = (test <= q[:, None]).mean(axis=1)
    mean = coverage.mean()
    assert 1 - alpha - 0.01 <= mean <= 1 - alpha + 1 / (n_cal + 1) + 0.01, mean


def test_monte_carlo_coverage_through_evaluate_conformal():
    # The same guarantee through the evaluation pipeline: 50 splits x 10 seeds = 500 pooled splits.
    rng = np.random.default_rng(7)
    n = 200
    c = rng.random(n)
    df = pd.DataFrame({"doc_id": [f"d{i}" for i in range(n)], "state_id": [f"s{i}" for i in range(n)],
                       "true_completeness": c, "estimator": "noisy",
                       "c_hat": np.clip(c + rng.normal(0, 0.2, n), 0, 1), "reason": None})
    res = evaluate_conformal(df, alpha=0.1, split="state", n_splits=50, n_seeds=10, seed=1)
    n_cal = 100
    mean = res.splits["coverage"].mean()
    assert 0.89 <= mean <= 0.9 + 1 / (n_cal + 1) + 0.01, mean
    assert (res.splits["n_cal"] == n_cal).all() and (res.splits["n_test"] == n - n_cal).all()
