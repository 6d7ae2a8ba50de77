"""trace_audit: each flag at its threshold, the severity score by hand, per-agent rates and worst traces."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UserInputError
from seekbench.metrics import FLAGS, audit_flag_rates, trace_audit, worst_traces

from _helpers import make_trace, tables

# t1: 4 labeled reasoning steps, 3 NotGrounded (u = 3/4); one search with (Unclear, Insufficient), E = 0 at the
#     answer; a wrong answer without recovery -> stopped; no repeated query.
T1 = make_trace([("r", "N"), ("r", "N"), ("s", "q a"), ("o", "U", "I"), ("r", "N"), ("r", "G"), ("a",)],
                trace_id="t1", agent="a", correct=False)
# t2: 1 labeled reasoning step, NotGrounded (u = 1 but n_r = 1 < 3); query "q b" asked 3 times (r = 2 of 3);
#     the third observation is (Clear, Sufficient): E = 2 at turn 3 -> recovered at 3; answered at E = 2.
T2 = make_trace([("r", "N"), ("s", "q b"), ("o", "U", "I"), ("s", "q b"), ("o", "C", "I"), ("s", "q b"),
                 ("o", "C", "S"), ("a",)], trace_id="t2", agent="a", correct=True)
# t3: clean: grounded reasoning, E = 2 at turn 1, correct.
T3 = make_trace([("r", "G"), ("s", "q c"), ("o", "C", "S"), ("r", "G"), ("a",)], trace_id="t3", agent="b",
                correct=True)
# t4: E = 1 at the answer (Clear, Insufficient), wrong: stopped.
T4 = make_trace([("s", "q d"), ("o", "C", "I"), ("a",)], trace_id="t4", agent="b", correct=False)


@pytest.fixture(scope="module")
def small():
    return tables([T1, T2, T3, T4])


def _row(audit, tid):
    return audit.set_index("trace_id").loc[tid]


def test_flags_and_score_by_hand(small):
    audit = trace_audit(*small)
    r1, r2, r3, r4 = (_row(audit, t) for t in ("t1", "t2", "t3", "t4"))
    # t1: u = 0.75 >= 0.75 with n_r = 4 >= 3; E_answer = 0 < 1; stopped. score = 0.75 + (2 - 0)/2 + 1 = 2.75
    assert r1["flags"] == "ungrounded,low_evidence_answer,not_recovered"
    assert r1["ungrounded_share"] == 0.75 and r1["n_reasoning_labeled"] == 4
    assert r1["score"] == pytest.approx(2.75)
    # t2: n_r = 1 < 3 so not "ungrounded"; E = 2 at the answer; recovered at turn 3; r = 2 of 3 queries.
    assert r2["flags"] == "repeated_queries"
    assert (r2["repeated_queries"], r2["n_queries"], r2["recovery_turn"]) == (2, 3, 3.0)
    assert r2["score"] == pytest.approx(2 / 3)
    assert r3["flags"] == "" and r3["score"] == 0.0
    # t4: E_answer = 1 is not below 1; stopped -> not_recovered only, score 1.
    assert r4["flags"] == "not_recovered" and r4["evidence_at_answer"] == 1.0 and r4["score"] == 1.0


def test_thresholds_move_the_flags(small):
    audit = trace_audit(*small, ungrounded_threshold=0.8, min_reasoning_labeled=1, answer_evidence_below=2,
                        repeated_queries_threshold=3)
    # t1: u = 0.75 < 0.8 -> not ungrounded; t2: n_r = 1 >= 1 and u = 1 -> ungrounded; r = 2 < 3 -> no repeat flag;
    # t4: E = 1 < 2 -> low evidence, severity (2 - 1)/2 = 0.5, score 1.5.
    assert _row(audit, "t1")["flags"] == "low_evidence_answer,not_recovered"
    assert _row(audit, "t2")["flags"] == "ungrounded"
    assert _row(audit, "t4")["flags"] == "low_evidence_answer,not_recovered"
    assert _row(audit, "t4")["score"] == pytest.approx(1.5)
    off = trace_audit(*small, answer_evidence_below=0)
    assert not off["low_evidence_answer"].any()


def test_recovery_horizon(small):
    # t2 recovers at turn 3: late for a horizon of 2, in time for 3.
    assert "not_recovered" in _row(trace_audit(*small, recovery_horizon=2), "t2")["flags"]
    assert "not_recovered" not in _row(trace_audit(*small, recovery_horizon=3), "t2")["flags"]


@pytest.mark.parametrize("option", [{"ungrounded_threshold": 0.0}, {"ungrounded_threshold": 1.5},
                                    {"min_reasoning_labeled": 0}, {"answer_evidence_below": 3},
                                    {"repeated_queries_threshold": 0}, {"recovery_horizon": -1}])
def test_invalid_thresholds_are_user_errors(small, option):
    with pytest.raises(UserInputError):
        trace_audit(*small, **option)


def test_rates_and_worst(small):
    audit = trace_audit(*small)
    rates = audit_flag_rates(audit).set_index("agent")
    # agent a: t1 and t2 both flagged; ungrounded 1 of 2; agent b: t4 flagged, t3 not.
    assert rates.loc["a", "flagged"] == 1.0 and rates.loc["a", "ungrounded"] == 0.5
    assert rates.loc["b", "flagged"] == 0.5 and rates.loc["b", "not_recovered"] == 0.5
    assert rates.loc["a", "mean_score"] == pytest.approx((2.75 + 2 / 3) / 2)
    worst = worst_traces(audit, 1)
    assert worst["trace_id"].tolist() == ["t1", "t4"]  # per agent, in agent order; t3 (score 0) never listed
    assert worst_traces(audit, 10, by=None)["trace_id"].tolist() == ["t1", "t4", "t2"]
    with pytest.raises(UserInputError):
        worst_traces(audit, -1)


def test_shared_data_flags_discriminate(shared_tables):
    """The figure the issue asks for: before, 169 of 190 traces were flagged."""
    steps, traces = shared_tables
    audit = trace_audit(steps, traces)
    flagged = int((audit["flags"] != "").sum())
    # Independent recomputation of the flags from the audit's own columns (the definitions, written out).
    expect = 0
    for r in audit.itertuples(index=False):
        ung = (not math.isnan(r.ungrounded_share)) and r.ungrounded_share >= 0.75 and r.n_reasoning_labeled >= 3
        low = r.answered and not math.isnan(r.evidence_at_answer) and r.evidence_at_answer < 1
        expect += bool(ung or low or r.recovery != "recovered" or r.repeated_queries >= 2)
    print(f"\nflagged {flagged} of {len(audit)} shared traces (was 169 with the old flags)")
    assert flagged == expect
    assert flagged < 169
    rates = audit_flag_rates(audit).set_index("agent")["repeated_queries"]
    assert rates.max() - rates.min() > 0.5  # one agent repeats its queries, the others hardly ever


@st.composite
def options(draw):
    return {"ungrounded_threshold": draw(st.sampled_from([0.25, 0.5, 0.75, 1.0])),
            "min_reasoning_labeled": draw(st.integers(1, 4)),
            "answer_evidence_below": draw(st.sampled_from([0, 1, 2])),
            "repeated_queries_threshold": draw(st.integers(1, 4)),
            "recovery_horizon": draw(st.sampled_from([None, 0, 1, 2, 5]))}


@pytest.fixture(scope="module")
def sample_tables():
    from seekbench.data import sample_traces_path
    from seekbench.traces import build_tables, read_traces

    return build_tables(read_traces(sample_traces_path()).traces)


@settings(max_examples=25, deadline=None)
@given(opts=options(), bump=st.sampled_from(["ungrounded_threshold", "min_reasoning_labeled",
                                            "repeated_queries_threshold"]))
def test_score_invariants_and_monotone_thresholds(sample_tables, opts, bump):
    audit = trace_audit(*sample_tables, **opts)
    assert ((audit["score"] == 0) == (audit["flags"] == "")).all()
    assert audit["score"].between(0, len(FLAGS)).all()
    stricter = dict(opts)
    stricter[bump] = min(opts[bump] + (0.25 if bump == "ungrounded_threshold" else 1),
                         1.0 if bump == "ungrounded_threshold" else 10)
    strict = trace_audit(*sample_tables, **stricter)
    # A stricter threshold never raises a flag that the looser one did not.
    for loose_f, strict_f in zip(audit["flags"], strict["flags"]):
        assert set(filter(None, strict_f.split(","))) <= set(filter(None, loose_f.split(",")))
    assert (strict["score"] <= audit["score"] + 1e-12).all()


def test_rates_of_empty_groups_are_not_invented():
    audit = pd.DataFrame({"agent": ["a"], "flags": [""], "score": [0.0]})
    assert audit_flag_rates(audit)["flagged"].tolist() == [0.0]
    assert worst_traces(audit.assign(trace_id=["x"]), 3).empty


def test_docstring_examples_run():
    import doctest

    import seekbench.metrics._audit as mod

    result = doctest.testmod(mod)
    assert result.attempted >= 3 and result.failed == 0
