"""Bad input: exit code 2, one line naming file:line, trace id and JSON path, no traceback."""

import json

import pytest

GOOD = {"schema_version": "1.0", "trace_id": "t1", "agent": "a", "question": "q", "steps": [
    {"index": 0, "kind": "search", "query": "q"},
    {"index": 1, "kind": "search_result", "documents": []},
    {"index": 2, "kind": "answer", "text": "x"}]}


def _write(tmp_path, lines, name="t.jsonl"):
    p = tmp_path / name
    p.write_text("".join(x if isinstance(x, str) else json.dumps(x) + "\n" for x in lines))
    return p


def _one_error_line(res):
    assert res.code == 2, res
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1, res.err
    assert "Traceback" not in res.err
    return lines[0]


@pytest.mark.parametrize("command", ["validate", "metrics", "convert"])
def test_malformed_json_line(tmp_path, cli, command):
    p = _write(tmp_path, [GOOD, '{"trace_id": "t2", "agent": \n'])
    extra = ["-o", tmp_path / "o.jsonl"] if command == "convert" else []
    line = _one_error_line(cli(command, p, *extra))
    assert line.startswith(f"seekbench: error: {p}:2: malformed JSON (column 29): Expecting value; "
                           "fix or remove this line, or pass --skip-invalid")
    assert not (tmp_path / "o.jsonl").exists()


def test_wrong_type(tmp_path, cli):
    bad = json.loads(json.dumps(GOOD))
    bad["steps"][0]["query"] = 5
    line = _one_error_line(cli("metrics", _write(tmp_path, [bad])))
    assert line == f"seekbench: error: {tmp_path}/t.jsonl:1, trace t1, at $.steps[0].query: must be string or null, got int"


def test_unknown_step_kind(tmp_path, cli):
    bad = json.loads(json.dumps(GOOD))
    bad["steps"][1]["kind"] = "tool_output"
    line = _one_error_line(cli("validate", _write(tmp_path, [GOOD | {"trace_id": "t0"}, bad])))
    assert line.startswith(f"seekbench: error: {tmp_path}/t.jsonl:2, trace t1, at $.steps[1].kind: 'tool_output'")


def test_label_outside_ontology(tmp_path, cli):
    bad = json.loads(json.dumps(GOOD))
    bad["steps"][1]["labels"] = {"clarity": "Murky"}
    line = _one_error_line(cli("metrics", _write(tmp_path, [bad])))
    assert f"{tmp_path}/t.jsonl:1, trace t1, at $.steps[1].labels.clarity: 'Murky' is not allowed" in line


def test_empty_file(tmp_path, cli):
    p = _write(tmp_path, ["\n\n"])
    line = _one_error_line(cli("metrics", p))
    assert line == f"seekbench: error: {p}: file is empty; expected traces (one JSON object per line)"


def test_missing_file(tmp_path, cli):
    line = _one_error_line(cli("metrics", tmp_path / "nope.jsonl"))
    assert line == f"seekbench: error: {tmp_path}/nope.jsonl: file not found"


def test_skip_invalid_keeps_valid_records(tmp_path, cli):
    bad = json.loads(json.dumps(GOOD))
    bad["trace_id"] = "t9"
    bad["steps"][0]["kind"] = "nope"
    p = _write(tmp_path, [GOOD, bad, "{oops\n", GOOD | {"trace_id": "t3"}])
    out = tmp_path / "o.jsonl"
    res = cli("convert", p, "-o", out, "--skip-invalid")
    assert res.code == 0, res
    assert "skipped 2 invalid trace records" in res.err
    assert [json.loads(x)["trace_id"] for x in out.read_text().splitlines()] == ["t1", "t3"]


def test_no_traceback_in_subprocess(tmp_path, cli_subprocess):
    p = _write(tmp_path, ['{"broken": \n'])
    res = cli_subprocess("validate", p)
    _one_error_line(res)
