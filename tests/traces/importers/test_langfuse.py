"""Langfuse traces: the public API's trace JSON (one file, JSONL, list answers), observations to steps.

The fixtures under ``fixtures/importers/shapes/langfuse_*`` are ours (invented content), in the shape
of ``GET /api/public/traces/{id}`` as Langfuse's API types define it (``TraceWithFullDetails``:
the trace fields, ``observations`` in full, ``scores``). Every expected value below is read off
the fixture by hand: the observations' ``startTime`` order gives the step order.
"""

from __future__ import annotations

import json

import pytest

from seekbench import UserInputError
from seekbench.labels import AnnotationSet, span_index, span_label_records
from seekbench.traces import detect_format, read_traces
from seekbench.traces.importers._langfuse import iter_records

from _importer_support import FIXTURES, load_records, write_jsonl

SHAPES = FIXTURES / "shapes"
TRACE_ID = "4b1e0c7d9a2f4e3b8c6d5a1f0e9b7c2d"


def _steps(t: dict) -> list[tuple]:
    return [(s["kind"], s.get("tool"), s.get("query"), [d["title"] for d in s.get("documents", [])])
            for s in t["steps"]]


def _observations(t: dict) -> list[str | None]:
    return [s["source_ref"]["record_id"] for s in t["steps"]]


@pytest.mark.parametrize("name", ["langfuse_trace.json", "langfuse_traces.jsonl", "langfuse_list.json"])
def test_detected(name):
    assert detect_format(SHAPES / name) == "langfuse"


def test_one_trace_file():
    (t,) = read_traces(SHAPES / "langfuse_trace.json").traces
    assert (t["trace_id"], t["source"]["record_id"], t["source"]["format"]) == (TRACE_ID, TRACE_ID, "langfuse")
    # the trace name, then the first generation's model
    assert t["agent"] == "river-agent/gpt-4o-mini-2024-07-18"
    assert t["question"] == "Which river flows through the town of Quorra?"  # trace input.question
    assert (t["gold_answers"], t["dataset"], t["question_id"]) == (["Vell", "the Vell River"], "rivers-dev", "rv-001")
    assert t["final_answer"] == "The Vell"  # the <answer> block of the last generation
    # the score named Correctness (BOOLEAN 1) by an ANNOTATION: a human verdict; helpfulness is not read
    assert t["correct"]["value"] is True and t["correct"]["source"] == "human"
    assert t["correct"]["detail"]["score"] == "Correctness"
    # file order is answer, agent, plan, web_search, save_note, event, retriever; startTime order puts
    # plan (0.2 s) < web_search (1.1 s) < save_note (2.1 s, the EVENT at the same time gives no step)
    # < kb-retriever (3.0 s) < answer (5.1 s). The plan's tool call is not a step of its own: the TOOL
    # observation is the call; its text beside the call is reasoning.
    assert _steps(t) == [
        ("reasoning", None, None, []),
        ("search", "web_search", "Quorra town river", []),
        ("search_result", None, None, ["Quorra", "Vell (river)"]),
        ("other", "save_note", None, []),  # save_note retrieves nothing: an action
        ("other", None, None, []),
        ("search", "kb-retriever", "Vell river course", []),  # a RETRIEVER outside a tool stays a search
        ("search_result", None, None, ["Vell facts", "Port Lisk"]),
        ("answer", None, None, [])]
    assert _observations(t) == ["11aa22bb33cc44dd", "5e5e6f6f7a7a8b8b", "5e5e6f6f7a7a8b8b", "9c9c8d8d7e7e6f6f",
                                "9c9c8d8d7e7e6f6f", "7b7b6c6c5d5d4e4e", "7b7b6c6c5d5d4e4e", "a6c2e1f0b3d44e5f"]
    assert [s["source_ref"]["path"] for s in t["steps"]][:3] == [
        "$.observations[2].output", "$.observations[3].input", "$.observations[3].output"]
    assert t["steps"][4]["text"] == "saved" and t["steps"][4]["depends_on"] == [3]
    assert [d["url"] for d in t["steps"][6]["documents"]] == ["kb://rivers/vell", "kb://towns/port-lisk"]
    assert t["steps"][6]["documents"][0]["text"] == "The Vell is 212 km long."
    meta = t["metadata"]
    assert meta["tool_kinds"] == {"kb-retriever": "search", "save_note": "other", "web_search": "search"}
    assert meta["langfuse"]["sessionId"] == "sess-rivers-7" and meta["langfuse"]["observations"] == 7


