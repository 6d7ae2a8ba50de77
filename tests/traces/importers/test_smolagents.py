"""smolagents importer: the benchmark's answer records with the agent's memory as chat messages
(``tool-call`` / ``tool-response`` roles, calls as Python repr) or as memory step dicts."""

from __future__ import annotations

import json

import pytest

from _importer_support import FIXTURES, load_records, write_jsonl

from seekbench._errors import UserInputError
from seekbench.traces.importers import detect_format
from seekbench.traces.importers._smolagents import iter_records

MESSAGES = FIXTURES / "shapes" / "smolagents_messages.jsonl"
STEPS = FIXTURES / "shapes" / "smolagents_memory_steps.json"


def kinds(trace: dict) -> list[str]:
    return [s["kind"] for s in trace["steps"]]


def test_both_shapes_are_detected():
    assert detect_format(MESSAGES) == "smolagents" and detect_format(STEPS) == "smolagents"


def test_message_memory_reads_calls_results_and_the_final_answer_tool():
    # expected values derived by hand from the first record of the fixture
    first, _ = load_records(iter_records, MESSAGES)
    assert first["agent"] == "tool-calling/tiny-model-1"
    assert first["question"] == "In which year was the Brindle Lighthouse first lit?"
    assert first["metadata"]["prompt"].endswith("Answer with only the final number.")
    assert first["gold_answers"] == ["1871"] and first["final_answer"] == "1871"
    assert first["dataset"] == "SimpleQA"
    assert kinds(first) == ["reasoning", "search", "search_result", "reasoning", "search", "search",
                            "search_result", "reasoning", "answer", "other"]
    steps = first["steps"]
    assert [s.get("query") for s in steps if s["kind"] == "search"] == [
        "Brindle Lighthouse first lit", "Brindle Lighthouse history", None]
    assert steps[5]["tool"] == "visit_webpage" and steps[5]["url"] == "https://example.org/brindle"
    # "0. [title](url)" results, counted from 0 as smolagents' web search writes them
    assert [d["title"] for d in steps[2]["documents"]] == ["Brindle Lighthouse", "Cape walks"]
    assert steps[2]["documents"][1]["url"] == "https://example.org/cape"
    # the joined output of two parallel calls cannot be split: one result depending on both calls
    assert steps[6]["depends_on"] == [4, 5]
    assert [d["title"] for d in steps[6]["documents"]] == ["Brindle history"]
    assert steps[8]["tool"] == "final_answer" and steps[9]["original_kind"] == "tool_result"
    assert first["metadata"]["tool_kinds"] == {"final_answer": "answer", "visit_webpage": "search",
                                               "web_search": "search"}


def test_a_failed_call_and_no_final_answer_tool_take_the_records_answer():
    _, second = load_records(iter_records, MESSAGES)
    assert kinds(second) == ["reasoning", "other", "other", "answer"]
    assert second["steps"][1]["tool"] == "python_interpreter" and second["steps"][1]["text"] == "print(1)"
    assert second["steps"][2]["text"].startswith("Call id: c9\nError:") and second["steps"][2]["depends_on"] == [1]
    assert second["final_answer"] == "Agent stopped due to iteration limit or time limit."
    assert second["gold_answers"] == ["2210", "2,210"]


def test_memory_step_dicts_of_a_code_agent():
    (trace,) = load_records(iter_records, STEPS)
    assert trace["trace_id"] == "q-17" and trace["question_id"] == "q-17"
    assert trace["agent"] == "tiny-model-2" and trace["question"] == "Who designed the Vell bridge?"
    assert kinds(trace) == [
        "reasoning", "reasoning", "search", "search_result", "reasoning", "other", "other", "answer"]
    assert trace["steps"][0]["original_kind"] == "plan"
    assert trace["steps"][2]["query"] == "Vell bridge designer"
    assert [d["title"] for d in trace["steps"][3]["documents"]] == ["Vell bridge", "Korr, Ada"]
    assert trace["steps"][5]["text"] == "final_answer('Ada Korr')"
    assert trace["final_answer"] == "Ada Korr" and trace["gold_answers"] == ["Ada Korr"]
    assert trace["steps"][7]["original_kind"] == "action_output"


def test_search_tools_option_is_honoured():
    first, _ = load_records(iter_records, MESSAGES, search_tools="web_search")
    assert [s["tool"] for s in first["steps"] if s["kind"] == "other" and s.get("tool")] == ["visit_webpage"]


def _record(steps) -> dict:
    return {"question": "Q?", "true_answer": "A", "answer": "A", "intermediate_steps": steps}


@pytest.mark.parametrize(
    ("steps", "path", "words"),
    [
        ([{"role": "tool-call", "content": "Calling tools:\n[__import__('os')]"}],
         "$.intermediate_steps[0].content", "not a Python literal"),
        ([{"role": "tool-call", "content": "calls: []"}], "$.intermediate_steps[0].content", "Calling tools:"),
        ([{"role": "tool-call", "content": "Calling tools:\n{'id': 'x'}"}], "$.intermediate_steps[0].content",
         "must be array"),
        ([{"role": "user", "content": "hi"}, {"weird": 1}], "$.intermediate_steps[1]", "memory item"),
        ("Step 1: ActionStep(...)", "$.intermediate_steps", "str() of each memory step"),
    ],
)
def test_unreadable_runs_are_errors_naming_the_field(tmp_path, steps, path, words):
    (err,) = load_records(iter_records, write_jsonl(tmp_path, _record(steps), name="s.jsonl"))
    assert isinstance(err, UserInputError) and err.path == path and words in str(err)


def test_calls_longer_than_the_literal_limit_are_refused(tmp_path):
    text = "Calling tools:\n[" + "'x', " * 300_000 + "]"
    rec = _record([{"role": "tool-call", "content": text}])
    (err,) = load_records(iter_records, write_jsonl(tmp_path, rec, name="big.jsonl"))
    assert isinstance(err, UserInputError) and "at most" in str(err)


def test_a_vanilla_run_is_its_answer(tmp_path):
    rec = {**_record("The answer is A."), "agent_action_type": "vanilla", "model_id": "m"}
    (trace,) = load_records(iter_records, write_jsonl(tmp_path, rec, name="v.jsonl"))
    assert kinds(trace) == ["answer"] and trace["final_answer"] == "A" and trace["agent"] == "vanilla/m"


def test_real_benchmark_output_imports(real_format):
    # the smolagents benchmark's gpt-4o tool-calling SimpleQA output (50 records, read in place)
    records = [r for r in iter_records(real_format("smolagents_gpt4o_toolcalling_simpleqa.jsonl"))]
    assert len(records) == 50 and all(r.trace is not None for r in records)
    traces = [r.trace for r in records]
    assert all(t["final_answer"] and t["gold_answers"] for t in traces)
    # one run answers at once (final_answer only, read from the file): the other 49 search
    assert sum(any(s["kind"] == "search" for s in t["steps"]) for t in traces) == 49
    # every web_search result list opens with "## Search Results" and holds at least one titled document
    results = [s for t in traces for s in t["steps"] if s["kind"] == "search_result"
               and s["text"].startswith("## Search Results")]
    assert results and all(s["documents"] and s["documents"][0]["title"] for s in results)
    json.dumps(traces)
