"""The resampling forms of RQI, CE and ERF(t): on the full sample each statistic is the metric itself."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning
from seekbench.metrics import (
    EvidenceRecoveryFitter,
    MetricOptions,
    calibration_error,
    ce_columns,
    ce_statistics_columns,
    erf_columns,
    evidence_prevalence,
    rqi_columns,
    rqi_score,
    rqi_statistics_columns,
    trace_statistics,
)

# Agent x: T1 answers at E = 2 (correct), T2 answers at E = 1 (wrong), T3 never answers, T5 has
# no reasoning step; so RQI (trace) = (2/3 + 1/4) / 2 over T1, T2 only.
T1 = [("r", "G"), ("s",), ("o", "C", "I"), ("r", "N"), ("s",), ("o", "C", "S"), ("r", "G"), ("a",)]
T2 = [("r", "N"), ("r", "N"), ("s",), ("o", "U", "S"), ("r", "G"), ("r", "N"), ("a",)]
T3 = [("s",), ("o", "C", "S"), ("s",), ("o", "C", "S")]
T5 = [("s",), ("o", "U", "I"), ("a",)]
STEPS, TRACES = tables([make_trace(T1, trace_id="t1", correct=True), make_trace(T2, trace_id="t2", correct=False),
                        make_trace(T3, trace_id="t3"), make_trace(T5, trace_id="t5", correct=False)])
IDS = TRACES["trace_id"]
ALLOWED = {n: MetricOptions.choices(n) for n in MetricOptions.__dataclass_fields__}


def _full(columns_and_stat) -> float:
    cols, stat = columns_and_stat
    return float(stat(cols.sum(axis=0, keepdims=True))[0])


def test_rqi_hand_value_and_an_empty_resample():
    assert _full(rqi_columns(STEPS, IDS)) == pytest.approx((2 / 3 + 1 / 4) / 2)
    assert _full(rqi_columns(STEPS, IDS, options=MetricOptions(rqi_aggregate="step"))) == pytest.approx(3 / 7)
    cols, stat = rqi_columns(STEPS, IDS)
    assert cols.shape == (4, 2) and cols[3].tolist() == [0.0, 0.0]  # T5: no reasoning, counts for nothing
    assert math.isnan(float(stat(cols[3:].sum(axis=0, keepdims=True))[0]))  # a resample of T5 only


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.fixed_dictionaries({k: st.sampled_from(v) for k, v in ALLOWED.items()}), st.integers(0, 9))
def test_each_statistic_is_the_metric_on_the_full_sample(chosen, t):
    opts = MetricOptions(**chosen)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        prev = evidence_prevalence(STEPS, TRACES, decision_points=opts.decision_points, **opts.evidence).to_numpy()
        assert _full(rqi_columns(STEPS, IDS, options=opts)) == pytest.approx(
            rqi_score(STEPS, aggregate=opts.rqi_aggregate), abs=1e-12)
        ce = calibration_error(STEPS, TRACES, aggregate=opts.ce_aggregate, prevalence=opts.ce_prevalence,
                               decision_points=opts.decision_points, global_prevalence=prev, **opts.evidence)
    assert _full(ce_columns(STEPS, TRACES, options=opts, global_prevalence=prev)) == pytest.approx(ce, abs=1e-12)
    fitter = EvidenceRecoveryFitter(method=opts.erf_method, recovery=opts.recovery, time=opts.time,
                                    **opts.evidence).fit(STEPS, TRACES)
    assert _full(erf_columns(STEPS, TRACES, t, options=opts)) == pytest.approx(fitter.recovered_by(t), abs=1e-12)


def test_unlabeled_evidence_gives_nan_statistics_never_zero():
    steps = STEPS.assign(clarity=None, sufficiency=None)
    for cols, stat in (ce_columns(steps, TRACES), erf_columns(steps, TRACES, 8)):
        assert np.isnan(stat(cols.sum(axis=0, keepdims=True))).all()


@pytest.mark.parametrize(
    "options",
    [
        MetricOptions(),
        MetricOptions(rqi_aggregate="step", ce_aggregate="pooled", ce_prevalence="global"),
        MetricOptions(ce_aggregate="pooled", ce_prevalence="group", decision_points="step"),
        MetricOptions(evidence_scope="latest", evidence_mapping="sufficiency_first"),
    ],
)
def test_columns_from_the_statistics_table_are_the_columns_from_the_steps(options):
    # The same columns, bit for bit, and the same statistic on resampled sums: the analysis's paired
    # comparison reads them from the table the summary was aggregated from instead of the steps.
    stats = trace_statistics(STEPS, TRACES, options=options)
    prevalence = evidence_prevalence(STEPS, TRACES, **options.evidence).to_numpy()
    rng = np.random.default_rng(3)
    for (a, stat_a), (b, stat_b) in [
        (rqi_columns(STEPS, IDS, options=options), rqi_statistics_columns(stats, options=options)),
        (
            ce_columns(STEPS, TRACES, options=options, global_prevalence=prevalence),
            ce_statistics_columns(stats, options=options, global_prevalence=prevalence),
        ),
    ]:
        assert np.array_equal(a, b)
        sums = rng.multinomial(len(a), np.full(len(a), 1 / len(a)), size=50) @ a
        assert np.array_equal(stat_a(sums), stat_b(sums), equal_nan=True)


def test_ce_from_a_table_without_evidence_labels_is_undefined():
    bare = [[("r",), ("s",), ("o",), ("a",)]]
    steps, traces = tables([make_trace(t, trace_id=f"u{i}") for i, t in enumerate(bare)])
    cols, stat = ce_statistics_columns(trace_statistics(steps, traces))
    assert np.isnan(stat(cols.sum(axis=0, keepdims=True))).all()