def test_jsonl_traces():
    first, second = read_traces(SHAPES / "langfuse_traces.jsonl").traces
    # no TOOL observation: the generation's tool calls are the steps, the tool messages of the next
    # generation's input their results, each placed after its own call (c2 answered before c1)
    assert first["trace_id"] == "lf-run-0001" and first["agent"] == "llama-3.1-8b-instruct"  # no trace name
    assert first["question"] == "In which year was the Ardan bridge opened?"  # the input's user message
    assert _steps(first) == [
        ("search", "search", "Ardan bridge opened", []),
        ("search_result", None, None, ["Ardan bridge", "Ardan", "Bridges of Norland"]),
        ("other", "calculator", None, []),
        ("other", None, None, []),
        ("answer", None, None, [])]
    assert _observations(first) == ["obs-g1", "obs-g2", "obs-g1", "obs-g2", "obs-g2"]
    assert first["steps"][3]["text"] == "136" and first["steps"][3]["depends_on"] == [2]
    assert (first["final_answer"], first["gold_answers"]) == ("1890", ["1890"])  # gold from expected_output
    assert first["correct"]["value"] is False and first["correct"]["source"] == "source_data"  # "incorrect", API
    # decorator-style spans: a leaf SPAN named search_wikipedia is a search, its first positional
    # argument the query; bash (a TOOL at the same start time, later in the file) comes after it
    assert (second["agent"], second["question"]) == ("qa-pipeline", "When was the Ardan observatory built?")
    assert _steps(second) == [
        ("search", "search_wikipedia", "Ardan observatory", []),
        ("search_result", None, None, ["Ardan Observatory", "Ardan hills"]),
        ("other", "bash", None, []),
        ("other", None, None, []),
        ("answer", None, None, [])]
    assert (second["final_answer"], second["gold_answers"], second["correct"]) == (
        "It was built in 1911.", ["1911"], None)


def test_list_answer():
    a, b = read_traces(SHAPES / "langfuse_list.json").traces
    assert a["source"]["path"] == "$.data[0]" and a["agent"] == "kb-bot/claude-test-1"
    assert a["question"] == "Who designed the Quill Bridge?"  # no trace input: the first generation's user
    # "kb" is no search word, but a RETRIEVER sits under it: a retrieving tool, with the retriever's documents
    assert _steps(a) == [
        ("reasoning", None, None, []),
        ("search", "kb", "Quill Bridge designer", []),
        ("search_result", None, None, ["Quill Bridge", "Mira Tal"]),
        ("answer", None, None, [])]
    assert a["final_answer"] == "Mira Tal designed it." and a["gold_answers"] == ["Mira Tal"]
    assert a["correct"]["value"] is True and a["correct"]["source"] == "judge"  # exact_match 1 by an EVAL
    # no observations: the trace's own input and output
    assert (b["question"], b["final_answer"], _steps(b)) == (
        "What colour is the Quill Bridge?", "Red", [("answer", None, None, [])])


def test_search_tools_decide(tmp_path):
    (t,) = read_traces(SHAPES / "langfuse_trace.json", search_tools="save_note").traces
    # exactly the listed tools are searches: web_search becomes an action, save_note a search;
    # the RETRIEVER stays a search (no tool decides it)
    assert [s["kind"] for s in t["steps"]] == ["reasoning", "other", "other", "search", "search_result",
                                               "search", "search_result", "answer"]
    assert t["metadata"]["tool_kinds"] == {"kb-retriever": "search", "save_note": "search", "web_search": "other"}


