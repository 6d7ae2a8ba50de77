"""The same traces written in four source formats import to the same steps; and each file is auto-detected.

``same.*`` hold three invented traces (one search, two searches, no search) as SeekBench
JSONL, Search-R1 tagged text (one record with its full prompt), OpenAI chat messages (JSON
and ``Doc i(Title: t)`` tool outputs, one bare message list) and ATIF trajectories.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seekbench.traces import validate_trace, write_jsonl
from seekbench.traces.importers import detect_format, importer_for

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "importers"
SAME = {"seekbench": "same.seekbench.jsonl", "search_r1": "same.search_r1.jsonl",
        "openai_chat": "same.openai.jsonl", "atif": "same.atif.jsonl"}


def traces_of(fmt: str, name: str) -> list[dict]:
    options = {"agent": "toy-agent"} if fmt == "openai_chat" else {}  # its third record is a bare message list
    out = []
    for rec in importer_for(fmt).iter_records(FIXTURES / name, **options):
        assert rec.error is None, rec.error
        validate_trace(rec.trace)
        out.append(rec.trace)
    return out


def shape(trace: dict) -> dict:
    """What must agree across formats: kinds, queries, documents' titles and texts, the final answer."""
    steps = []
    for s in trace["steps"]:
        if s["kind"] == "search":
            steps.append(("search", s.get("query")))
        elif s["kind"] == "search_result":
            steps.append(("search_result", [(d.get("title"), d.get("text")) for d in s.get("documents", [])]))
        else:
            steps.append((s["kind"],))
    return {"question": trace["question"], "steps": steps, "final_answer": trace["final_answer"]}


def test_same_traces_in_every_format_import_identically():
    shapes = {fmt: [shape(t) for t in traces_of(fmt, name)] for fmt, name in SAME.items()}
    reference = shapes.pop("seekbench")
    assert len(reference) == 3
    assert [len(s["steps"]) for s in reference] == [5, 8, 2]
    for fmt, got in shapes.items():
        assert got == reference, fmt


def test_reference_shape_is_what_the_fixture_says():
    first = shape(traces_of("search_r1", SAME["search_r1"])[0])
    assert first == {
        "question": "In which country is the town of Velmora?",
        "steps": [("reasoning",), ("search", "Velmora town location"),
                  ("search_result", [("Velmora", "Velmora is a small town on the eastern coast of Norland."),
                                     ("Velmora (ship)", "Velmora was a cargo ship launched in 1911.")]),
                  ("reasoning",), ("answer",)],
        "final_answer": "Norland"}


@pytest.mark.parametrize(("name", "fmt"), [
    *((name, fmt) for fmt, name in SAME.items()),
    ("research.txt", "search_r1"),
    ("trajectory.atif.json", "atif"),
    ("parallel.openai.json", "openai_chat"),
    ("mixed.search_r1.jsonl", "search_r1"),
    ("mixed.openai.jsonl", "openai_chat"),
    ("mixed.atif.jsonl", "atif"),
])
def test_detect_format_of_each_fixture(name, fmt):
    assert detect_format(FIXTURES / name) == fmt


def test_canonical_output_is_not_taken_for_atif_and_atif_not_for_canonical(tmp_path):
    canonical = tmp_path / "canonical.jsonl"
    write_jsonl(canonical, traces_of("atif", SAME["atif"]))
    assert detect_format(canonical) == "canonical"
    reread = list(importer_for("canonical").iter_records(canonical))
    assert [r.trace["trace_id"] for r in reread] == ["velmora", "orin7", "sum"]
    assert detect_format(FIXTURES / "same.atif.jsonl") == "atif"


@pytest.mark.parametrize("fmt", ["seekbench", "search_r1", "openai_chat", "atif"])
def test_each_sniff_claims_only_its_own_first_record(fmt):
    for other, name in SAME.items():
        path = FIXTURES / name
        head = path.read_text()[: 1 << 16]
        first = json.loads(head.splitlines()[0])
        assert importer_for(fmt).sniff(str(path), head, first) is (other == fmt), (fmt, other)


@pytest.mark.parametrize(("fmt", "record"), [
    ("openai_chat", {"id": "x", "model": "m", "messages": [{"role": "system", "content": "s" * 70000},
                                                          {"role": "user", "content": "q"}]}),
    ("atif", {"schema_version": "ATIF-v1.4", "session_id": "x", "agent": {"name": "a", "version": "1"},
              "steps": [{"step_id": 1, "source": "system", "message": "s" * 70000}]}),
    ("search_r1", {"id": "x", "output": "<think>" + "s" * 70000 + "</think><answer>a</answer>"}),
])
def test_detection_when_the_first_record_is_longer_than_the_head(tmp_path, fmt, record):
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    assert detect_format(path) == fmt


def test_a_long_canonical_line_with_tags_in_step_text_stays_canonical(tmp_path):
    (trace,) = [t for t in traces_of("search_r1", SAME["search_r1"]) if t["trace_id"] == "sum"]
    trace["steps"][0]["text"] = "<answer>" + "s" * 70000
    path = tmp_path / "long.jsonl"
    write_jsonl(path, [trace, trace])
    for fmt in ("openai_chat", "atif", "search_r1"):
        head = path.read_text()[: 1 << 16]
        assert not importer_for(fmt).sniff(str(path), head, None), fmt
