"""Invariants of RQI, CE and the summary (hypothesis): bounds, ideal policy, order and duplication."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning
from seekbench.metrics._ce import answer_calibration, calibration_error
from seekbench.metrics._rqi import reasoning_quality, rqi_score
from seekbench.metrics._summary import summarize

SETTINGS = settings(max_examples=30, deadline=None, database=None, derandomize=True)
#: Fewer examples for the tests that run the whole summary several times per example.
SLOW = settings(SETTINGS, max_examples=12)
OBS = [("C", "S"), ("C", "I"), ("U", "S"), ("U", "I"), (None, None)]
GROUNDING = st.sampled_from(["G", "N", None])


@st.composite
def trace_specs(draw):
    """(steps in compact notation, correct) for one random trace."""
    spec = [("r", g) for g in draw(st.lists(GROUNDING, max_size=2))]
    n_turns = draw(st.integers(0, 5))
    answer_at = draw(st.one_of(st.none(), st.integers(0, n_turns)))
    for t in range(1, n_turns + 1):
        if answer_at is not None and t > answer_at:
            break
        spec += [("s", draw(st.sampled_from(["q a", "q b", "Q A!", "q c"]))), ("o", *draw(st.sampled_from(OBS)))]
        spec += [("r", g) for g in draw(st.lists(GROUNDING, max_size=2))]
    if answer_at is not None:
        spec.append(("a",))
    return spec, draw(st.sampled_from([True, False, None]))


@st.composite
def corpora(draw, min_size=1, max_size=6):
    specs = draw(st.lists(trace_specs(), min_size=min_size, max_size=max_size))
    agents = draw(st.lists(st.sampled_from(["x", "y"]), min_size=len(specs), max_size=len(specs)))
    return [make_trace(spec, trace_id=f"t{i}", agent=agent, correct=correct)
            for i, ((spec, correct), agent) in enumerate(zip(specs, agents))]


@st.composite
def ideal_traces(draw):
    """Traces that answer exactly when E first reaches 2 (never, if it never does)."""
    out = []
    for i in range(draw(st.integers(1, 5))):
        spec = [("r", "G")]
        for _ in range(draw(st.integers(0, 5))):
            clarity, sufficiency = draw(st.sampled_from(OBS))
            spec += [("s",), ("o", clarity, sufficiency), ("r", "N")]
            if (clarity, sufficiency) == ("C", "S"):
                spec.append(("a",))
                break
        out.append(make_trace(spec, trace_id=f"t{i}", correct=True))
    return out


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


@SETTINGS
@given(corpora())
def test_rqi_and_ce_are_in_unit_interval(traces):
    steps, tr = tables(traces)
    for aggregate in ("trace", "step"):
        v = _quiet(rqi_score, steps, aggregate=aggregate)
        assert math.isnan(v) or 0.0 <= v <= 1.0
    for kw in ({}, {"aggregate": "pooled"}, {"aggregate": "pooled", "prevalence": "group"},
               {"decision_points": "step"}, {"evidence_scope": "latest"},
               {"evidence_mapping": "sufficiency_first", "aggregate": "pooled"}):
        v = _quiet(calibration_error, steps, tr, **kw)
        assert math.isnan(v) or 0.0 <= v <= 1.0 + 1e-12


@SETTINGS
@given(ideal_traces())
def test_ideal_policy_has_zero_calibration_error(traces):
    steps, tr = tables(traces)
    for mapping, scope in (("sum", "cumulative"), ("sufficiency_first", "latest")):
        res = _quiet(answer_calibration, steps, tr, evidence_mapping=mapping, evidence_scope=scope, n_boot=0)
        assert res.ce == 0.0
        assert res.overcautious_rate == 0.0
        assert math.isnan(res.overconfident_rate) or res.overconfident_rate == 0.0
        for prevalence in ("global", "group"):
            assert calibration_error(steps, tr, aggregate="pooled", prevalence=prevalence,
                                     evidence_mapping=mapping, evidence_scope=scope) == 0.0


def _point_estimates(traces: list[dict]) -> dict:
    """Every point estimate of the summary (no CI, no counts) for the default and other options."""
    out = {}
    for label, kw in (("default", {}), ("options", {"ce_aggregate": "pooled", "rqi_aggregate": "step",
                                                    "decision_points": "step", "evidence_scope": "latest"})):
        s = _quiet(summarize, *tables(traces), n_boot=0, **kw)
        for g in s.groups:
            for key, value in g.items():
                if key.startswith("n_") or key.endswith("_ci") or key in ("unlabeled", "erf_ci"):
                    continue
                if isinstance(value, dict):
                    for sub, v in value.items():
                        items = v.items() if isinstance(v, dict) else [("", v)]
                        for name, x in items:
                            if name not in ("n", "n_known", "answers"):
                                out[(label, g["agent"], key, sub, name)] = x
                else:
                    out[(label, g["agent"], key)] = value
    return out


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k, x in a.items():
        y = b[k]
        if isinstance(x, float) and isinstance(y, float):
            assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12), k
        else:
            assert x == y, k


@SLOW
@given(corpora(min_size=2), st.randoms(use_true_random=False))
def test_shuffling_traces_leaves_point_estimates_unchanged(traces, rnd):
    shuffled = list(traces)
    rnd.shuffle(shuffled)
    _same(_point_estimates(traces), _point_estimates(shuffled))


@SLOW
@given(corpora())
def test_duplicating_every_trace_leaves_point_estimates_unchanged(traces):
    doubled = traces + [{**t, "trace_id": f"dup-{t['trace_id']}"} for t in traces]
    _same(_point_estimates(traces), _point_estimates(doubled))


@SETTINGS
@given(corpora(min_size=8, max_size=12), st.integers(0, 1000))
def test_rqi_ci_is_reproducible_and_contains_the_estimate(traces, seed):
    steps, _ = tables(traces)
    a = _quiet(reasoning_quality, steps, n_boot=2000, seed=seed)
    b = _quiet(reasoning_quality, steps, n_boot=2000, seed=seed)
    assert a.ci == b.ci or (np.isnan(a.ci).all() and np.isnan(b.ci).all())
    per = a.per_trace.dropna()
    if len(per) >= 2 and np.ptp(per.to_numpy()) > 0:  # non-degenerate
        assert a.ci[0] <= a.value <= a.ci[1]