def test_observations_answer_grouped_by_trace(tmp_path):
    doc = json.loads((SHAPES / "langfuse_trace.json").read_text())
    path = tmp_path / "observations.json"  # GET /api/public/observations answers {data, meta}
    path.write_text(json.dumps({"data": doc["observations"], "meta": {"page": 1, "totalItems": 7}}))
    assert detect_format(path) == "langfuse"
    (t,) = read_traces(path).traces
    assert t["trace_id"] == TRACE_ID and t["agent"] == "gpt-4o-mini-2024-07-18"  # no trace: the model
    assert t["question"] == "Which river flows through the town of Quorra?"  # the first generation's user
    assert [s["kind"] for s in t["steps"]] == ["reasoning", "search", "search_result", "other", "other", "search",
                                               "search_result", "answer"]
    assert t["steps"][1]["source_ref"]["path"] == "$.data[3].input"


def test_ids_only_and_bad_observations_are_user_errors(tmp_path):
    doc = json.loads((SHAPES / "langfuse_trace.json").read_text())
    ids_only = {**doc, "observations": [o["id"] for o in doc["observations"]], "scores": ["sc-01"]}
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"data": [ids_only], "meta": {"page": 1}}))
    (err,) = load_records(iter_records, path)
    assert isinstance(err, UserInputError) and "GET /api/public/traces/{id}" in str(err)
    assert err.trace_id == TRACE_ID and err.path == "$.data[0].observations[0]"
    no_id = {**doc, "observations": [{**doc["observations"][0], "id": ""}]}
    bad_type = {**doc, "observations": [{**doc["observations"][0], "type": "WIDGET"}]}
    good = {**doc, "id": "second"}
    recs = load_records(iter_records, write_jsonl(tmp_path, no_id, bad_type, good, name="t.jsonl"))
    assert "observation id must be a non-empty string" in str(recs[0]) and recs[0].line == 1
    assert "unknown observation type 'WIDGET'" in str(recs[1]) and recs[1].path == "$.observations[0].type"
    assert recs[2]["trace_id"] == "second"  # the neighbours are kept


def test_labels_go_back_to_the_observations():
    traces = read_traces(SHAPES / "langfuse_trace.json").traces
    t = traces[0]
    labels = AnnotationSet.from_records([
        {"trace_id": TRACE_ID, "step": 2, "field": "sufficiency", "value": "Sufficient", "unscored_reason": None,
         "rater": "alice", "provenance": {"kind": "human", "time": "2026-03-15T00:00:00Z"}}])
    (score,) = span_label_records(labels, span_index(traces), to="langfuse").records
    # the score names the Langfuse trace and the web_search TOOL observation the result came from
    assert (score["traceId"], score["observationId"]) == (TRACE_ID, "5e5e6f6f7a7a8b8b")
    assert t["steps"][2]["kind"] == "search_result"


def test_explain_sources_are_the_paths_read():
    (rec,) = iter_records(SHAPES / "langfuse_trace.json")
    assert {k: rec.sources[k] for k in ("agent", "question", "final_answer", "gold_answers", "correct")} == {
        # name/model joined from two keys; the plan generation (observations[2]) is the first with a model
        "agent": "joined: $.name, $.observations[2].model",
        "question": "$.input.question",
        "final_answer": "$.observations[0].output",
        "gold_answers": "$.metadata.gold_answers",
        "correct": "$.scores[1].value"}  # the value of the correctness score, not the score object
    _, no_obs = iter_records(SHAPES / "langfuse_list.json")
    assert (no_obs.sources["final_answer"], no_obs.sources["question"]) == ("$.data[1].output", "$.data[1].input.query")
