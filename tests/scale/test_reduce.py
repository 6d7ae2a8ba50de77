"""reduce_traces: the merged per-trace rows and the read equal the sequential reader's, on 1 or 2 processes."""

import copy

import pyarrow.parquet as pq
import pytest
from _scale_helpers import SAMPLE, corpus, per_trace, write_jsonl
from pandas.testing import assert_frame_equal

from seekbench import UserInputError
from seekbench.data import sample_traces_path
from seekbench.scale import reduce_traces
from seekbench.traces import _fragments, build_tables, read_tables, read_traces
from seekbench.traces.importers._parquet import rows_table, write_parquet


@pytest.fixture
def small_fragments(monkeypatch):
    """Fragments of a few traces each, so a small corpus spans many of them (and both processes)."""
    monkeypatch.setattr(_fragments, "JSONL_BYTES", 20_000)
    monkeypatch.setattr(_fragments, "PARQUET_ROWS", 30)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_rows_equal_the_chunk_function_on_the_whole_tables(tmp_path, small_fragments, fmt, jobs):
    traces = corpus(3)
    path = tmp_path / f"c.{fmt}"
    if fmt == "jsonl":
        write_jsonl(path, traces)
    else:
        pq.write_table(rows_table(traces), path, row_group_size=7)  # traces across row groups
    red = reduce_traces(path, per_trace, jobs=jobs)
    assert red.n_fragments > 4
    assert_frame_equal(red.rows, per_trace(*build_tables(traces)))
    assert red.read.formats == {str(path): "canonical" if fmt == "jsonl" else "parquet"}
    if fmt == "jsonl":  # the import line counts what the sequential read counts
        assert red.read.summary.line() == read_traces(path).summary.line()


def test_several_files_a_folder_and_duplicates_across_files(tmp_path, small_fragments):
    traces = corpus(2)
    write_jsonl(tmp_path / "a.jsonl", traces[:60])
    write_parquet(tmp_path / "b.parquet", traces[50:])  # ten traces again
    files = [tmp_path / "a.jsonl", tmp_path / "b.parquet"]
    want = read_traces(files, skip_invalid=True)
    red = reduce_traces(tmp_path, per_trace, jobs=2, skip_invalid=True)
    assert [e.one_line() for e in red.read.skipped] == [e.one_line() for e in want.skipped]
    assert len(want.skipped) == 10 and "across input files" in want.skipped[0].message
    assert_frame_equal(red.rows, per_trace(*build_tables(want.traces)))
    with pytest.raises(UserInputError) as err:
        reduce_traces(tmp_path, per_trace, jobs=2)
    assert err.value.one_line() == want.skipped[0].one_line()


def test_errors_across_fragments_are_the_sequential_readers(tmp_path, small_fragments):
    traces = corpus(2)
    records: list = []
    for i, tr in enumerate(traces):
        records.append(tr)
        if i % 13 == 4:
            records.append("{oops" if i % 2 else {"schema_version": "1.0", "trace_id": f"x{i}", "agent": "a"})
    records += [copy.deepcopy(traces[2]), copy.deepcopy(traces[70])]  # duplicates, far from the first
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, records)
    want = read_traces(path, skip_invalid=True)
    for jobs in (1, 2):
        red = reduce_traces(path, per_trace, jobs=jobs, skip_invalid=True)
        assert [e.one_line() for e in red.read.skipped] == [e.one_line() for e in want.skipped]
        assert any("first seen at line" in e.message for e in red.read.skipped)
        assert_frame_equal(red.rows, per_trace(*build_tables(want.traces)))
    with pytest.raises(UserInputError) as first:
        read_traces(path)
    with pytest.raises(UserInputError) as got:
        reduce_traces(path, per_trace, jobs=2)
    assert got.value.one_line() == first.value.one_line()


def test_other_formats_go_through_their_importer_whole(tmp_path):
    # SeekBench-format JSONL (the release's own format) with the importer's options: one fragment per file.
    src = tmp_path / "sb.jsonl"
    write_jsonl(src, [{"id": f"r{i}", "model": "m", "question": "q?", "ground_truth": ["x"], "final_answer": "x",
                       "trace": [{"type": "search", "content": "q"}, {"type": "CorrectAnswer", "content": "x"}]}
                      for i in range(5)])
    red = reduce_traces(src, per_trace, jobs=2)
    read, steps, traces = read_tables(src)
    assert red.read.formats == read.formats == {str(src): "seekbench"}
    assert_frame_equal(red.rows, per_trace(steps, traces))
    assert red.read.summary.line() == read.summary.line()


def test_a_function_breaking_the_one_row_per_trace_contract_is_an_error(tmp_path):
    write_parquet(tmp_path / "c.parquet", SAMPLE)
    with pytest.raises(ValueError, match="one row per trace"):
        reduce_traces(tmp_path / "c.parquet", lambda steps, traces: steps[["trace_id"]], jobs=1)


def test_no_records_and_bad_options(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(UserInputError, match="file is empty"):
        reduce_traces(tmp_path / "empty.jsonl", per_trace, jobs=1)
    with pytest.raises(UserInputError, match="--jobs"):
        reduce_traces(sample_traces_path(), per_trace, jobs=0)
    with pytest.raises(UserInputError, match="--engine"):
        reduce_traces(sample_traces_path(), per_trace, engine="spark")
