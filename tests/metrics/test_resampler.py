"""Resampler: the bootstrap's resampling as one explicit value (issue 28, spec section 3)."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pandas as pd
import pytest

from seekbench._errors import UserInputError
from seekbench.metrics import Resampler, _resampler, answer_calibration, bootstrap_sums, reasoning_quality


def test_counts_are_numpys_multinomial_draws_in_order():
    # Independent reference: B rows of Mult(n; 1/n, ..., 1/n) from one default_rng(seed), in order.
    expected = np.random.default_rng(11).multinomial(5, [0.2] * 5, size=40).astype(float)
    (counts,) = Resampler(n_boot=40, seed=11).counts(5)
    assert np.array_equal(counts, expected)


def test_chunking_does_not_change_the_counts(monkeypatch):
    whole = np.concatenate(Resampler(n_boot=30, seed=3).counts(4))
    monkeypatch.setattr(_resampler, "MAX_CELLS", 8)  # chunks of 2 resamples
    chunks = Resampler(n_boot=30, seed=3).counts(4)
    assert len(chunks) == 15 and np.array_equal(np.concatenate(chunks), whole)


def test_draws_once_and_shares_them_with_derived_instances():
    r = Resampler(n_boot=50, seed=0, clusters=np.arange(6))
    first = r.counts(6)
    assert r.counts(6) is first  # kept, not drawn again
    assert r.subset(np.ones(6, dtype=bool)) is r  # every row kept: the same instance
    assert r.with_clusters(list("abcdef")).counts(6) is first  # the counts depend on seed, B and n only
    fewer = r.subset(np.array([True, False] * 3))
    assert fewer.clusters.tolist() == [0, 2, 4] and fewer.counts(3)[0].shape == (50, 3)


def test_resampled_sums_are_bootstrap_sums_and_the_product_of_the_counts():
    v = np.column_stack([np.arange(7.0), np.ones(7)])
    r = Resampler(n_boot=25, seed=5)
    (counts,) = r.counts(7)
    assert np.array_equal(r.resampled_sums(v), counts @ v)
    assert np.array_equal(r.resampled_sums(v), bootstrap_sums(v, n_boot=25, seed=5))
    clusters = ["q1", "q2", "q1", "q3", "q3", "q2", "q1"]
    assert np.array_equal(
        Resampler(n_boot=25, seed=5, clusters=clusters).resampled_sums(v),
        bootstrap_sums(v, n_boot=25, seed=5, clusters=clusters),
    )


def test_intervals_share_one_product_and_need_resamples():
    v = np.column_stack([[1.0, 0.0, 1.0, 1.0, 0.0], np.ones(5)])
    r = Resampler(n_boot=300, seed=2)
    (lo, hi), (lo1, hi1) = r.intervals(v, [lambda s: s[:, 0] / s[:, 1], lambda s: 1 - s[:, 0] / s[:, 1]])
    assert (lo1, hi1) == pytest.approx((1 - hi, 1 - lo), abs=1e-12)  # the same resamples
    assert np.isnan(Resampler(n_boot=0).interval(v, lambda s: s[:, 0])).all()
    assert np.isnan(r.interval(v[:0], lambda s: s[:, 0])).all()


def test_frozen_and_validated():
    r = Resampler()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n_boot = 10  # type: ignore[misc]
    with pytest.raises(UserInputError, match="n_boot"):
        Resampler(n_boot=-1)
    with pytest.raises(UserInputError, match="method"):
        Resampler(method="jackknife")  # type: ignore[arg-type]
    with pytest.raises(UserInputError, match="alpha"):
        r.interval(np.ones(3), lambda s: s[:, 0], alpha=1.5)


def test_a_metric_takes_a_resampler_or_its_keywords_not_both():
    steps = pd.DataFrame({"trace_id": list("aabbccdd"), "kind": ["reasoning"] * 8, "turn": [0] * 8,
                          "reasoning_type": ["PlanFormation"] * 8, "clarity": [None] * 8, "sufficiency": [None] * 8,
                          "grounding": ["Grounded", "NotGrounded"] * 3 + ["Grounded"] * 2})
    by_keywords = reasoning_quality(steps, n_boot=300, seed=3)
    by_value = reasoning_quality(steps, resampler=Resampler(n_boot=300, seed=3))
    assert by_value.ci == by_keywords.ci and by_value.value == by_keywords.value
    with pytest.raises(UserInputError, match="not both"):
        reasoning_quality(steps, n_boot=100, resampler=Resampler(n_boot=300, seed=3))
    with pytest.raises(UserInputError, match="without clusters"):
        reasoning_quality(steps, resampler=Resampler(clusters=list("abcd")))
    with pytest.raises(UserInputError, match="must be a seekbench.metrics.Resampler"):
        reasoning_quality(steps, resampler={"n_boot": 10})  # type: ignore[arg-type]


def test_one_instance_serves_several_metrics_of_the_same_traces():
    steps = pd.DataFrame({"trace_id": ["x", "x", "y"], "pos": [0, 1, 0], "turn": [1, 1, 1],
                          "kind": ["search_result", "answer", "answer"], "clarity": ["Clear", None, None],
                          "sufficiency": ["Sufficient", None, None], "grounding": [None] * 3})
    traces = pd.DataFrame({"trace_id": ["x", "y"], "question_id": ["q", "r"], "answered": [True, True],
                           "answer_turn": [1.0, 1.0], "correct": [True, False]})
    r = Resampler(n_boot=200, seed=9)
    assert answer_calibration(steps, traces, resampler=r).ci == answer_calibration(steps, traces, n_boot=200, seed=9).ci
    assert r.as_options() == {"n_boot": 200, "seed": 9}


def test_threads_sharing_one_instance_get_the_same_numbers():
    r = Resampler(n_boot=400, seed=1)
    v = np.arange(300.0)
    out: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: out.append(r.resampled_sums(v))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(o, bootstrap_sums(v, n_boot=400, seed=1)) for o in out)
