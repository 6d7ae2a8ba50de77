"""Parquet: lossless round trip, the columnar tables equal the dict path's, and bad files fail cleanly."""

import copy
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from seekbench import UserInputError
from seekbench.data import sample_traces_path
from seekbench.metrics import summarize
from seekbench.traces import build_tables, detect_format, read_traces, validate_trace
from seekbench.traces._read import read_tables
from seekbench.traces.importers import _parquet
from seekbench.traces.importers._parquet import write_parquet
from seekbench.traces.importers._parquet_layout import SCHEMA
from seekbench.traces.importers._parquet_tables import read_tables as columnar_tables

SAMPLE = read_traces(sample_traces_path()).traces

#: Corners of the canonical format: absent vs null keys, no steps, null correctness, empty objects.
EDGE = [
    {"schema_version": "1.0", "trace_id": "e1", "agent": "a", "question": "q", "steps": []},
    {"schema_version": "1.0", "trace_id": "e2", "agent": "a", "question": "q", "correct": None, "dataset": None,
     "steps": [{"index": 0, "kind": "other"}]},
    {"schema_version": "1.0", "trace_id": "e3", "agent": "b", "question": "", "env": {}, "final_answer": "x",
     "metadata": {"x": [1, {"y": None}]}, "correct": {"value": None, "source": "judge", "detail": {}},
     "source": {"format": "x"}, "inline_labels": {"rater": "r"}, "gold_answers": [],
     "steps": [{"index": 3, "kind": "search", "query": None, "url": "u", "labels": {}, "documents": [],
                "depends_on": [], "source_ref": {}, "passage_ids": ["p"], "completeness": 0.5,
                "self_estimate": None},
               {"index": 5, "kind": "search_result", "documents": [{}, {"score": 5, "rank": 2, "id": None}],
                "depends_on": [3], "labels": {"clarity": None, "sufficiency": "Sufficient"}},
               {"index": 6, "kind": "answer", "tool": "visit"}]},
    {"schema_version": "1.0", "trace_id": "e4", "agent": "b", "question": "q",
     "env": {"document_id": "d", "n_goal_passages": 3, "belief": "oracle", "max_steps": 2, "theta": 0.65,
             "embedder": "e", "final_completeness": 1.0, "seed": 3}, "steps": []},
]


def _tables_equal(a, b):
    for x, y in zip(a, b):
        assert_frame_equal(x, y, check_exact=True)


@pytest.fixture
def sample_parquet(tmp_path):
    path = tmp_path / "sample.parquet"
    write_parquet(path, SAMPLE)
    return path


def test_edge_traces_are_valid():
    for tr in EDGE:
        validate_trace(tr)


def test_round_trip_sample(sample_parquet):
    assert detect_format(sample_parquet) == "parquet"
    assert read_traces(sample_parquet).traces == SAMPLE


@pytest.mark.shared_data
def test_round_trip_shared(tmp_path, shared_traces):
    path = tmp_path / "shared.parquet"
    assert write_parquet(path, shared_traces) == (190, 1837)
    assert read_traces(path).traces == shared_traces


def test_round_trip_edge_cases(tmp_path):
    path = tmp_path / "edge.parquet"
    write_parquet(path, EDGE)
    back = read_traces(path).traces
    assert back == EDGE
    # absent and null stay apart
    assert "text" not in back[2]["steps"][0] and back[2]["steps"][0]["query"] is None
    assert back[1]["correct"] is None and "correct" not in back[0]
    assert back[2]["steps"][1]["documents"] == [{}, {"score": 5.0, "rank": 2, "id": None}]


def test_the_file_is_the_step_table(sample_parquet):
    # DuckDB/Spark users read the step-table columns as they are; step-less traces are one null row.
    table = pq.read_table(sample_parquet)
    steps, _ = build_tables(SAMPLE)
    assert table.schema.equals(SCHEMA, check_metadata=False)
    got = table.select(list(steps.columns)).to_pandas()
    _tables_equal([got], [steps])


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_columnar_tables_equal_the_dict_path(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(_parquet, "BATCH", batch)
    traces = EDGE[:2] + SAMPLE[:20] + EDGE[2:] + SAMPLE[20:]
    path = tmp_path / "t.parquet"
    write_parquet(path, traces)
    fast = columnar_tables([path], {})
    assert fast is not None
    _tables_equal(fast, build_tables(traces))


@pytest.mark.parametrize("row_group_size", [1, 7, 50])
def test_traces_spanning_row_groups(tmp_path, sample_parquet, row_group_size):
    path = tmp_path / "rg.parquet"
    pq.write_table(pq.read_table(sample_parquet), path, row_group_size=row_group_size)
    fast = columnar_tables([path], {})
    assert fast is not None
    _tables_equal(fast, build_tables(SAMPLE))
    assert read_traces(path).traces == SAMPLE


def test_rows_out_of_trace_order_are_sorted(tmp_path, sample_parquet):
    table = pq.read_table(sample_parquet)
    path = tmp_path / "shuffled.parquet"
    pq.write_table(table.take(np.random.default_rng(0).permutation(table.num_rows)), path)
    assert columnar_tables([path], {}) is None  # the dict path handles it
    back = read_traces(path).traces
    assert sorted(back, key=lambda t: t["trace_id"]) == sorted(SAMPLE, key=lambda t: t["trace_id"])
    read, steps, traces = read_tables(path)
    assert len(traces) == len(SAMPLE) and read.formats == {str(path): "parquet"}


def test_metrics_from_parquet_equal_metrics_from_jsonl(sample_parquet):
    a = summarize(*build_tables(SAMPLE), n_boot=200).to_dict()
    _, steps, traces = read_tables(sample_parquet)
    assert summarize(steps, traces, n_boot=200).to_dict() == a


@pytest.mark.shared_data
def test_shared_metrics_from_parquet(tmp_path, shared_traces, shared_tables):
    path = tmp_path / "shared.parquet"
    write_parquet(path, shared_traces)
    _, steps, traces = read_tables(path)
    _tables_equal((steps, traces), shared_tables)


def test_duplicate_ids_across_files(tmp_path, sample_parquet):
    with pytest.raises(UserInputError, match="duplicate trace_id across input files"):
        read_tables([sample_parquet, sample_parquet])


def test_not_a_seekbench_table(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), path)
    assert detect_format(path) == "parquet"
    with pytest.raises(UserInputError, match="missing column"):
        read_traces(path)


