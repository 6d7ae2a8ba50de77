"""The per-trace statistics table: fixed columns, hand values, and chunked reduction equal to one pass."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.metrics import (
    TRACE_STATISTICS_COLUMNS,
    MetricOptions,
    summarize,
    summarize_statistics,
    trace_statistics,
)

RELEASED = MetricOptions(evidence_mapping="sufficiency_first", ce_aggregate="pooled", decision_points="step",
                         recovery="evidence", erf_method="km", time="step", rqi_aggregate="step")


def _json(summary) -> str:
    return json.dumps(summary.to_dict(), sort_keys=False)


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


def _chunked(steps: pd.DataFrame, traces: pd.DataFrame, cuts: list[int], options: MetricOptions) -> pd.DataFrame:
    """The tables of the trace chunks between ``cuts``, each reduced from its own steps only."""
    bounds = [0, *sorted(set(cuts)), len(traces)]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        tr = traces.iloc[lo:hi]
        parts.append(trace_statistics(steps[steps["trace_id"].isin(tr["trace_id"])], tr, options=options))
    return pd.concat(parts, ignore_index=True)


def test_columns_and_dtypes_are_fixed(shared_tables):
    steps, traces = shared_tables
    stats = trace_statistics(steps, traces)
    assert len(stats) == len(traces) and stats["trace_id"].tolist() == traces["trace_id"].tolist()
    assert list(stats.columns[-len(TRACE_STATISTICS_COLUMNS):]) == list(TRACE_STATISTICS_COLUMNS)
    for name, (dtype, _) in TRACE_STATISTICS_COLUMNS.items():
        assert str(stats[name].dtype) == dtype, name
    assert {"trace_id", "agent", "dataset", "question_id"} <= set(stats.columns)
    assert not {"question", "gold_answers", "final_answer"} & set(stats.columns)  # free text stays out
    assert int(stats["n_step_rows"].sum()) == len(steps)


def test_hand_values_of_two_traces():
    # t1: reasoning (G, PF) at turn 0; search; result Clear+Sufficient (E = 2 at turn 1); reasoning (N, IS); answer.
    # t2: search; result Unclear+Insufficient (E 0); search; no result; answer at turn 2 holding E = 0; wrong.
    t1 = make_trace([("r", "G", "PF"), ("s",), ("o", "C", "S"), ("r", "N", "IS"), ("a",)], trace_id="t1", correct=True)
    t2 = make_trace([("s", "q"), ("o", "U", "I"), ("s", "q"), ("a",)], trace_id="t2", correct=False)
    stats = trace_statistics(*tables([t1, t2])).set_index("trace_id")
    r1, r2 = stats.loc["t1"], stats.loc["t2"]
    assert (r1["rqi_g"], r1["rqi_n"], r1["rqi_g_PlanFormation"], r1["rqi_n_InformationSynthesis"]) == (1, 2, 1, 1)
    assert (r1["rqi_n_e0"], r1["rqi_g_e0"], r1["rqi_n_e2"], r1["rqi_g_e2"]) == (1, 1, 1, 0)  # G at E 0, N at E 2
    # t1 decision points: turn 0 at E 0 (continue), turn 1 at E 2 (answer).
    assert [r1[f"ce_{c}"] for c in ("n0", "n1", "n2", "a0", "a1", "a2")] == [1, 0, 1, 0, 0, 1]
    assert (r1["e_answer"], r1["first_e2"], r1["erf_duration"], r1["erf_event"]) == (2, 1, 1, 1)
    # t2: turns 0, 1, 2 at E 0, answering at 2: three E = 0 points, one answer; stopped at turn 2.
    assert [r2[f"ce_{c}"] for c in ("n0", "n1", "n2", "a0", "a1", "a2")] == [3, 0, 0, 1, 0, 0]
    assert (r2["e_answer"], np.isnan(r2["first_e2"]), r2["erf_duration"], r2["erf_event"]) == (0, True, 2, 2)
    assert (r2["tool_calls"], r2["searches_before_answer"], r2["duplicate_query"]) == (2, 2, 0.5)
    assert (r1["correct"], r2["correct"], r2["rqi_n"], r2["n_obs"], r2["n_obs_unlabeled"]) == (1, 0, 0, 1, 0)


@pytest.mark.parametrize("options", [MetricOptions(), RELEASED, MetricOptions(ce_aggregate="pooled")])
def test_summarize_is_the_aggregate_of_the_table(shared_tables, options):
    steps, traces = shared_tables
    kw = {"by": ("agent", "dataset"), "n_boot": 150, "seed": 5, "overcautious_window": 3}
    direct = _quiet(summarize, steps, traces, options=options, **kw)
    via = _quiet(summarize_statistics, trace_statistics(steps, traces, options=options), options=options, **kw)
    assert _json(direct) == _json(via)


@pytest.mark.parametrize(("options", "cuts"), [(MetricOptions(), [1]), (MetricOptions(), [17, 60, 61, 150]),
                                               (RELEASED, [5, 95, 120]),
                                               (MetricOptions(ce_aggregate="pooled"), [40, 41, 42])])
def test_chunks_reduce_to_the_one_table_and_the_same_summary(shared_tables, options, cuts):
    # The global prevalence of pooled CE crosses chunks: it must come out of the summed columns.
    steps, traces = shared_tables
    whole = trace_statistics(steps, traces, options=options)
    chunked = _chunked(steps, traces, cuts, options)
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)
    kw = {"by": ("agent",), "n_boot": 200, "seed": 11, "options": options}
    assert _json(_quiet(summarize_statistics, chunked, **kw)) == _json(_quiet(summarize_statistics, whole, **kw))


_STEP = st.sampled_from([("r", "G", "PF"), ("r", "N", "IS"), ("r", None, None), ("s", "q"), ("s", "p"), ("s",),
                         ("o", "C", "S"), ("o", "U", "S"), ("o", "C", "I"), ("o", None, None), ("x",)])
_TRACE = st.tuples(st.lists(_STEP, max_size=8), st.booleans(), st.sampled_from([True, False, None]),
                   st.sampled_from(["a", "b"]))


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.lists(_TRACE, min_size=1, max_size=9), st.lists(st.integers(0, 9), max_size=4),
       st.sampled_from([MetricOptions(), RELEASED, MetricOptions(evidence_scope="latest", ce_aggregate="pooled")]))
def test_any_split_at_trace_boundaries_gives_the_same_summary(specs, cuts, options):
    trs = [make_trace(list(spec) + ([("a",)] if answers else []), trace_id=f"t{i}", agent=agent, correct=correct,
                      question_id=f"q{i % 3}")
           for i, (spec, answers, correct, agent) in enumerate(specs)]
    steps, traces = tables(trs)
    cuts = [c for c in cuts if c < len(traces)]
    whole = trace_statistics(steps, traces, options=options)
    chunked = _chunked(steps, traces, cuts, options)
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)
    for cluster in ("trace", "question"):
        kw = {"n_boot": 50, "seed": 2, "cluster": cluster, "options": options}
        expected = _json(_quiet(summarize, steps, traces, **kw))
        assert _json(_quiet(summarize_statistics, chunked, **kw)) == expected


def test_a_table_made_with_other_options_is_refused(shared_tables):
    steps, traces = shared_tables
    stats = trace_statistics(steps.head(40), traces.head(5))
    with pytest.raises(UserInputError, match="made with time='turn'"):
        summarize_statistics(stats, options=MetricOptions(time="step"), n_boot=0)
    # Options that only enter the aggregation are free.
    _quiet(summarize_statistics, stats, options=MetricOptions(erf_method="km", ce_aggregate="pooled"), n_boot=0)


def test_duplicate_trace_ids_are_a_user_error():
    steps, traces = tables([make_trace([("a",)], trace_id="t1")])
    with pytest.raises(UserInputError, match="more than once"):
        trace_statistics(steps, pd.concat([traces, traces]))
