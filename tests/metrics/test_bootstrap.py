"""Percentile bootstrap over whole traces (spec section 3): vectorised, seeded, clustered."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UserInputError
from seekbench.metrics import _resampler, percentile_interval
from seekbench.metrics._bootstrap import (
    EstimateResult,
    bootstrap_ci,
    bootstrap_statistic_ci,
    bootstrap_statistic_cis,
    bootstrap_sums,
    cluster_labels,
    ratio,
)

SETTINGS = settings(max_examples=40, deadline=None, database=None, derandomize=True)


def _counts(n: int, **kw) -> np.ndarray:
    """The resample-count matrix itself: sums of the identity columns."""
    return bootstrap_sums(np.eye(n), **kw)


def test_counts_are_multinomial_resamples_of_whole_traces():
    c = _counts(7, n_boot=300, seed=2)
    assert c.shape == (300, 7)
    assert np.all(c == np.round(c)) and np.all(c >= 0)
    assert np.all(c.sum(axis=1) == 7)  # each resample has n traces


def test_weighted_mean_equals_explicit_resample():
    # Row b of the sums, divided by n, is the mean of the traces drawn in resample b.
    v = np.array([0.1, 0.5, 0.9, 0.2, 0.7])
    c = _counts(5, n_boot=50, seed=4)
    sums = bootstrap_sums(v, n_boot=50, seed=4)[:, 0]
    for b in range(50):
        drawn = np.repeat(v, c[b].astype(int))
        assert sums[b] / 5 == pytest.approx(drawn.mean())


def test_seed_reproducible_and_chunking_invariant(monkeypatch):
    v = np.arange(10.0)
    a = bootstrap_sums(v, n_boot=1000, seed=7)
    assert np.array_equal(a, bootstrap_sums(v, n_boot=1000, seed=7))
    assert not np.array_equal(a, bootstrap_sums(v, n_boot=1000, seed=8))
    monkeypatch.setattr(_resampler, "MAX_CELLS", 25)  # chunks of 2 resamples
    assert np.array_equal(a, bootstrap_sums(v, n_boot=1000, seed=7))


def test_clusters_resample_whole_questions():
    clusters = ["q1", "q1", "q2", "q3", "q3", "q3"]
    c = _counts(6, n_boot=200, seed=0, clusters=clusters)
    assert np.all(c[:, 0] == c[:, 1]) and np.all(c[:, 3] == c[:, 5])
    assert np.all(c[:, [0, 2, 3]].sum(axis=1) == 3)  # 3 questions drawn per resample


def test_shared_universe_pairs_two_groups():
    # Same universe and seed: the two groups see the same question draws (a paired bootstrap).
    universe = ["q1", "q2", "q3", "q4"]
    a = _counts(2, n_boot=100, seed=5, clusters=["q1", "q3"], universe=universe)
    b = _counts(3, n_boot=100, seed=5, clusters=["q3", "q1", "q4"], universe=universe)
    assert np.array_equal(a[:, 0], b[:, 1]) and np.array_equal(a[:, 1], b[:, 0])


def test_cluster_labels():
    labels = cluster_labels(["a", "b", "c"], ["q", None, "q"], cluster="question")
    assert labels[0] == labels[2] != labels[1]
    assert len(set(cluster_labels(["a", "b", "c"], ["q", "q", "q"]))) == 3
    with pytest.raises(UserInputError, match="unknown cluster"):
        cluster_labels(["a"], ["q"], cluster="agent")


def test_ratio_ci_and_nan_masking():
    num, den = np.array([1.0, 2.0, 0.0, 3.0]), np.array([2.0, 2.0, 1.0, 4.0])
    lo, hi = bootstrap_ci(num, den, n_boot=500, seed=0)
    assert lo <= 6 / 9 <= hi
    # NaN values are left out of the mean, as in the point estimate.
    lo2, hi2 = bootstrap_ci([1.0, np.nan, 0.0, 1.0, np.nan], n_boot=500, seed=0)
    assert 0.0 <= lo2 <= 2 / 3 <= hi2 <= 1.0


def test_degenerate_cases():
    assert bootstrap_ci([0.3, 0.3, 0.3], n_boot=100) == pytest.approx((0.3, 0.3))
    assert all(np.isnan(bootstrap_ci([np.nan, np.nan], n_boot=100)))
    assert all(np.isnan(bootstrap_ci([0.1, 0.2], n_boot=0)))
    assert all(np.isnan(percentile_interval(np.array([np.nan]))))


def test_statistic_ci_uses_vectorised_statistic():
    cols = np.column_stack([[1.0, 0.0, 1.0, 1.0, 0.0], np.ones(5)])
    lo, hi = bootstrap_statistic_ci(cols, ratio, n_boot=300, seed=0)
    assert (lo, hi) == bootstrap_ci([1.0, 0.0, 1.0, 1.0, 0.0], n_boot=300, seed=0)


def test_bad_options():
    with pytest.raises(UserInputError, match="alpha"):
        bootstrap_ci([0.1, 0.2], alpha=1.5)
    with pytest.raises(UserInputError, match="n_boot"):
        bootstrap_ci([0.1, 0.2], n_boot=-1)


@SETTINGS
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=8, max_size=60).filter(lambda v: np.ptp(v) > 1e-6),
    st.integers(0, 2**31 - 1),
)
def test_ci_contains_point_estimate_and_is_reproducible(values, seed):
    lo, hi = bootstrap_ci(values, n_boot=2000, seed=seed)
    assert lo <= np.mean(values) <= hi
    assert (lo, hi) == bootstrap_ci(values, n_boot=2000, seed=seed)


def test_statistic_cis_share_resamples_even_unseeded():
    # seed=None draws afresh on every call, so two separate calls differ; one call's
    # statistics see the same B resamples: the same statistic twice gives one interval twice
    cols = np.column_stack([np.arange(20.0) % 3, np.ones(20)])
    first, second = bootstrap_statistic_cis(cols, [ratio, ratio], n_boot=200, seed=None)
    assert first == second
    assert np.isnan(bootstrap_statistic_cis(cols, [ratio, ratio], n_boot=0)).all()


def test_statistic_ci_is_the_first_of_statistic_cis():
    cols = np.column_stack([[1.0, 0.0, 1.0, 1.0, 0.0], np.ones(5)])
    one = bootstrap_statistic_ci(cols, ratio, n_boot=300, seed=3)
    assert bootstrap_statistic_cis(cols, [ratio, lambda s: s[:, 1]], n_boot=300, seed=3)[0] == one


@dataclass
class _Share(EstimateResult):
    n: int
    n_missing: int

    _summary_name = "share"
    _summary_columns = ("n", ("n_unlabeled", "n_missing"))


def test_estimate_result_summary_row():
    res = _Share(0.5, (0.25, 0.75), 4, 1, options={"n_boot": 10})
    row = res.summary
    assert row.index.tolist() == ["share"]
    assert row.columns.tolist() == ["estimate", "lower", "upper", "n", "n_unlabeled"]
    assert row.loc["share"].tolist() == [0.5, 0.25, 0.75, 4, 1]
    assert res.options == {"n_boot": 10}
