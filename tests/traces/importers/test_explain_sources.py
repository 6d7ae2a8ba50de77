"""``convert --explain`` tells the truth: every importer's stated source of a field is the path its value
came from. Checked on every importer fixture and producer fixture, evaluating each stated path with the
mapping files' JSONPath subset on the raw record, and on the SeekBench release file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _importer_support import FIXTURES

from seekbench.traces.importers import detect_format, importer_for
from seekbench.traces.importers._fields import verdict
from seekbench.traces.importers._jsonpath import find

FILES = sorted(
    p
    for p in [*FIXTURES.glob("*.*"), *(FIXTURES / "producers").glob("*"), *(FIXTURES / "shapes").glob("*")]
    if p.is_file()
)
FIELDS = ("trace_id", "agent", "question", "final_answer", "gold_answers", "correct", "dataset")


def _raw(path: Path, line: int | None) -> object:
    """The raw document a record's paths start from: the whole file as JSON, else its line, else its text."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json.loads(text.splitlines()[(line or 1) - 1])
    except (ValueError, IndexError):
        return text


def _strings(value: object) -> list[str]:
    """Every string and number inside ``value`` (what a derived value is made of)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [] if value is None else [str(value)]


def _value(trace: dict, name: str) -> object:
    if name == "correct":
        return None if trace["correct"] is None else trace["correct"]["value"]
    return trace[name]


def _came_from(value: object, found: object, name: str) -> bool:
    """``value`` is ``found``, or was derived from it: a verdict word or 0/1 for ``correct``, the text of
    content parts, an answer inside its tags, a number's text, a name/model pair."""
    if value == found:
        return True
    parts = _strings(found)
    if name == "correct":
        return verdict(found) == value or (found in ("C", "I") and value == (found == "C"))  # Inspect's C / I
    if name == "gold_answers":
        return all(any(g == p or g in p for p in parts) for g in value)
    if name == "agent":
        return all(any(bit in p for p in parts) for bit in value.split("/"))
    return isinstance(value, str) and any(value.strip() in p for p in parts)


def _records(path: Path):
    fmt = detect_format(path)
    return fmt, [r for r in importer_for(fmt).iter_records(path) if r.trace is not None]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_stated_source_path_holds_the_value(path):
    fmt, records = _records(path)
    assert records, path
    checked = 0
    for rec in records:
        raw = _raw(path, rec.line)
        for name in FIELDS:
            src = rec.sources.get(name)
            value = _value(rec.trace, name)
            if src is None:
                if name not in ("trace_id", "agent"):  # these always have a value (a default when not found)
                    assert value in (None, [], ""), f"{path}:{rec.line} {name}={value!r} with no stated source"
                continue
            if not src.startswith("$"):  # said in words: spans, the log header, a value joined from two keys
                continue
            hits = find(raw, src)
            assert hits, f"{path}:{rec.line} {name} <- {src} matches nothing in the record"
            assert _came_from(value, hits[0][1], name), (path, rec.line, name, src, value, hits[0][1])
            checked += 1
    # OTel spans are no one record, an .eval log is a zip of JSON members: their sources are said in words
    assert checked or fmt == "otel" or path.suffix == ".eval"
    assert all(rec.sources.get("question") for rec in records if rec.trace["question"])


def test_every_importer_is_checked():
    assert {_records(p)[0] for p in FILES} >= {"seekbench", "openai_chat", "atif", "inspect", "otel", "search_r1"}


def test_parquet_sources_name_the_columns_of_the_first_row(cli, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "t.parquet"
    assert cli("convert", FIXTURES / "same.seekbench.jsonl", "-o", out).code == 0
    fmt, records = _records(out)
    first_row = pq.read_table(out).to_pylist()[0]
    assert fmt == "parquet" and records[0].sources["question"] == "$.question"
    for name, src in records[0].sources.items():
        (hit,) = find(first_row, src)
        assert hit[1] == _value(records[0].trace, name), name


def test_explain_on_the_release_file_names_each_path(cli, shared_data: Path):
    res = cli("convert", shared_data, "--explain")
    assert res.code == 0, res
    lines = res.out.splitlines()
    # hand-read from the first line of the release file: its keys are model, question, final_answer,
    # ground_truth and is_correct
    assert lines[2:7] == [
        "  agent         <- $.model: 'fewshot-Qwen2.5-7B-Instruct'",
        "  question      <- $.question: \"Which is the body of water by Leo Bennett's place of death?\"",
        "  final_answer  <- $.final_answer: 'River Thames'",
        "  gold_answers  <- $.ground_truth: \"['River Thames']\"",
        "  correct       <- $.is_correct: 'True (source_data)'",
    ]
    assert "(not found)" not in res.out and "the file name" not in res.out


def test_explain_says_not_found_only_for_a_field_without_value(cli, tmp_path):
    path = tmp_path / "run.jsonl"
    rec = {"question": "Q?", "output": "<search>x</search><information>doc</information><answer>A</answer>"}
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    lines = cli("convert", path, "--explain").out.splitlines()
    assert lines[2] == "  agent         <- the file name (no agent field): 'run'"
    assert lines[5] == "  gold_answers  <- (not found): '[]'"
    assert lines[6] == "  correct       <- (not found): 'None'"
    lines = cli("convert", path, "--explain", "--agent", "bot").out.splitlines()
    assert lines[2] == "  agent         <- --agent: 'bot'"