def test_corrupt_file(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1" + b"\x00garbage" * 10)
    with pytest.raises(UserInputError, match="unreadable Parquet file") as e:
        read_traces(path)
    assert "\n" not in str(e.value)


def test_invalid_trace_is_worded_as_for_jsonl(tmp_path, sample_parquet):
    table = pq.read_table(sample_parquet)
    kinds = table.column("kind").to_pylist()
    kinds[1] = "browse"
    path = tmp_path / "bad.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("kind"), "kind", pa.array(kinds)), path)
    with pytest.raises(UserInputError) as e:
        read_tables(path)
    assert str(e.value) == (f"{path}:1, trace {SAMPLE[0]['trace_id']}, at $.steps[1].kind: 'browse' is not "
                            "allowed; expected one of: reasoning, search, search_result, answer, other")
    read, steps, traces = read_tables(path, skip_invalid=True)
    assert read.n_skipped == 1 and len(traces) == len(SAMPLE) - 1


# -- corruptions: the columnar path accepts a file only when every trace in it validates ---------------------

_BASE = EDGE + copy.deepcopy(SAMPLE[:6])
_CELLS = st.sampled_from([None, 0, 1, -1, 2**40, 0.5, 1.5, -0.5, "", "x", "1.0", "Clear", "browse", "judge", [], [0],
                          [5], [None], ["a"], [{"rank": 0, "keys_present": 32}], [{"rank": 1, "keys_present": 63}]])


@st.composite
def _corrupted(draw):
    table = pq.read_table(_corrupted.path)
    row = draw(st.integers(0, table.num_rows - 1))
    name = draw(st.sampled_from(SCHEMA.names))
    field = SCHEMA.field(name)
    values = table.column(name).to_pylist()
    if name.endswith("keys_present"):
        values[row] = (values[row] or 0) ^ (1 << draw(st.integers(0, 30)))
    else:
        values[row] = draw(_CELLS)
    try:
        column = pa.array(values, type=field.type)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        column = table.column(name)
    return table.set_column(table.schema.get_field_index(name), field, column)


@pytest.fixture(scope="module")
def base_parquet(tmp_path_factory):
    path = tmp_path_factory.mktemp("pq") / "base.parquet"
    write_parquet(path, _BASE)
    return path


def _check_agreement(path):
    """The columnar path returns tables only when the loader accepts every trace, and then the same tables."""
    fast = columnar_tables([path], {})
    try:
        expected = build_tables(read_traces(path).traces)
    except UserInputError as e:
        assert fast is None, f"columnar path accepted a file the loader rejects: {e}"
        return False
    if fast is not None:
        _tables_equal(fast, expected)
    return True


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_columnar_path_never_accepts_what_the_dict_path_rejects(tmp_path, base_parquet, data):
    _corrupted.path = base_parquet
    path = tmp_path / "mutated.parquet"
    pq.write_table(data.draw(_corrupted()), path)
    _check_agreement(path)


def _row(table, trace_id, pos=0):
    ids, p = table.column("trace_id").to_pylist(), table.column("pos").to_pylist()
    return next(i for i, (t, q) in enumerate(zip(ids, p)) if t == trace_id and (q == pos or q is None))


@pytest.mark.parametrize("trace_id, pos, name, value", [
    ("e3", 1, "step", 2),                    # step index not increasing
    ("e3", 1, "depends_on", [6]),            # depends on a later step
    ("e3", 1, "sufficiency", "Enough"),      # label outside the ontology
    ("e1", None, "schema_version", "2.0"),
    ("e2", 0, "trace_id", ""),               # trace_id must be non-empty (one-row trace)
    ("e3", 1, "documents", None),            # documents present but null
    ("e3", 1, "documents", [{"rank": 0, "keys_present": 32}]),  # rank >= 1
    ("e3", 0, "completeness", 1.5),
    ("e3", 0, "passage_ids", [None]),
    ("e3", 0, "source_format", None),        # present source.format must be a string
    ("e4", None, "env_belief", "blurry"),
    ("e4", None, "env_max_steps", 0),
    ("e3", 0, "correct_source", "oracle"),
    ("e3", 0, "metadata", "[1, 2]"),         # metadata must be a JSON object
    ("e3", 0, "metadata", "{oops"),
    ("e3", 0, "inline_labels_rater", ""),
    ("e3", 0, "kind", None),
])
def test_specific_corruptions_are_rejected(tmp_path, base_parquet, trace_id, pos, name, value):
    table = pq.read_table(base_parquet)
    values = table.column(name).to_pylist()
    values[_row(table, trace_id, pos)] = value
    field = SCHEMA.field(name)
    path = tmp_path / "bad.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index(name), field, pa.array(values, field.type)), path)
    assert not _check_agreement(path)


def test_schema_metadata_names_the_keys(sample_parquet):
    meta = pq.read_schema(sample_parquet).metadata
    assert json.loads(meta[b"seekbench.step_keys"])[0] == "text"
