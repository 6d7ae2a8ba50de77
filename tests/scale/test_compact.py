"""Compact rows: what a worker sends holds no Python string per row, and the driver's join equals pd.concat."""

import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _scale_helpers import corpus, per_trace, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from seekbench import UserInputError
from seekbench.scale import FragmentWork, reduce_traces
from seekbench.scale._compact import CompactRows, compact_rows, join_rows
from seekbench.scale._reduce import _first_sightings
from seekbench.traces import _fragments, build_tables, plan_fragments


def test_a_worker_sends_columns_without_a_python_string_per_row(tmp_path):
    traces = corpus(3)
    write_jsonl(tmp_path / "c.jsonl", traces)
    (fragment,) = plan_fragments([str(tmp_path / "c.jsonl")], ["canonical"])
    res = FragmentWork(per_trace)(fragment)
    assert isinstance(res.rows, CompactRows) and res.rows.n == len(traces)
    assert "trace_id" not in res.rows.names and res.rows.ids_at == 0  # the ids travel once, as Arrow strings
    assert isinstance(res.ids, pa.Array) and res.ids.to_pylist() == [t["trace_id"] for t in traces]
    assert res.lines.tolist() == list(range(1, len(traces) + 1))
    assert res.log.ids == [] and res.log.lines == []
    for name, col in zip(res.rows.names, res.rows.columns, strict=True):
        if name == "agent":  # strings: codes into the few distinct values
            assert isinstance(col, pd.Categorical) and len(col.categories) < 10
        else:
            assert isinstance(col, np.ndarray) and col.dtype != object, name
    assert_frame_equal(res.rows.frame(res.ids), per_trace(*build_tables(traces)))  # nothing lost on the way
    assert pickle.loads(pickle.dumps(res)).ids.equals(res.ids)


def _parts(frames):
    """Frames as a worker sends them, with made-up ids."""
    out, k = [], 0
    for f in frames:
        ids = [f"t{k + i}" for i in range(len(f))]
        k += len(f)
        out.append((compact_rows(f, ids), pa.array(ids, type=pa.string())))
    return out


def test_the_join_is_pd_concat_for_any_mix_of_column_types():
    a = pd.DataFrame({"s": ["x", None, "y"], "b": [True, False, True], "i": pd.array([1, None, 3], dtype="Int64")})
    b = pd.DataFrame({"s": ["y", 3, None], "b": [0.5, 1.0, np.nan], "i": pd.array([4, 5, 6], dtype="Int64")})
    c = pd.DataFrame({"s": [None, None], "b": [False, False], "i": pd.array([None, 7], dtype="Int64")})
    a.attrs = b.attrs = c.attrs = {"made": 1}
    keep = np.array([True, False, True, True, True, False, True, True])
    want = pd.concat([a, b, c], ignore_index=True)[keep].reset_index(drop=True)
    got = join_rows(_parts([a, b, c]), keep, strings="object")
    assert_frame_equal(got, want)
    assert got["s"].tolist() == want["s"].tolist()  # None stays None (not NaN)
    assert got.attrs == {"made": 1}
    # Fragments with other columns (or not unique ones) take pandas' own path.
    d = pd.DataFrame({"s": ["z"], "extra": [1.0]})
    assert_frame_equal(
        join_rows(_parts([a, d]), np.ones(4, bool), strings="object"), pd.concat([a, d], ignore_index=True)
    )
    assert join_rows([], np.ones(0, bool), strings="object").empty


def test_compact_strings_are_categoricals_and_arrow_ids_with_the_same_values(tmp_path, monkeypatch):
    monkeypatch.setattr(_fragments, "JSONL_BYTES", 20_000)
    traces = corpus(3)
    write_jsonl(tmp_path / "c.jsonl", [*traces, traces[4]])  # one duplicate: the rows left are filtered
    plain = reduce_traces(tmp_path / "c.jsonl", per_trace, jobs=1, skip_invalid=True)
    small = reduce_traces(tmp_path / "c.jsonl", per_trace, jobs=1, skip_invalid=True, strings="compact")
    assert small.n_fragments > 2 and len(small.read.skipped) == 1
    agent = small.rows["agent"]
    assert isinstance(agent.dtype, pd.CategoricalDtype)
    assert list(agent.cat.categories) == sorted(set(agent))  # only values left, sorted
    assert "trace_id" not in small.rows and small.ids.to_pylist() == plain.rows["trace_id"].tolist()
    assert small.ids.equals(plain.ids)
    assert_frame_equal(small.rows.astype({"agent": object}), plain.rows.drop(columns="trace_id"))
    with pytest.raises(UserInputError, match="strings="):
        reduce_traces(tmp_path / "c.jsonl", per_trace, strings="tiny")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "ab", "", "é", "zz"]), max_size=8), max_size=5))
def test_first_sightings_are_the_first_position_of_each_id(chunks):
    ids = pa.chunked_array([pa.array(c, type=pa.string()) for c in chunks], type=pa.string())
    flat = [x for c in chunks for x in c]
    first = {}
    want = [first.setdefault(x, i) for i, x in enumerate(flat)]
    got = _first_sightings(ids)
    assert (got is None and want == list(range(len(flat)))) or got.tolist() == want
