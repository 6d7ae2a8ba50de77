"""JSONL streaming and atomic writes."""

import os

import pytest

from seekbench import UserInputError
from seekbench._io import atomic_writer
from seekbench.traces import iter_jsonl, write_jsonl


def test_iter_jsonl_positions_and_errors(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n{"b": NaN}\n\xff\xfe\n{"c": 3}\n')
    items = list(iter_jsonl(p))
    assert [ln for ln, _ in items] == [1, 3, 4, 5]
    assert items[0][1] == {"a": 1}
    assert isinstance(items[1][1], UserInputError) and "NaN is not valid JSON" in str(items[1][1])
    assert isinstance(items[2][1], UserInputError) and "invalid UTF-8" in str(items[2][1])
    assert items[3][1] == {"c": 3}


def test_atomic_writer_keeps_old_file_on_failure(tmp_path):
    p = tmp_path / "out.jsonl"
    write_jsonl(p, [{"a": 1}])
    with pytest.raises(RuntimeError):
        with atomic_writer(p) as fh:
            fh.write("partial")
            raise RuntimeError("crash")
    assert p.read_text() == '{"a": 1}\n'
    assert [f for f in os.listdir(tmp_path)] == ["out.jsonl"]


def test_nan_written_as_null(tmp_path):
    p = tmp_path / "o.jsonl"
    write_jsonl(p, [{"x": float("nan")}])
    assert p.read_text() == '{"x": null}\n'
