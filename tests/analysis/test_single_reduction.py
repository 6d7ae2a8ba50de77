"""``analyze`` reduces the steps to the per-trace statistics table once, and every per-group number it
shows (the process metrics, the comparison's values and paired differences) is aggregated from that one
table: a table given to it is used everywhere, and the steps are not reduced again behind it."""

from __future__ import annotations

import copy
import json
import warnings

import pandas as pd
import pytest

from seekbench._errors import UndefinedMetricWarning
from seekbench.analysis import analyze, compare_agents
from seekbench.data import sample_traces_path
from seekbench.metrics import MetricOptions, summarize, trace_statistics
from seekbench.traces import build_tables, read_traces

BY = ("agent", "dataset")  # grouped otherwise than by agent: the comparison needs its own per-agent summary


@pytest.fixture(scope="module")
def sample():
    traces = read_traces(sample_traces_path()).traces
    return traces, *build_tables(traces)


def _flipped(traces: list[dict]) -> list[dict]:
    """The traces with every grounding label turned over (Grounded <-> NotGrounded): other RQI values."""
    out = copy.deepcopy(traces)
    turn = {"Grounded": "NotGrounded", "NotGrounded": "Grounded"}
    for t in out:
        for s in t["steps"]:
            labels = s.get("labels") or {}
            if labels.get("grounding") in turn:
                labels["grounding"] = turn[labels["grounding"]]
    return out


def _numbers(a) -> str:
    """Every group number and comparison row as text (NaN written as NaN, so equal NaNs compare equal)."""
    parts = (
        a.process.summary.to_dict(),
        a.comparison.values.to_dict("list"),
        a.comparison.differences.to_dict("list"),
        a.comparison.metrics.to_dict("list"),
    )
    return json.dumps(parts, sort_keys=True, default=str)


def _analyze(traces, steps, table, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return analyze(steps, table, trace_dicts=traces, by=BY, n_boot=40, seed=1, explorer=False, **kw)


def test_every_group_number_comes_from_the_one_table(sample):
    # The statistics of the flipped labels given beside the original steps: had any part of the analysis
    # reduced the steps again (the comparison's per-agent summary, its paired columns), its RQI would be
    # the original labels' and differ from the analysis of the flipped traces.
    traces, steps, table = sample
    flipped = _flipped(traces)
    f_steps, f_table = build_tables(flipped)
    assert summarize(steps, table, n_boot=0).groups[0]["rqi"] != summarize(f_steps, f_table, n_boot=0).groups[0]["rqi"]
    given = _analyze(traces, steps, table, statistics=trace_statistics(f_steps, f_table))
    assert _numbers(given) == _numbers(_analyze(flipped, f_steps, f_table))


def test_a_given_table_changes_nothing(sample):
    traces, steps, table = sample
    opts = MetricOptions(ce_aggregate="pooled", rqi_aggregate="step")
    kw = opts.as_dict()
    made = _analyze(traces, steps, table, statistics=trace_statistics(steps, table, options=opts), **kw)
    assert _numbers(made) == _numbers(_analyze(traces, steps, table, **kw))


def test_compare_agents_reads_the_given_table(sample):
    traces, steps, table = sample
    f_steps, f_table = build_tables(_flipped(traces))
    summary = summarize(f_steps, f_table, n_boot=0)
    given = compare_agents(steps, table, summary, statistics=trace_statistics(f_steps, f_table), n_boot=40)
    own = compare_agents(f_steps, f_table, summary, n_boot=40)
    pd.testing.assert_frame_equal(given.differences, own.differences)


def test_a_table_of_other_traces_is_refused(sample):
    traces, steps, table = sample
    stats = trace_statistics(steps, table).iloc[::-1].reset_index(drop=True)
    with pytest.raises(ValueError, match="in its order"):
        _analyze(traces, steps, table, statistics=stats)
