"""RQI (spec section 3): hand-derived values, options, decompositions, undefined cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.metrics import observation_evidence
from seekbench.metrics._rqi import reasoning_quality, rqi_score

# T1: r(G,PF) | s o(C,I) r(NG,SA) | s o(C,S) r(G,IS) a
#     G = 1, 0, 1 -> RQI_1 = 2/3. E held (sum, cumulative): 0, 1, 2.
T1 = [("r", "G", "PF"), ("s",), ("o", "C", "I"), ("r", "N", "SA"), ("s",), ("o", "C", "S"), ("r", "G", "IS"),
      ("a",)]
# T2: r(NG,PF) r(NG,PF) | s o(U,S) r(G,SA) r(NG,PF) r(unlabeled) a
#     labeled G = 0, 0, 1, 0 -> RQI_2 = 1/4, one unlabeled step. E held: 0, 0, 1, 1.
T2 = [("r", "N", "PF"), ("r", "N", "PF"), ("s",), ("o", "U", "S"), ("r", "G", "SA"), ("r", "N", "PF"),
      ("r", None, "PF"), ("a",)]


@pytest.fixture
def steps():
    return tables([make_trace(T1, trace_id="t1"), make_trace(T2, trace_id="t2")])[0]


def test_trace_and_step_aggregate_hand_values(steps):
    # trace: (2/3 + 1/4) / 2 = 11/24; step: 3 grounded of 7 labeled = 3/7.
    assert rqi_score(steps) == pytest.approx(11 / 24)
    assert rqi_score(steps, aggregate="step") == pytest.approx(3 / 7)


def test_aggregate_option_changes_the_number_as_spec_says(steps):
    trace = reasoning_quality(steps, aggregate="trace", n_boot=0)
    step = reasoning_quality(steps, aggregate="step", n_boot=0)
    assert trace.value == pytest.approx(trace.per_trace.mean())  # mean of RQI_i
    assert step.value == pytest.approx(3 / 7)  # pooled
    assert trace.value != pytest.approx(step.value)


def test_counts_and_per_trace(steps):
    res = reasoning_quality(steps, n_boot=0)
    assert (res.n_traces, res.n_steps, res.n_unlabeled, res.n_traces_unlabeled) == (2, 7, 1, 0)
    assert res.per_trace.to_dict() == pytest.approx({"t1": 2 / 3, "t2": 1 / 4})


def test_by_type_hand_values(steps):
    # PF: T1 G; T2 NG, NG, NG -> 1/4 (n 4); SA: T1 NG, T2 G -> 1/2 (n 2); IS: T1 G -> 1 (n 1).
    bt = reasoning_quality(steps, n_boot=0).by_type.set_index("type")
    assert bt.loc["PlanFormation", "rqi"] == pytest.approx(1 / 4) and bt.loc["PlanFormation", "n"] == 4
    assert bt.loc["StateAssessment", "rqi"] == pytest.approx(1 / 2) and bt.loc["StateAssessment", "n"] == 2
    assert bt.loc["InformationSynthesis", "rqi"] == pytest.approx(1.0) and bt.loc["InformationSynthesis", "n"] == 1


def test_by_evidence_hand_values_and_identity(steps):
    # E=0: T1 r0 (G), T2 r0, r1 (NG, NG) -> 1/3, n 3
    # E=1: T1 r1 (NG), T2 r2 (G), r3 (NG) -> 1/3, n 3
    # E=2: T1 r2 (G) -> 1, n 1.  sum share*rqi = 3/7 * 1/3 * 2 + 1/7 = 3/7 = step-pooled RQI.
    be = reasoning_quality(steps, n_boot=0).by_evidence.set_index("E")
    assert be["rqi"].tolist() == pytest.approx([1 / 3, 1 / 3, 1.0])
    assert be["n"].tolist() == [3, 3, 1]
    assert be["share"].tolist() == pytest.approx([3 / 7, 3 / 7, 1 / 7])
    assert (be["share"] * be["rqi"]).sum() == pytest.approx(rqi_score(steps, aggregate="step"))


def test_evidence_mapping_changes_by_evidence(steps):
    # sufficiency_first: T1's o(C,I) gives E = 0 instead of 1, so T1 r1 moves to E = 0:
    # E=0: G, NG, NG, NG -> 1/4 (n 4); E=1: T2 r2 G, r3 NG -> 1/2 (n 2); E=2: 1 (n 1).
    be = reasoning_quality(steps, evidence_mapping="sufficiency_first", n_boot=0).by_evidence
    assert be["n"].tolist() == [4, 2, 1]
    assert be["rqi"].tolist() == pytest.approx([1 / 4, 1 / 2, 1.0])


def test_evidence_scope_changes_by_evidence():
    # s o(C,S) r(G) | s o(U,I) r(NG) a: cumulative E at the reasoning steps 2, 2; latest 2, 0.
    steps, _ = tables([make_trace([("s",), ("o", "C", "S"), ("r", "G"), ("s",), ("o", "U", "I"), ("r", "N"),
                                   ("a",)])])
    cum = reasoning_quality(steps, n_boot=0).by_evidence
    lat = reasoning_quality(steps, evidence_scope="latest", n_boot=0).by_evidence
    assert cum["n"].tolist() == [0, 0, 2] and cum["rqi"].iloc[2] == pytest.approx(0.5)
    assert lat["n"].tolist() == [1, 0, 1] and lat["rqi"].tolist()[::2] == [0.0, 1.0]


def test_identity_per_trace_on_shared_data(shared_tables):
    # RQI_i = sum_k P_i(E = k) E_i[G | E = k] within every trace (step-pooled decomposition).
    steps, _ = shared_tables
    for tid, part in list(steps.groupby("trace_id"))[::3]:
        res = reasoning_quality(part, aggregate="step", n_boot=0)
        if res.n_steps == 0:
            continue
        be = res.by_evidence
        assert (be["share"] * be["rqi"].fillna(0)).sum() == pytest.approx(res.value), tid


def _evidence_known(part):
    """The steps of the traces whose E is known (no observation, or a labeled one: spec section 2)."""
    obs = part[part["kind"] == "search_result"]
    labeled = observation_evidence(obs["clarity"], obs["sufficiency"]).notna().groupby(obs["trace_id"]).any()
    unknown = set(labeled.index[~labeled])
    return part[~part["trace_id"].isin(unknown)], unknown


def test_identity_per_agent_on_shared_data(shared_tables):
    # By evidence state the decomposition covers the traces whose E is known only (spec section 2): its
    # identity holds for their step-pooled RQI, and it is the same as that of the known traces alone.
    steps, _ = shared_tables
    n_unknown = 0
    for agent, part in steps.groupby("agent"):
        res = reasoning_quality(part, aggregate="step", n_boot=0)
        known, unknown = _evidence_known(part)
        n_unknown += len(unknown)
        ref = reasoning_quality(known, aggregate="step", n_boot=0)
        be = res.by_evidence
        assert (be["share"] * be["rqi"].fillna(0)).sum() == pytest.approx(ref.value), agent
        pd.testing.assert_frame_equal(be, ref.by_evidence)
        assert 0.0 <= res.value <= 1.0
    assert n_unknown == 5


def test_no_labels_is_nan_with_warning_never_zero():
    steps, _ = tables([make_trace([("r",), ("s",), ("o",), ("r",), ("a",)])])
    with pytest.warns(UndefinedMetricWarning, match="grounding"):
        assert np.isnan(rqi_score(steps))
    with pytest.warns(UndefinedMetricWarning):
        res = reasoning_quality(steps, n_boot=50)
    assert np.isnan(res.value) and all(np.isnan(res.ci))
    assert (res.n_unlabeled, res.n_traces, res.n_traces_unlabeled) == (2, 0, 1)


def test_trace_without_labeled_reasoning_is_left_out_and_counted():
    steps, _ = tables([make_trace([("r", "G"), ("a",)], trace_id="a"),
                       make_trace([("s",), ("o", "C", "S"), ("a",)], trace_id="b")])
    res = reasoning_quality(steps, n_boot=0)
    assert res.value == 1.0 and res.n_traces == 1 and res.n_traces_unlabeled == 1
    assert np.isnan(res.per_trace["b"])


def test_unknown_option_raises_user_error(steps):
    with pytest.raises(UserInputError, match="unknown aggregate 'mean'"):
        rqi_score(steps, aggregate="mean")
    with pytest.raises(UserInputError, match="evidence_scope"):
        reasoning_quality(steps, evidence_scope="max")
    with pytest.raises(UserInputError, match="cluster"):
        reasoning_quality(steps, cluster="agent")


def test_ci_and_summary(steps):
    res = reasoning_quality(steps, n_boot=300, seed=1)
    lo, hi = res.ci
    assert 0.0 <= lo <= res.value <= hi <= 1.0
    assert res.ci == reasoning_quality(steps, n_boot=300, seed=1).ci
    row = res.summary.loc["rqi"]
    assert row["estimate"] == res.value and row["n_steps"] == 7


def test_shared_data_values_in_range(shared_tables):
    steps, _ = shared_tables
    assert isinstance(steps, pd.DataFrame)
    for _, part in steps.groupby("agent"):
        value = rqi_score(part)
        assert 0.0 <= value <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=200))
def test_value_from_arrays_is_pandas_mean_to_the_bit(pairs):
    # RQI is computed from arrays; these are the pandas expressions it replaced.
    from seekbench.metrics._rqi import _value

    n = np.array([p[0] for p in pairs], dtype=float)
    g = np.minimum([p[1] for p in pairs], n)
    per = pd.DataFrame({"g": g, "n": n})
    labeled = per[per["n"] > 0]
    want_trace = float((labeled["g"] / labeled["n"]).mean()) if len(labeled) else float("nan")
    want_step = float(labeled["g"].sum() / labeled["n"].sum()) if len(labeled) else float("nan")
    for got, want in ((_value(per, "trace"), want_trace), (_value(per, "step"), want_step)):
        assert got == want or (np.isnan(got) and np.isnan(want))
