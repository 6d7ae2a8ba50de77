"""Answers given through a tool (``submit``, ``final_answer`` ..., ``--answer-tool``) in every importer that
sees tool calls: ATIF, Inspect, OpenTelemetry, Langfuse and mapping files (the chat importer's own tests
are in test_chat_shapes.py). The call is the ``answer`` step and ``final_answer``; a closing message after
it is reasoning, not a second answer; ``convert --explain`` names the call's arguments as the source.

Expected values are read by hand from the fixtures under shapes/ (answer_tool*), written for these tests.
"""

from __future__ import annotations

import inspect as pyinspect
import json
from pathlib import Path

import pytest

from _importer_support import FIXTURES, load_records, write_jsonl

from seekbench.traces._read import importer_options
from seekbench.traces.importers import importer_for
from seekbench.traces.importers._atif import iter_records as atif_records
from seekbench.traces.importers._inspect import iter_records as inspect_records
from seekbench.traces.importers._langfuse import iter_records as langfuse_records
from seekbench.traces.importers._mapped import iter_records as mapped_records
from seekbench.traces.importers._otel import iter_records as otel_records

SHAPES = FIXTURES / "shapes"
ATIF, INSPECT = SHAPES / "answer_tool.atif.json", SHAPES / "answer_tool.inspect.json"
OTEL, LANGFUSE = SHAPES / "answer_tool_otel.jsonl", SHAPES / "answer_tool_langfuse.json"


def _steps(trace: dict) -> list[tuple]:
    return [(s["kind"], s.get("tool"), s["source_ref"]["path"]) for s in trace["steps"]]


def test_atif_submit_call_is_the_answer_and_the_closing_message_is_reasoning():
    (rec,) = list(atif_records(ATIF))
    t = rec.trace
    assert t["final_answer"] == "Tamsin Vey"
    assert _steps(t) == [
        ("search", "web_search", "$.steps[1].tool_calls[0]"),
        ("search_result", None, "$.steps[1].observation.results[0]"),
        ("reasoning", None, "$.steps[2].message"),
        ("answer", "submit", "$.steps[2].tool_calls[0]"),
        ("other", None, "$.steps[2].observation.results[0]"),  # the submit tool's reply is no search result
        ("reasoning", None, "$.steps[3].message"),  # "I submitted Tamsin Vey." after the call
    ]
    assert t["steps"][3]["text"] == "Tamsin Vey" and t["steps"][4]["depends_on"] == [3]
    assert rec.sources["final_answer"] == "$.steps[2].tool_calls[0].arguments"
    assert t["metadata"]["tool_kinds"] == {"submit": "answer", "web_search": "search"}


def test_inspect_submit_call_is_the_answer():
    (rec,) = list(inspect_records(INSPECT))
    t = rec.trace
    assert t["final_answer"] == "Brannock"
    assert _steps(t) == [
        ("search", "web_search", "$.samples[0].messages[1].tool_calls[0]"),
        ("search_result", None, "$.samples[0].messages[2]"),
        ("reasoning", None, "$.samples[0].messages[3].content"),
        ("answer", "submit", "$.samples[0].messages[3].tool_calls[0]"),
        ("other", None, "$.samples[0].messages[4]"),
        ("reasoning", None, "$.samples[0].messages[5].content"),  # "Done: Brannock." is no second answer
    ]
    assert rec.sources["final_answer"] == "$.samples[0].messages[3].tool_calls[0].arguments"


def test_otel_answer_tool_span_and_answer_tool_call_in_llm_output():
    rec1, rec2 = list(otel_records(OTEL))
    # trace 1: tool spans; final_answer is a TOOL span, its input the answer; the LLM span after it is reasoning
    t1 = rec1.trace
    assert t1["final_answer"] == "Old Marrow"
    assert [(s["kind"], s.get("tool"), s["source_ref"]["record_id"], s["source_ref"]["path"]) for s in t1["steps"]] == [
        ("search", "web_search", "A-search", "input.value"),
        ("search_result", None, "A-search", "output.value"),
        ("answer", "final_answer", "A-final", "input.value"),
        ("other", None, "A-final", "output.value"),
        ("reasoning", None, "A-llm3", "llm.output_messages.0"),
    ]
    assert rec1.sources["final_answer"] == "span A-final input.value"
    # trace 2: no tool span; the submit call in the first LLM span's output is the answer
    t2 = rec2.trace
    assert t2["final_answer"] == "Wenna Roe"
    assert [(s["kind"], s.get("tool"), s["source_ref"]["record_id"]) for s in t2["steps"]] == [
        ("answer", "submit", "B-llm1"),
        ("reasoning", None, "B-llm2"),
    ]


