"""One product for a group's integer bootstrap columns: bit for bit the sums of separate products."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench.metrics import _bootstrap
from seekbench.metrics._bootstrap import bootstrap_sums
from seekbench.metrics._ce import _accuracy_by_evidence
from seekbench.metrics._shared_sums import exact_in_any_order, shared_sums


def _count_products(monkeypatch) -> list[int]:
    """Record the width of every resample-count product."""
    widths: list[int] = []
    real = _bootstrap.resampled_sums

    def counted(per_cluster, seed, n_boot):
        widths.append(per_cluster.shape[1])
        return real(per_cluster, seed, n_boot)

    monkeypatch.setattr(_bootstrap, "resampled_sums", counted)
    return widths


def test_exact_in_any_order():
    assert exact_in_any_order(np.array([[0.0, 1.0], [3.0, 1.0]]))
    assert not exact_in_any_order(np.array([[0.5, 1.0]]))  # a fraction: the order of the sum matters
    assert not exact_in_any_order(np.array([[-1.0, 1.0]]))  # 0 * -1 = -0.0: the sign of a zero sum could
    assert not exact_in_any_order(np.array([[np.nan, 1.0]]))
    assert not exact_in_any_order(np.array([[2.0**52], [0.0]]))  # 2 rows x 2**52 = 2**53: not below
    assert exact_in_any_order(np.array([[2.0**52 - 1], [0.0]]))
    assert not exact_in_any_order(np.zeros((0, 2)))


def test_integer_blocks_share_one_product_fractions_their_own(monkeypatch):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, (50, 2)).astype(float)
    b = rng.integers(0, 9, (50, 5)).astype(float)
    frac = rng.random((50, 2))
    alone = [bootstrap_sums(x, n_boot=300, seed=11) for x in (a, b, frac)]
    widths = _count_products(monkeypatch)
    with shared_sums([a, b, frac], seed=11, n_boot=300):
        shared = [bootstrap_sums(x, n_boot=300, seed=11) for x in (a, b, frac)]
        again = bootstrap_sums(a, n_boot=300, seed=11)
        other_seed = bootstrap_sums(b, n_boot=300, seed=12)
    assert widths == [7, 2, 5]  # a and b side by side once; the fractions and the other seed alone
    for got, want in zip(shared, alone, strict=True):
        assert got.tobytes() == want.tobytes() and got.flags.c_contiguous
    assert again.tobytes() == alone[0].tobytes()
    assert other_seed.tobytes() == bootstrap_sums(b, n_boot=300, seed=12).tobytes()


def test_nothing_shared_without_an_integer_seed(monkeypatch):
    a = np.ones((20, 2))
    widths = _count_products(monkeypatch)
    with shared_sums([a, 2 * a], seed=None, n_boot=50):
        bootstrap_sums(a, n_boot=50, seed=None)
        bootstrap_sums(2 * a, n_boot=50, seed=None)
    assert widths == [2, 2]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 60),
    widths=st.lists(st.integers(1, 6), min_size=2, max_size=4),
    top=st.sampled_from([1, 7, 1000, 2**40]),
    seed=st.integers(0, 2**31),
)
def test_shared_sums_are_bitwise_those_of_separate_products(n, widths, top, seed):
    rng = np.random.default_rng(seed)
    blocks = [rng.integers(0, top + 1, (n, w)).astype(float) for w in widths]
    alone = [bootstrap_sums(x, n_boot=97, seed=seed) for x in blocks]
    with shared_sums(blocks, seed=seed, n_boot=97):
        shared = [bootstrap_sums(x, n_boot=97, seed=seed) for x in blocks]
    for got, want in zip(shared, alone, strict=True):
        assert got.tobytes() == want.tobytes()


def test_rows_as_clusters_equal_labelled_clusters_to_the_bit():
    # Row numbers take the short way (the rows are the per-cluster sums); labels go through
    # factorize and a sum per cluster. -0.0 becomes 0.0 on both.
    cols = np.column_stack([np.random.default_rng(0).random(40) - 0.5, np.ones(40)])
    cols[3, 0] = -0.0
    rows = bootstrap_sums(cols, n_boot=200, seed=5, clusters=np.arange(40))
    labelled = bootstrap_sums(cols, n_boot=200, seed=5, clusters=[f"t{i}" for i in range(40)])
    assert rows.tobytes() == labelled.tobytes()
    subset = np.arange(0, 80, 2)  # a group's rows of a larger table: still one cluster each, in order
    assert bootstrap_sums(cols, n_boot=200, seed=5, clusters=subset).tobytes() == rows.tobytes()


@settings(max_examples=30, deadline=None)
@given(
    e=st.lists(st.sampled_from([0.0, 1.0, 2.0]), max_size=30),
    seed=st.integers(0, 1000),
)
def test_accuracy_by_evidence_equals_the_grouped_mean(e, seed):
    rng = np.random.default_rng(seed)
    correct = rng.choice([0.0, 1.0, np.nan], len(e))
    frame = pd.DataFrame({"e_answer": np.asarray(e, dtype=float), "correct": correct})
    want = (
        frame.assign(known=frame["correct"].notna())
        .groupby("e_answer")
        .agg(n=("known", "size"), n_known=("known", "sum"), accuracy=("correct", "mean"))
        .reindex(range(3))
    )
    want = want.assign(n=want["n"].fillna(0).astype(int), n_known=want["n_known"].fillna(0).astype(int))
    want = want.rename_axis("E").reset_index()
    pd.testing.assert_frame_equal(_accuracy_by_evidence(frame["e_answer"].to_numpy(), correct), want, check_exact=True)


@pytest.mark.parametrize("n_boot", [0, 5])
def test_shared_sums_with_few_blocks_or_no_resamples(n_boot, monkeypatch):
    a = np.ones((10, 2))
    widths = _count_products(monkeypatch)
    with shared_sums([a], seed=0, n_boot=n_boot):  # one block: nothing to share
        out = bootstrap_sums(a, n_boot=n_boot, seed=0)
    assert out.shape == (n_boot, 2) and widths == ([2] if n_boot else [])
