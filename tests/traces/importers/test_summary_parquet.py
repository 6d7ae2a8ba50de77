"""The import summary line counts a Parquet file's traces as it counts the same traces in JSONL, on every
read path: the columnar table reader, the fragment reader of ``seekbench metrics``, and a file not laid
out as seekbench writes it (decoded record by record)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from seekbench.traces import read_tables, read_traces


def _trace(tid: str, question: str, final_answer: str | None, steps: list[dict]) -> dict:
    record = {"schema_version": "1.0", "trace_id": tid, "agent": "a", "question": question}
    record["steps"] = [dict(s, index=i) for i, s in enumerate(steps)]
    if final_answer is not None:
        record["final_answer"] = final_answer
    return record


SEARCH = {"kind": "search", "query": "q", "tool": "search"}
RESULT = {"kind": "search_result", "documents": [{"title": "d1", "text": "x"}, {"title": "d2", "text": "y"}]}
TRACES = [
    # Hand count: 5 traces; steps reasoning 4, search 2, search_result 2, answer 2, other 2 (12);
    # tool calls = searches = 2; action calls = other steps naming a tool = 1; documents 2 + 2 = 4;
    # empty question: t2 (blank after strip); without an answer (no answer step, as the metrics count):
    # t2, t4, t5 (t5 has a final_answer field but no answer step); without a tool call: t2, t3, t4.
    _trace("t1", "q1", "a", [{"kind": "reasoning", "text": "r"}, SEARCH, RESULT, {"kind": "answer", "text": "a"}]),
    _trace("t2", "   ", None, [{"kind": "reasoning", "text": "r"}, {"kind": "other", "tool": "calculator"}]),
    _trace("t3", "q3", "b", [{"kind": "reasoning", "text": "r"}, {"kind": "answer", "text": "b"}]),
    _trace("t4", "q4", None, [{"kind": "reasoning", "text": "r"}, {"kind": "other", "text": "o"}]),
    _trace("t5", "q5", "c", [SEARCH, RESULT]),
]
LINE = (
    "imported 5 traces: 12 steps (reasoning 4, search 2, search_result 2, answer 2, other 2), 2 tool calls, "
    "1 action call, 4 documents; 1 with an empty question, 3 without an answer, 3 without a tool call"
)


@pytest.fixture
def files(cli, tmp_path):
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    parquet = tmp_path / "t.parquet"
    assert cli("convert", jsonl, "--to", "parquet", "-o", parquet).code == 0
    return jsonl, parquet


def test_the_hand_count_is_the_jsonl_line(files):
    assert read_traces(files[0]).summary.line() == LINE


def test_the_columnar_table_reader_counts_the_same(files):
    read, _, traces = read_tables([files[1]])
    assert len(traces) == 5 and read.summary is not None and read.summary.line() == LINE


def test_metrics_prints_the_same_line_for_parquet_and_jsonl(cli, files):
    for f in files:
        res = cli("metrics", f, "--json", "--n-boot", "0", "--jobs", "1")
        assert res.code == 0, res
        assert f"seekbench: note: {LINE}" in res.err.splitlines(), (f, res.err)


def test_a_file_read_record_by_record_counts_the_same(cli, files, tmp_path):
    # Row groups of one row each and the step numbers stored as 32-bit integers: not seekbench's layout,
    # so the traces are decoded to dicts one by one, and counted as the dicts are.
    other = tmp_path / "other.parquet"
    table = pq.read_table(files[1])
    at = table.schema.get_field_index("step")
    table = table.set_column(at, pa.field("step", pa.int32()), pc.cast(table["step"], pa.int32()))
    pq.write_table(table, other, row_group_size=1)
    read, _, traces = read_tables([other])
    assert len(traces) == 5 and read.summary.line() == LINE
    res = cli("metrics", other, "--json", "--n-boot", "0", "--jobs", "1")
    assert res.code == 0 and f"seekbench: note: {LINE}" in res.err.splitlines(), res