def test_langfuse_answer_tool_observation_is_the_answer():
    (rec,) = list(langfuse_records(LANGFUSE))
    t = rec.trace
    assert t["final_answer"] == "The Grey Lantern"
    assert [(s["kind"], s.get("tool"), s["source_ref"]["record_id"]) for s in t["steps"]] == [
        ("reasoning", None, "ob-gen1"),
        ("search", "web_search", "ob-search"),
        ("search_result", None, "ob-search"),
        ("answer", "final_answer", "ob-answer"),
        ("other", None, "ob-answer"),
        ("reasoning", None, "ob-gen2"),  # the wrap-up generation's text is no second answer
    ]
    assert rec.sources["final_answer"] == "$.observations[2].input"


def test_langfuse_answer_tool_call_in_a_generation_names_its_arguments(tmp_path):
    gen = {"id": "g1", "type": "GENERATION", "name": "g", "startTime": "2026-04-02T12:00:01.000Z",
           "input": [{"role": "user", "content": "Q?"}],
           "output": {"role": "assistant", "content": None,
                      "tool_calls": [{"id": "c1", "type": "function",
                                      "function": {"name": "submit", "arguments": "{\"answer\": \"A1\"}"}}]}}
    path = tmp_path / "lf.json"
    path.write_text(json.dumps({"id": "t1", "timestamp": "2026-04-02T12:00:00Z", "observations": [gen]}))
    (rec,) = list(langfuse_records(path))
    assert rec.trace["final_answer"] == "A1"
    assert _steps(rec.trace) == [("answer", "submit", "$.observations[0].output.tool_calls[0]")]
    assert rec.sources["final_answer"] == "$.observations[0].output.tool_calls[0].function.arguments"


def test_mapped_steps_with_an_answer_tool(tmp_path):
    rec = {"q": "Which mill grinds at Osk?",
           "events": [{"tool": "web_search", "args": {"query": "Osk mill"}, "out": "The Osk mill is Brenna's."},
                      {"tool": "final_answer", "args": {"answer": "Brenna's mill"}, "out": "ok"},
                      {"text": "All done."}]}
    path = write_jsonl(tmp_path, rec, name="events.jsonl")
    m = tmp_path / "m.toml"
    m.write_text('[trace]\nquestion = "$.q"\n[steps]\npath = "$.events[*]"\ntext = "$.text"\n'
                 '[tool]\nname = "$.tool"\narguments = "$.args"\nresult = "$.out"\n', encoding="utf-8")
    (t,) = load_records(mapped_records, path, mapping=m, agent="bot")
    # hand-derived: the search and its result, the answer call and its reply (other), the closing text
    assert [(s["kind"], s.get("tool")) for s in t["steps"]] == [
        ("search", "web_search"), ("search_result", None), ("answer", "final_answer"), ("other", None),
        ("other", None)]
    assert t["final_answer"] == "Brenna's mill"


def _renamed(path: Path, tmp_path: Path) -> Path:
    """The fixture with its answer tool called ``hand_in``, a name no default knows."""
    text = path.read_text(encoding="utf-8").replace('"submit"', '"hand_in"').replace('"final_answer"', '"hand_in"')
    out = tmp_path / path.name
    out.write_text(text, encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("fixture", "read", "answer"),
    [(ATIF, atif_records, "Tamsin Vey"), (INSPECT, inspect_records, "Brannock"), (OTEL, otel_records, "Old Marrow"),
     (LANGFUSE, langfuse_records, "The Grey Lantern")],
    ids=["atif", "inspect", "otel", "langfuse"],
)
def test_answer_tool_option_names_another_tool(tmp_path, fixture, read, answer):
    path = _renamed(fixture, tmp_path)
    plain = load_records(read, path)[0]
    assert "hand_in" in plain["metadata"]["tool_kinds"] and plain["metadata"]["tool_kinds"]["hand_in"] == "other"
    assert plain["final_answer"] != answer  # an unknown tool is an action; the closing message answers
    named = load_records(read, path, answer_tool="hand_in")[0]
    assert named["final_answer"] == answer and named["metadata"]["tool_kinds"]["hand_in"] == "answer"


@pytest.mark.parametrize("fmt", ["openai_chat", "search_r1", "atif", "inspect", "otel", "langfuse", "mapped"])
def test_importers_that_see_tool_calls_take_the_option(fmt):
    _, ignored = importer_options(fmt, {"answer_tool": "hand_in"})
    assert ignored == [] and "answer_tool" in pyinspect.signature(importer_for(fmt).iter_records).parameters


def test_cli_answer_tool_is_not_reported_ignored(cli, tmp_path):
    res = cli("convert", _renamed(ATIF, tmp_path), "--explain", "--answer-tool", "hand_in")
    assert res.code == 0, res
    lines = res.out.splitlines()
    assert lines[0].endswith("format atif (detected)")  # no "; ignores --answer-tool"
    assert "  final_answer  <- $.steps[2].tool_calls[0].arguments: 'Tamsin Vey'" in lines
