"""Fragments read as chunks of tables: together they equal the sequential read, tables and errors alike."""

import copy
import gc
import json
import warnings

import pandas as pd
import pyarrow.parquet as pq
import pytest
from pandas.testing import assert_frame_equal

from seekbench import UserInputError
from seekbench.data import sample_traces_path
from seekbench.traces import (
    FragmentLog,
    _fragments,
    build_tables,
    expand_inputs,
    iter_fragment_tables,
    iter_fragments,
    plan_fragments,
    read_traces,
)
from seekbench.traces.importers._parquet import rows_table, write_parquet

SAMPLE = read_traces(sample_traces_path()).traces


def corpus(n_copies: int = 3) -> list[dict]:
    """The sample traces, ``n_copies`` times with fresh ids (a few hundred steps)."""
    return [dict(copy.deepcopy(t), trace_id=f"{t['trace_id']}-{k}") for k in range(n_copies) for t in SAMPLE]


def write_jsonl(path, records) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))


def read_all(files, formats, *, skip_invalid=False, **plan) -> tuple[pd.DataFrame, pd.DataFrame, list[FragmentLog]]:
    steps, traces, logs = [], [], []
    for fr in plan_fragments(files, formats, **plan):
        log = FragmentLog(fr)
        for s, t in iter_fragment_tables(fr, log, skip_invalid=skip_invalid, chunk_traces=7):
            steps.append(s)
            traces.append(t)
        logs.append(log)
    return (
        pd.concat(steps, ignore_index=True),
        pd.concat(traces, ignore_index=True),
        logs,
    )


