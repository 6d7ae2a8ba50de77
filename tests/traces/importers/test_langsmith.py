"""LangSmith importer: batch-ingest payloads (post + patch) and run exports (JSONL / list of runs),
runs nested by parent_run_id or dotted_order, ordered by start_time."""

from __future__ import annotations

import json

import pytest

from _importer_support import FIXTURES, load_records, write_jsonl

from seekbench._errors import UserInputError
from seekbench.traces.importers import detect_format
from seekbench.traces.importers._langsmith import iter_records

BATCH = FIXTURES / "shapes" / "langsmith_batch.json"
RUNS = FIXTURES / "shapes" / "langsmith_runs.jsonl"


def kinds(trace: dict) -> list[str]:
    return [s["kind"] for s in trace["steps"]]


def test_both_layouts_are_detected():
    assert detect_format(BATCH) == "langsmith" and detect_format(RUNS) == "langsmith"


def test_batch_payload_patches_runs_and_walks_the_tree():
    # expected values derived by hand from the fixture: chain root -> llm (calls web_search), tool
    # web_search (a retriever under it, nested only by dotted_order), tool save_note, llm answer, parser
    (trace,) = load_records(iter_records, BATCH)
    assert trace["trace_id"] == "7a1e0000-0000-4000-8000-000000000001"
    assert trace["agent"] == "harbor_agent/mini-chat-3"
    assert trace["question"] == "Which harbour is the Gull Rock light in?"
    assert trace["gold_answers"] == ["Port Mell"] and trace["dataset"] == "harbours-mini"
    assert kinds(trace) == ["reasoning", "search", "search_result", "other", "other", "answer"]
    steps = trace["steps"]
    assert steps[0]["text"] == "I will search the index."  # from the patch's outputs
    assert steps[1]["tool"] == "web_search" and steps[1]["query"] == "Gull Rock light"
    assert [d["title"] for d in steps[2]["documents"]] == ["Gull Rock", "Port Mell"]  # the retriever's
    assert steps[2]["documents"][0]["url"] == "https://example.org/gull"
    assert steps[2]["text"] == "2 results" and steps[2]["depends_on"] == [1]
    assert steps[3]["tool"] == "save_note" and steps[4]["text"] == "saved"
    assert trace["final_answer"] == "Port Mell"
    assert [s["source_ref"]["record_id"][-2:] for s in steps] == ["02", "03", "03", "05", "05", "06"]
    assert trace["metadata"]["tool_kinds"] == {"save_note": "other", "web_search": "search"}


def test_run_export_jsonl_reads_llm_tool_calls_when_there_are_no_tool_runs():
    first, second = load_records(iter_records, RUNS)
    # the runs of trace ...11 are in the file out of order: start_time puts llm 10 before llm 12
    assert first["agent"] == "abbey_agent/tiny-lc-1" and first["question"] == "Who founded Tarn Abbey?"
    assert kinds(first) == ["search", "search_result", "answer"]
    assert first["steps"][0]["query"] == "Tarn Abbey founder"
    assert [d["title"] for d in first["steps"][1]["documents"]] == ["Tarn Abbey"]
    assert first["final_answer"] == "Abbot Wyn" and first["gold_answers"] == ["Abbot Wyn"]
    # a lone chain run: question from inputs.query, the answer from outputs.answer
    assert second["agent"] == "echo" and second["question"] == "ping?"
    assert kinds(second) == ["answer"] and second["final_answer"] == "pong"


def test_search_tools_option_makes_a_tool_an_action():
    (trace,) = load_records(iter_records, BATCH, search_tools="save_note")
    assert kinds(trace)[1:5] == ["other", "other", "search", "search_result"]


def test_a_patch_without_its_run_is_an_error(tmp_path):
    doc = json.loads(BATCH.read_text(encoding="utf-8"))
    doc["patch"].append({"id": "missing-run", "outputs": {"output": "x"}})
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    records = list(iter_records(path))
    errors = [r.error for r in records if r.error is not None]
    assert len(errors) == 1 and errors[0].path == "$.patch[4]" and "missing-run" in str(errors[0])


def test_a_non_run_in_a_run_list_is_an_error_naming_it(tmp_path):
    good = {"id": "r1", "trace_id": "r1", "run_type": "chain", "name": "c", "start_time": "2025-01-01T00:00:00Z",
            "inputs": {"question": "Q?"}, "outputs": {"output": "A"}}
    path = write_jsonl(tmp_path, good, {"id": "r2", "run_type": "banana"}, name="runs.jsonl")
    out = load_records(iter_records, path)
    assert isinstance(out[0], UserInputError) and out[0].line == 2 and "not a LangSmith run" in str(out[0])
    assert out[1]["final_answer"] == "A"


def test_nested_child_runs_of_a_run_export(tmp_path):
    run = {"id": "root", "run_type": "chain", "name": "agent", "start_time": "2025-01-01T00:00:00Z",
           "inputs": {"input": "Q?"}, "outputs": {"output": "A"},
           "child_runs": [{"id": "k", "run_type": "retriever", "name": "idx", "start_time": "2025-01-01T00:00:01Z",
                           "inputs": {"query": "q"}, "outputs": {"documents": [
                               {"page_content": "t", "metadata": {"title": "T"}}]}}]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    (trace,) = load_records(iter_records, path)
    assert kinds(trace) == ["search", "search_result", "answer"]
    assert trace["steps"][0]["query"] == "q" and [d["title"] for d in trace["steps"][1]["documents"]] == ["T"]
    assert trace["steps"][1]["source_ref"]["path"] == "$.child_runs[0].outputs"


def test_real_wrap_openai_payload_imports(real_format):
    records = list(iter_records(real_format("langsmith_py_wrap_openai_.json")))
    (rec,) = records
    assert rec.trace is not None and kinds(rec.trace) == ["answer"]
    assert rec.trace["agent"] == "ChatOpenAI/gpt-4o-mini"
    assert rec.trace["question"] and rec.trace["final_answer"]
    assert rec.sources["final_answer"] == "$.patch[0].outputs.choices[0].message.content"


@pytest.mark.parametrize("path", [BATCH, RUNS], ids=lambda p: p.name)
def test_cli_convert_with_format_option(cli, tmp_path, path):
    res = cli("convert", path, "--format", "langsmith", "-o", tmp_path / "o.jsonl")
    assert res.code == 0, res


def test_a_patch_without_id_updates_the_run_with_its_dotted_order(tmp_path):
    # the JS SDK's patches carry no id: the dotted_order names the run
    order = "20250101T000000000000Zr1"
    post = {"id": "r1", "trace_id": "r1", "run_type": "llm", "name": "ChatOpenAI", "start_time": "2025-01-01T00:00:00Z",
            "dotted_order": order, "inputs": {"messages": [{"role": "user", "content": "Q?"}]}, "outputs": {}}
    patch = {"dotted_order": order, "outputs": {"choices": [{"message": {"role": "assistant", "content": "A."}}]}}
    path = tmp_path / "js.json"
    path.write_text(json.dumps({"post": [post], "patch": [patch]}), encoding="utf-8")
    (trace,) = load_records(iter_records, path)
    assert trace["question"] == "Q?" and trace["final_answer"] == "A." and kinds(trace) == ["answer"]
    assert trace["steps"][0]["source_ref"]["path"] == "$.patch[0].outputs.choices[0].message.content"
