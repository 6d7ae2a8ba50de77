"""``--map FILE`` on the commands that read traces, and its one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
EVENTS, EVENTS_MAP = FIXTURES / "mapped" / "events.jsonl", FIXTURES / "mapped" / "events.map.toml"


def one_error(res) -> str:
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert res.code == 2 and len(lines) == 1 and "Traceback" not in res.err, res
    return lines[0]


def test_convert_with_a_map_reads_an_unknown_shape(cli, tmp_path):
    out = tmp_path / "o.jsonl"
    assert "cannot tell the trace format" in one_error(cli("convert", EVENTS, "-o", out))  # without the map
    res = cli("convert", EVENTS, "--map", EVENTS_MAP, "-o", out)
    assert res.code == 0, res
    traces = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert [t["trace_id"] for t in traces] == ["r-101", "r-102"]
    # hand-counted from the fixture: 4 events -> 6 steps (two calls each followed by its result), 2 documents
    assert ("imported 2 traces: 6 steps (reasoning 1, search 1, search_result 1, answer 1, other 2), 1 tool call, "
            "1 action call, 2 documents") in res.err


def test_metrics_reads_through_the_map(cli):
    res = cli("metrics", EVENTS, "--map", EVENTS_MAP, "--json")
    assert res.code == 0, res
    assert "imported 2 traces" in res.err


def test_explain_with_a_map_prints_that_map(cli):
    res = cli("convert", EVENTS, "--map", EVENTS_MAP, "--explain")
    assert res.code == 0, res
    lines = res.out.splitlines()
    assert lines[0] == f"{EVENTS}: format mapped ({EVENTS_MAP})"
    assert lines[3] == "  question      <- $.task.prompt: 'Which river runs through Dunmarsh?'"
    assert {'question = "$.task.prompt"', 'path = "$.events[*]"', "reasoning = [\"thought\"]",
            'path = "$.output.hits[*]"'} <= set(lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--map", "nope.toml"), "nope.toml: --map: mapping file not found"),
        (("--map", EVENTS_MAP, "--format", "seekbench"), "--map and --format seekbench together"),
    ],
)
def test_map_errors_are_one_line(cli, tmp_path, args, message):
    assert message in one_error(cli("convert", EVENTS, *args, "-o", tmp_path / "o.jsonl"))


def test_a_path_matching_nothing_names_file_line_trace_and_path(cli, tmp_path):
    m = tmp_path / "m.toml"
    m.write_text(EVENTS_MAP.read_text().replace('question = "$.task.prompt"', 'question = "$.task.text"'))
    line = one_error(cli("convert", EVENTS, "--map", m, "-o", tmp_path / "o.jsonl"))
    assert line == (f"seekbench: error: {EVENTS}:1, trace r-101, at $.task.text: [trace] question = '$.task.text' "
                    f"(from {m}) matches nothing in this record; fix the path in the mapping file")


def test_help_explains_the_map(cli):
    out = cli("convert", "--help").out
    assert "--map FILE" in out and "mapping file (TOML)" in " ".join(out.split())
