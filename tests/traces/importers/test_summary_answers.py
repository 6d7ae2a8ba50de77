"""The import summary's "without an answer" counts what the metrics count as unanswered: traces with no
``answer`` step (the trace table's ``answered`` False), whatever their ``final_answer`` field holds, on
every read path (trace dicts, the fragment reader of ``seekbench metrics``, Parquet columns)."""

from __future__ import annotations

import json

import pytest

from seekbench.traces import build_tables, read_tables, read_traces


def _trace(tid: str, steps: list[dict], **fields) -> dict:
    record = {"schema_version": "1.0", "trace_id": tid, "agent": "a", "question": f"question {tid}", **fields}
    record["steps"] = [dict(s, index=i) for i, s in enumerate(steps)]
    return record


SEARCH = {"kind": "search", "query": "capital of Orvia", "tool": "search"}
RESULT = {"kind": "search_result", "documents": [{"title": "Orvia", "text": "Its capital is Pell."}]}
ANSWER = {"kind": "answer", "text": "Pell"}
TRACES = [
    # Hand count of traces with no answer step: u2 (final_answer "" and no answer step, the shape of the
    # two such traces in the SeekBench release), u3 (a final_answer field, no answer step), u4 (neither);
    # u1 and u5 have an answer step (u5 without a final_answer field). So 3 without an answer; the old
    # count (final_answer absent) said 2 (u4, u5), u5 wrongly.
    _trace("u1", [SEARCH, RESULT, ANSWER], final_answer="Pell"),
    _trace("u2", [SEARCH, RESULT], final_answer=""),
    _trace("u3", [SEARCH, RESULT], final_answer="Pell"),
    _trace("u4", [SEARCH, RESULT]),
    _trace("u5", [SEARCH, RESULT, ANSWER]),
]


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    return path


def test_without_an_answer_is_without_an_answer_step(jsonl):
    read = read_traces(jsonl)
    assert read.summary.no_answer == 3
    assert "; 0 with an empty question, 3 without an answer, 0 without a tool call" in read.summary.line()
    # The independent reference: the metrics' own trace table.
    _, traces = build_tables(read.traces)
    assert sorted(traces.loc[~traces["answered"], "trace_id"]) == ["u2", "u3", "u4"]


def test_every_read_path_counts_the_same(cli, jsonl, tmp_path):
    parquet = tmp_path / "answers.parquet"
    assert cli("convert", jsonl, "--to", "parquet", "-o", parquet).code == 0
    for path in (jsonl, parquet):
        read, _, traces = read_tables([path])
        assert read.summary.no_answer == 3 == int((~traces["answered"]).sum()), path
        res = cli("metrics", path, "--json", "--n-boot", "0", "--jobs", "1")
        assert res.code == 0, res
        assert "3 without an answer" in res.err, res


@pytest.mark.shared_data
def test_the_release_file_says_two_without_an_answer(cli, shared_data, tmp_path):
    # Two of the 190 traces (trace ids 33 and 43) end without an answer step, their final_answer "";
    # the metrics count them unanswered, and so must the summary line every command prints.
    read = read_traces(shared_data)
    _, traces = build_tables(read.traces)
    assert sorted(traces.loc[~traces["answered"], "trace_id"]) == ["33", "43"]
    assert read.summary.no_answer == 2
    res = cli("convert", shared_data, "-o", tmp_path / "out.jsonl")
    assert res.code == 0 and "0 with an empty question, 2 without an answer, 0 without a tool call" in res.err, res
