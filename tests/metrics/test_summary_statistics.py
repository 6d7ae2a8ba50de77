"""summarize_statistics on the shapes a large corpus gives it: categorical keys, no trace ids, groups one
at a time (no copy of the table), and groups computed on an executor; always the same summary JSON."""

from __future__ import annotations

import json
import multiprocessing
import tracemalloc
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pytest

from seekbench._errors import UndefinedMetricWarning
from seekbench.data import sample_traces_path
from seekbench.metrics import MetricOptions, summarize_statistics, trace_statistics
from seekbench.traces import build_tables, read_traces

POOLED = MetricOptions(ce_aggregate="pooled")


def _run(stats: pd.DataFrame, **kw) -> tuple[str, list[str]]:
    """The summary as JSON text, and the messages of the warnings it raised, in order."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", FutureWarning)  # pandas' observed=False deprecation among them
        summary = summarize_statistics(stats, **kw)
    return json.dumps(summary.to_dict()), [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def sample_stats() -> pd.DataFrame:
    return trace_statistics(*build_tables(read_traces(sample_traces_path()).traces))


@pytest.fixture(scope="module")
def shared_stats(shared_tables) -> pd.DataFrame:
    stats = trace_statistics(*shared_tables)
    # Missing keys make a group of their own (last, null in the JSON): give some rows none.
    stats.loc[stats.index[::7], "dataset"] = None
    return stats


@pytest.fixture(params=["sample", "shared"])
def stats(request) -> pd.DataFrame:
    return request.getfixturevalue(f"{request.param}_stats")


def _categorical(column: pd.Series) -> pd.Series:
    """The column as a category, its categories in reverse order plus one no row has."""
    values = sorted(column.dropna().unique(), reverse=True)
    return column.astype(pd.CategoricalDtype([*values, "never-seen"]))


@pytest.mark.parametrize("kind", ["category", "string"])
@pytest.mark.parametrize("by", [("agent",), ("dataset",), ("agent", "dataset")])
def test_categorical_keys_give_the_object_keys_summary(stats, by, kind):
    # Groups in the order of their values (not of the categories), none for an unseen category,
    # and the same keys in the JSON (a missing string is pandas' NA: null too); no FutureWarning.
    convert = _categorical if kind == "category" else lambda column: column.astype("string")
    cat = stats.assign(**{c: convert(stats[c]) for c in by})
    kw = {"by": by, "n_boot": 40, "seed": 3}
    expected = _run(stats, **kw)
    assert _run(cat, **kw) == expected
    assert len(json.loads(expected[0])["groups"]) == len(stats[list(by)].drop_duplicates())


@pytest.mark.parametrize("cluster", ["trace", "question"])
@pytest.mark.parametrize("options", [MetricOptions(), POOLED])
def test_a_table_without_trace_ids_gives_the_same_summary(stats, cluster, options):
    # Each row is its own resampling unit (with cluster="question", each row without a question).
    with_ids = stats.copy()
    with_ids.loc[with_ids.index[::5], "question_id"] = None
    kw = {"by": ("agent",), "n_boot": 60, "seed": 7, "cluster": cluster, "options": options}
    assert _run(with_ids.drop(columns="trace_id"), **kw) == _run(with_ids, **kw)


def test_the_table_is_neither_copied_nor_changed(shared_stats):
    # 190 traces x 120: one group's rows at a time are copied, never the whole table
    # (the old code held two copies: reset_index and the list of all groups).
    big = pd.concat([shared_stats] * 120, ignore_index=True)
    big["trace_id"] = np.arange(len(big)).astype(str)
    big.attrs = {"metric_options": dict(shared_stats.attrs["metric_options"])}
    before = big.copy()
    table_bytes = int(big.memory_usage(deep=False).sum())
    tracemalloc.start()
    try:
        _run(big, by=("agent", "dataset"), n_boot=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < table_bytes / 2, (peak, table_bytes)
    pd.testing.assert_frame_equal(big, before)
    assert big.attrs == before.attrs


@pytest.fixture(scope="module")
def pool():
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as executor:
        yield executor


def test_groups_in_worker_processes_give_the_same_summary_and_warnings(stats, pool):
    kw = {"by": ("agent", "dataset"), "n_boot": 50, "seed": 1, "cluster": "question", "options": POOLED}
    assert _run(stats, executor=pool, **kw) == _run(stats, **kw)
    # No labels at all: every label-dependent number undefined, with the reasons (and their
    # groups) reported in the same order as when the groups are computed here.
    bare = stats.assign(n_obs_unlabeled=stats["n_obs"], rqi_n=0.0, rqi_g=0.0)
    here = _run(bare, by=("agent",), n_boot=30, seed=4)
    assert _run(bare, by=("agent",), n_boot=30, seed=4, executor=pool) == here
    assert any("undefined" in m and "[groups: " in m for m in here[1])


def test_an_empty_table_gives_no_groups(sample_stats):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        assert summarize_statistics(sample_stats.iloc[:0], n_boot=10).groups == []
