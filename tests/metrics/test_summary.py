"""summarize(): per-group dicts, hand-derived values, options, no-label corpora, shared data."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from _helpers import make_trace, subset, tables

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.metrics._ce import calibration_error, evidence_prevalence
from seekbench.metrics._summary import MetricsSummary, summarize

# Agent x (the traces of test_ce.py):
# T1  r(G) s o(C,I) r(N) s o(C,S) r(G) a   correct   E: 0, 1, 2 (answers at 2), recovered at turn 2
# T2  r(N) r(N) s o(U,S) r(G) r(N) a        wrong     E: 0, 1 (answers at 1), stopped at turn 1
# T3  s o(C,S) s o(C,S)                     no answer E: 0, 2, 2, recovered at turn 1
# Agent y:
# T4  r(N) a                                wrong     answers at turn 0 holding E = 0, stopped at 0
T1 = [("r", "G"), ("s",), ("o", "C", "I"), ("r", "N"), ("s",), ("o", "C", "S"), ("r", "G"), ("a",)]
T2 = [("r", "N"), ("r", "N"), ("s",), ("o", "U", "S"), ("r", "G"), ("r", "N"), ("a",)]
T3 = [("s",), ("o", "C", "S"), ("s",), ("o", "C", "S")]
T4 = [("r", "N"), ("a",)]

KEYS = ["agent", "n_traces", "n_steps", "n_answered", "rqi", "rqi_ci", "ce", "ce_ci", "overconfident",
        "overconfident_ci", "overcautious", "overcautious_ci", "overcautious_given_e2", "n_reached_e2", "erf",
        "erf_ci", "erf_raw", "median_recovery_turn", "recovered_by_8", "recovered_by_8_ci", "accuracy", "accuracy_ci", "em", "f1", "tool_calls",
        "searches_before_answer", "duplicate_query_rate", "duplicate_visit_rate", "unlabeled", "rqi_by_type",
        "rqi_by_evidence", "answer_rate_by_evidence", "accuracy_by_evidence"]


@pytest.fixture
def corpus():
    return tables([make_trace(T1, trace_id="t1", correct=True), make_trace(T2, trace_id="t2", correct=False),
                   make_trace(T3, trace_id="t3"), make_trace(T4, trace_id="t4", agent="y", correct=False)])


def _quiet(*args, **kw) -> MetricsSummary:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return summarize(*args, **kw)


def test_group_keys_and_hand_values(corpus):
    s = _quiet(*corpus, n_boot=200)
    x, y = s.groups
    assert list(x) == KEYS and list(y) == KEYS
    assert (x["agent"], x["n_traces"], x["n_steps"], x["n_answered"]) == ("x", 3, 19, 2)
    assert x["rqi"] == pytest.approx(11 / 24)  # (2/3 + 1/4) / 2; T3 has no reasoning
    assert x["ce"] == pytest.approx(7 / 18)  # (0 + 1/2 + 2/3) / 3
    assert x["overconfident"] == 0.5 and x["overcautious"] == pytest.approx(1 / 3)
    # Recovered T3 at 1, T1 at 2; T2 stopped at 1; nothing cut off: AJ = raw = (0, 1/3, 2/3), and
    # the curve keeps 2/3 on every later integer turn up to 8.
    expected = {"0": 0.0, "1": 1 / 3, **{str(t): 2 / 3 for t in range(2, 9)}}
    assert x["erf"] == pytest.approx(expected)
    assert x["erf_raw"] == pytest.approx(expected)
    assert x["median_recovery_turn"] == 2.0 and x["recovered_by_8"] == pytest.approx(2 / 3)
    assert x["accuracy"] == 0.5 and x["tool_calls"] == pytest.approx(5 / 3)
    assert np.isnan(x["em"])  # no gold answers
    assert x["unlabeled"]["traces_without_labeled_reasoning"] == 1
    assert x["unlabeled"]["traces_without_correctness"] == 1
    assert x["rqi_by_evidence"]["2"] == {"rqi": 1.0, "n": 1, "share": pytest.approx(1 / 7)}
    assert x["accuracy_by_evidence"]["2"]["accuracy"] == 1.0
    for name in ("rqi", "ce", "accuracy", "overconfident", "overcautious", "recovered_by_8"):
        lo, hi = x[f"{name}_ci"]
        assert lo <= x[name] <= hi
    # y: one trace answering at turn 0 with E = 0, wrong.
    assert (y["rqi"], y["ce"], y["overconfident"], y["overcautious"], y["accuracy"]) == (0.0, 1.0, 1.0, 0.0, 0.0)
    assert y["erf"] == {str(t): 0.0 for t in range(9)} and y["median_recovery_turn"] is None  # common time grid


def test_pooled_global_prevalence_comes_from_the_whole_corpus(corpus):
    x = _quiet(*corpus, ce_aggregate="pooled", n_boot=0).groups[0]
    # Corpus P(E) = (4/9, 2/9, 3/9) -> x: 2/9 * 1/2 + 3/9 * 2/3 = 1/3 (see test_ce.py).
    assert x["ce"] == pytest.approx(1 / 3)
    prev = evidence_prevalence(*corpus)
    assert x["ce"] == pytest.approx(calibration_error(*subset(*corpus, agent="x"), aggregate="pooled",
                                                      global_prevalence=prev))
    assert _quiet(*corpus, ce_aggregate="pooled", ce_prevalence="group", n_boot=0).groups[0]["ce"] == \
        pytest.approx(3 / 8)


def test_options_reach_the_metrics(corpus):
    base = _quiet(*corpus, n_boot=0).groups[0]
    assert _quiet(*corpus, rqi_aggregate="step", n_boot=0).groups[0]["rqi"] == pytest.approx(3 / 7)
    assert _quiet(*corpus, decision_points="step", n_boot=0).groups[0]["ce"] != pytest.approx(base["ce"])
    # recovery="evidence": answers never recover; here the same events (T1 recovers by evidence).
    ev = _quiet(*corpus, recovery="evidence", n_boot=0).groups[0]
    assert ev["erf"] == pytest.approx(base["erf"])
    s = _quiet(*corpus, n_boot=0, erf_method="km")
    assert s.options["erf_method"] == "km" and s.options["by"] == ["agent"]


def test_no_labels_gives_nan_never_zero():
    corpus = tables([make_trace([("r",), ("s",), ("o",), ("r",), ("a",)], trace_id="a", correct=True),
                     make_trace([("s",), ("o",), ("a",)], trace_id="b", correct=False)])
    with pytest.warns(UndefinedMetricWarning) as record:
        s = summarize(*corpus, n_boot=100)
    messages = " ".join(str(w.message) for w in record)
    assert "RQI" in messages and "CE" in messages and "ERF" in messages
    g = s.groups[0]
    for key in ("rqi", "ce", "overconfident", "overcautious", "recovered_by_8"):
        assert np.isnan(g[key]), key
    assert all(np.isnan(v) for v in g["erf"].values())
    assert g["median_recovery_turn"] is None
    assert g["accuracy"] == 0.5  # correctness does not need step labels
    assert g["unlabeled"]["reasoning_steps_without_grounding"] == 2
    assert g["unlabeled"]["observations_without_evidence"] == 2
    assert g["unlabeled"]["traces_without_labeled_reasoning"] == 2
    assert g["unlabeled"]["traces_with_all_observations_unlabeled"] == 2
    d = s.to_dict()
    json.dumps(d, allow_nan=False)  # NaN became null
    assert d["groups"][0]["rqi"] is None and d["groups"][0]["rqi_ci"] == [None, None]
    assert d["groups"][0]["erf"] == {str(t): None for t in range(9)}
    assert d["groups"][0]["recovered_by_8_ci"] == [None, None]


def test_unknown_options_raise_user_error(corpus):
    for kw in ({"evidence_mapping": "max"}, {"evidence_scope": "all"}, {"ce_aggregate": "mean"},
               {"ce_prevalence": "corpus"}, {"decision_points": "token"}, {"recovery": "answer"},
               {"erf_method": "nelson"}, {"time": "second"}, {"rqi_aggregate": "mean"}, {"cluster": "agent"}):
        name = next(iter(kw))
        with pytest.raises(UserInputError, match=f"unknown {name}"):
            summarize(*corpus, **kw)
    with pytest.raises(UserInputError, match="cannot group by model"):
        summarize(*corpus, by="model")


def test_to_frame_and_grouping_by_two_columns(corpus):
    s = _quiet(*corpus, by=("agent", "question_id"), n_boot=0)
    assert len(s.groups) == 4 and {"agent", "question_id"} <= set(s.groups[0])
    frame = _quiet(*corpus, n_boot=0).to_frame()
    assert list(frame["agent"]) == ["x", "y"]
    assert {"rqi", "rqi_ci_lo", "rqi_ci_hi", "unlabeled.other_steps"} <= set(frame.columns)
    assert "erf" not in frame.columns


def test_shared_data_summary(shared_tables):
    steps, traces = shared_tables
    assert len(traces) == 190 and traces["agent"].nunique() == 5
    counts = steps["kind"].value_counts()
    assert (counts["reasoning"], counts["search"], counts["search_result"], counts["answer"]) == (630, 529, 490, 188)
    with pytest.warns(UndefinedMetricWarning, match="duplicate-visit"):  # the release has no visit tool
        s = summarize(steps, traces, n_boot=300)
    assert len(s.groups) == 5
    assert sum(g["n_traces"] for g in s.groups) == 190 and sum(g["n_steps"] for g in s.groups) == 1837
    for g in s.groups:
        assert list(g) == KEYS
        for name in ("rqi", "ce", "accuracy"):
            assert 0.0 <= g[f"{name}_ci"][0] <= g[name] <= g[f"{name}_ci"][1] <= 1.0
        assert 0.0 <= g["overconfident"] <= 1.0 and 0.0 <= g["recovered_by_8"] <= 1.0
        # Every integer turn 0 .. 8 (the last turn of any trace here is 8, a SearchR1 trace).
        assert list(g["erf"]) == list(g["erf_ci"]) == list(g["erf_raw"]) == [str(t) for t in range(9)]
        assert g["erf"]["8"] == g["recovered_by_8"]
        for name in ("overconfident", "overcautious", "recovered_by_8"):
            assert 0.0 <= g[f"{name}_ci"][0] <= g[name] <= g[f"{name}_ci"][1] <= 1.0
        assert g["unlabeled"]["reasoning_steps_without_grounding"] == 0
    assert sum(g["unlabeled"]["observations_without_evidence"] for g in s.groups) == 23
    json.dumps(s.to_dict(), allow_nan=False)


def test_erf_reaches_turn_8_even_when_traces_end_earlier():
    # One trace: s o(C,S) a -> recovered at 1, nothing later. The old summary stopped at the
    # last event time ({"1": 1.0}) while recovered_by_8 existed; every turn 0..8 is there now.
    corpus = tables([make_trace([("s",), ("o", "C", "S"), ("a",)], correct=True)])
    g = _quiet(*corpus, n_boot=0).to_dict()["groups"][0]
    assert g["erf"] == {"0": 0.0, **{str(t): 1.0 for t in range(1, 9)}}
    assert g["erf"]["8"] == g["recovered_by_8"] == 1.0
    # One number, one interval (spec section 3): ERF(8)'s is the curve's own (delta method), whatever n_boot.
    assert g["recovered_by_8_ci"] == g["erf_ci"]["8"]