def test_jsonl_byte_ranges_equal_the_whole_file(tmp_path):
    traces = corpus()
    path = tmp_path / "c.jsonl"
    write_jsonl(path, traces)
    size = path.stat().st_size
    frags = plan_fragments([str(path)], ["canonical"], jsonl_bytes=size // 9)
    # The ranges tile the file, each starts a line, and knows its line number (counted by hand here).
    data = path.read_bytes()
    assert len(frags) >= 8 and frags[0].start == 0 and frags[-1].stop == size
    for a, b in zip(frags, frags[1:], strict=False):
        assert a.stop == b.start and data[b.start - 1 : b.start] == b"\n"
        assert b.first_line == data[: b.start].count(b"\n") + 1
    steps, table, logs = read_all([str(path)], ["canonical"], jsonl_bytes=size // 9)
    want_steps, want_traces = build_tables(read_traces(path).traces)
    assert_frame_equal(steps, want_steps)
    assert_frame_equal(table, want_traces)
    assert [i for log in logs for i in log.lines] == list(range(1, len(traces) + 1))


def test_fragments_come_as_they_are_cut(tmp_path):
    # iter_fragments gives plan_fragments' fragments one by one, numbered in input order, and
    # gives the first ones before it reads further: the fragments of a readable first file come
    # out before a later file that is gone (plan_fragments, which lists them all, fails at once).
    path = tmp_path / "c.jsonl"
    write_jsonl(path, corpus())
    files, formats = [str(path), str(path)], ["canonical", "canonical"]
    size = path.stat().st_size
    assert list(iter_fragments(files, formats, jsonl_bytes=size // 4)) == plan_fragments(
        files, formats, jsonl_bytes=size // 4
    )
    assert [f.order for f in plan_fragments(files, formats, jsonl_bytes=size // 4)] == list(range(8))
    gone = [str(path), str(tmp_path / "gone.jsonl")]
    it = iter_fragments(gone, formats, jsonl_bytes=size // 4)
    first = [next(it) for _ in range(4)]
    assert [f.file for f in first] == [str(path)] * 4 and first[-1].stop == size
    with pytest.raises(FileNotFoundError):
        next(it)
    with pytest.raises(FileNotFoundError):
        plan_fragments(gone, formats, jsonl_bytes=size // 4)


def test_parquet_row_group_ranges_equal_the_whole_file_with_traces_across_row_groups(tmp_path):
    traces = corpus()
    path = tmp_path / "c.parquet"
    # Row groups of 5 rows: most traces (about 10 steps) span two or three of them.
    pq.write_table(rows_table(traces), path, row_group_size=5)
    assert pq.ParquetFile(path).metadata.num_row_groups > 50
    want_steps, want_traces = build_tables(traces)
    for rows in (1, 7, 40):
        _fragments.PARQUET_ROWS, old = rows, _fragments.PARQUET_ROWS
        try:
            steps, table, logs = read_all([str(path)], ["parquet"], jobs=1)
        finally:
            _fragments.PARQUET_ROWS = old
        assert_frame_equal(steps, want_steps)
        assert_frame_equal(table, want_traces)
        # The line of a Parquet trace is its first row (1-based): the sum of the steps before it, plus 1.
        firsts = (want_traces["n_steps"].clip(lower=1).cumsum() - want_traces["n_steps"].clip(lower=1) + 1).tolist()
        assert [i for log in logs for i in log.lines] == firsts
        assert all(not log.errors for log in logs)



def test_reading_a_parquet_fragment_closes_its_file(tmp_path):
    # The row-group reader opened the file and never closed it: a ResourceWarning at collection.
    path = tmp_path / "c.parquet"
    write_parquet(path, SAMPLE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        read_all([str(path)], ["parquet"], jobs=1)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]

BAD = [
    "{not json",  # malformed
    {
        "schema_version": "1.0",
        "trace_id": "bad-kind",
        "agent": "a",
        "question": "q",
        "steps": [{"index": 0, "kind": "dance"}],
    },  # an enum
    "[1, 2]",  # not an object
    "",  # blank: not a record
]


def _bad_corpus(tmp_path):
    traces = corpus(2)
    records: list = []
    for i, tr in enumerate(traces):
        records.append(tr)
        if i % 17 == 5:
            records.append(BAD[(i // 17) % len(BAD)])
    records.append(copy.deepcopy(traces[3]))  # a duplicate, far from its first sighting
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, records)
    return path


def test_jsonl_errors_are_the_sequential_readers_word_for_word(tmp_path):
    path = _bad_corpus(tmp_path)
    want = read_traces(path, skip_invalid=True)
    steps, table, logs = read_all([str(path)], ["canonical"], skip_invalid=True, jsonl_bytes=3000)
    got = [e.one_line() for log in logs for _, e in log.errors]
    # The duplicate is in another fragment than its first sighting: the merge (seekbench.scale) finds it.
    assert got == [e.one_line() for e in want.skipped if "duplicate" not in e.message]
    ids = [i for log in logs for i in log.ids]
    assert ids[:-1] == [t["trace_id"] for t in want.traces] and ids[-1] == want.traces[3]["trace_id"]


def test_without_skip_invalid_a_fragment_stops_at_its_first_error(tmp_path):
    path = _bad_corpus(tmp_path)
    with pytest.raises(UserInputError) as first:
        read_traces(path)
    fr = plan_fragments([str(path)], ["canonical"])[0]
    log = FragmentLog(fr)
    list(iter_fragment_tables(fr, log))
    assert len(log.errors) == 1 and log.errors[0][1].one_line() == first.value.one_line()


def test_invalid_parquet_rows_are_decoded_and_worded_as_the_importer_does(tmp_path):
    traces = corpus(1)
    traces[4]["steps"][1]["index"] = traces[4]["steps"][0]["index"]  # not increasing: invalid
    path = tmp_path / "bad.parquet"
    pq.write_table(rows_table(traces), path, row_group_size=8)
    want = read_traces(path, skip_invalid=True)
    _, table, logs = read_all([str(path)], ["parquet"], skip_invalid=True, jobs=4)
    assert [e.one_line() for log in logs for _, e in log.errors] == [e.one_line() for e in want.skipped]
    assert len(want.skipped) == 1 and table["trace_id"].tolist() == [t["trace_id"] for t in want.traces]


def test_folders_and_globs_name_their_trace_files_sorted(tmp_path):
    write_parquet(tmp_path / "b.parquet", SAMPLE[:3])
    write_jsonl(tmp_path / "a.jsonl", SAMPLE[3:5])
    (tmp_path / "notes.txt").write_text("not traces")
    assert expand_inputs([tmp_path]) == [str(tmp_path / "a.jsonl"), str(tmp_path / "b.parquet")]
    assert expand_inputs([str(tmp_path / "*.parquet")]) == [str(tmp_path / "b.parquet")]
    assert expand_inputs([f"file://{tmp_path}/a.jsonl"]) == [str(tmp_path / "a.jsonl")]
    with pytest.raises(UserInputError, match="no file matches"):
        expand_inputs([str(tmp_path / "*.nothing")])
    with pytest.raises(UserInputError, match="file not found"):
        expand_inputs([str(tmp_path / "missing.jsonl")])


def test_object_storage_through_fsspec_memory_filesystem(tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    write_parquet(tmp_path / "c.parquet", SAMPLE)
    write_jsonl(tmp_path / "c.jsonl", SAMPLE)
    for name in ("c.parquet", "c.jsonl"):
        fs.pipe(f"/scale-io-test/{name}", (tmp_path / name).read_bytes())
    try:
        files = expand_inputs(["memory://scale-io-test/*"])
        assert files == ["memory://scale-io-test/c.jsonl", "memory://scale-io-test/c.parquet"]
        from seekbench.traces import url_format

        formats = [url_format(f) for f in files]
        assert formats == ["canonical", "parquet"]
        steps, table, _ = read_all(files, formats, jsonl_bytes=5000)
        want_steps, want_traces = build_tables(SAMPLE + SAMPLE)
        # The JSONL traces name their file and line as source; the tables do not carry it.
        assert_frame_equal(steps, want_steps)
        assert_frame_equal(table, want_traces)
    finally:
        fs.rm("/scale-io-test", recursive=True)


def test_a_whole_file_fragment_reads_to_its_end(tmp_path):
    # A Fragment made by hand keeps the default stop=None: the reader once asked read() for 2**62
    # bytes and failed with MemoryError; the whole file must read as its planned byte range does.
    path = tmp_path / "c.jsonl"
    write_jsonl(path, corpus(1))
    chunks = list(iter_fragment_tables(_fragments.Fragment(str(path), "canonical"), FragmentLog(None)))
    whole = [pd.concat([c[k] for c in chunks], ignore_index=True) for k in (0, 1)]
    planned = read_all([str(path)], ["canonical"])
    assert_frame_equal(whole[0], planned[0])
    assert_frame_equal(whole[1], planned[1])


@pytest.mark.parametrize("cut", [None, 700])
def test_jsonl_bytes_edge_cases_read_as_the_sequential_reader(tmp_path, cut):
    # A BOM, CRLF endings, blank and whitespace lines, invalid UTF-8, a NUL byte and no final newline:
    # the mapped file (split in byte ranges or whole) gives the sequential reader's records and errors.
    good = [json.dumps(t).encode() for t in corpus(1)[:6]]
    lines = [b"\xef\xbb\xbf" + good[0], good[1] + b"\r", b"", b"  \t", b'{"x": "\xff"}', good[2]]
    lines += [b'{"a": "\x00"}', good[3] + b"\r", good[4], good[5]]
    path = tmp_path / "edge.jsonl"
    path.write_bytes(b"\n".join(lines))  # no newline after the last line
    want = read_traces(path, skip_invalid=True)
    plan = {"jsonl_bytes": cut} if cut else {"split": False}
    steps, table, logs = read_all([str(path)], ["canonical"], skip_invalid=True, **plan)
    assert [e.one_line() for log in logs for _, e in log.errors] == [e.one_line() for e in want.skipped]
    assert [i for log in logs for i in log.lines] == [1, 2, 6, 8, 9, 10]
    assert_frame_equal(table, build_tables(want.traces)[1])


def test_empty_and_zip_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    log = FragmentLog(None)
    assert list(iter_fragment_tables(_fragments.Fragment(str(empty), "canonical"), log)) == []
    assert log.ids == [] and log.errors == []
    zipped = tmp_path / "z.jsonl"
    zipped.write_bytes(b"PK\x03\x04rest of a zip")
    log = FragmentLog(None)
    assert list(iter_fragment_tables(_fragments.Fragment(str(zipped), "canonical"), log, skip_invalid=True)) == []
    assert len(log.errors) == 1 and "zip" in log.errors[0][1].message


def test_import_summary_counts_as_trace_by_trace(tmp_path):
    # The fragment reader counts the import summary from the gathered columns: the same counts
    # (and step kinds in order of first appearance) as ImportSummary.add on each valid trace.
    from seekbench.traces.importers._summary import ImportSummary

    traces = corpus(2)
    traces[0]["steps"].append({"index": 99, "kind": "other", "tool": "calculator"})  # an action call
    traces[1]["steps"].append({"index": 99, "kind": "other"})  # not one: no tool
    traces[2]["steps"] = []  # no tool call
    traces[3]["question"] = "  "  # an empty question
    traces[4]["final_answer"] = None
    traces[5]["source"] = {"format": "search_r1", "file": "x", "line": 1, "record_id": None, "path": None}
    path = tmp_path / "c.jsonl"
    write_jsonl(path, traces[:7] + ["{broken"] + traces[7:])
    _, _, logs = read_all([str(path)], ["canonical"], skip_invalid=True, jsonl_bytes=4000)
    want = ImportSummary()
    for tr in read_traces(path, skip_invalid=True).traces:
        want.add(tr)
    got = ImportSummary()
    for log in logs:
        for name in ("traces", "tool_calls", "action_calls", "documents", "empty_question", "no_answer"):
            setattr(got, name, getattr(got, name) + getattr(log.summary, name))
        got.no_tool_call += log.summary.no_tool_call
        got.steps.update(log.summary.steps)
        got.formats.update(log.summary.formats)
    assert got == want and list(got.steps) == list(want.steps)
    assert want.action_calls == 1 and min(want.no_tool_call, want.empty_question, want.no_answer) >= 1
    assert want.formats["search_r1"] == 1


def test_an_integer_beyond_64_bits_is_read_exactly_by_the_fragment_reader(tmp_path):
    # orjson would read 2**64 as the float 1.8446744073709552e+19; the fragment reader must give the
    # sequential reader's error, which names the exact integer (the schema's maximum is 2**63 - 1).
    tr = copy.deepcopy(SAMPLE[0])
    tr["steps"][0]["index"] = 2**64
    path = tmp_path / "big.jsonl"
    write_jsonl(path, [tr])
    with pytest.raises(UserInputError) as sequential:
        read_traces(path)
    fr = plan_fragments([str(path)], ["canonical"])[0]
    log = FragmentLog(fr)
    list(iter_fragment_tables(fr, log))
    assert log.errors[0][1].one_line() == sequential.value.one_line()
    assert "18446744073709551616 is greater than the maximum of 9223372036854775807" in sequential.value.one_line()
