"""Files of the shapes search-agent producers write import, auto-detected, with every part where it belongs.

The fixtures under ``fixtures/importers/producers/`` are written by us in the shapes of public
files (learned, not copied): Search-R1's ``example/case.txt`` (several Qwen chat-template
transcripts one after the other), a ROLL / verl rollout record (``prompt`` + ``response`` with
turn markers inside the response), R1-Searcher's ``data/eval_results`` records, a ReSearch
(FlashRAG) JSON array, a DeepResearcher rollout dump (``message_str`` with ``<tool_call>`` JSON),
a MiroFlow task log (``main_agent_message_history``), a bare OpenAI message list, tau-bench
``historical_trajectories`` (``traj``) and an OpenAI Agents SDK run state (Responses items).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seekbench.traces import read_traces
from seekbench.traces.importers import detect_format

PRODUCERS = Path(__file__).resolve().parents[2] / "fixtures" / "importers" / "producers"


def read(name: str, **options) -> list[dict]:
    path = PRODUCERS / name
    return read_traces(path, **options).traces


def kinds(trace: dict) -> list[str]:
    return [s["kind"] for s in trace["steps"]]


def titles(step: dict) -> list[str | None]:
    return [d["title"] for d in step["documents"]]


@pytest.mark.parametrize(("name", "fmt"), [
    ("search_r1_case.txt", "search_r1"), ("llama3_transcript.txt", "search_r1"), ("roll_rollout.jsonl", "search_r1"),
    ("r1_searcher_eval.jsonl", "search_r1"), ("research_flashrag.json", "search_r1"),
    ("deepresearcher_rollout.json", "search_r1"), ("miroflow_task.json", "openai_chat"),
    ("openai_messages.json", "openai_chat"), ("tau_bench.json", "openai_chat"), ("agents_run_state.json", "openai_chat"),
])
def test_each_producer_shape_is_detected(name, fmt):
    assert detect_format(PRODUCERS / name) == fmt


def test_search_r1_transcript_file_gives_one_trace_per_transcript():
    # main read it as ONE trace with the first question and the second answer, and the instructions'
    # example tags (<search> query </search>, <answer> Beijing </answer>) as steps
    a, b = read("search_r1_case.txt")
    assert (a["trace_id"], b["trace_id"]) == ("search_r1_case.txt#1", "search_r1_case.txt#2")
    assert a["question"] == "which river flows through the town of Karvel?" and a["final_answer"] == "the Osk"
    assert b["question"] == "who designed the Lenmar bridge?" and b["final_answer"] == "Ida Voss"
    for t in (a, b):
        assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "answer"]
        assert all("Beijing" not in (s["text"] or "") and s.get("query") != "query" for s in t["steps"])
        assert "Answer the given question" in t["metadata"]["prompt_preamble"]
    assert a["steps"][1]["query"] == "Karvel town river" and titles(a["steps"][2]) == ["Karvel", "Osk (river)"]
    assert b["steps"][1]["query"] == "Lenmar bridge designer"
    assert titles(b["steps"][2]) == ["Lenmar bridge", "Ida Voss", "Lenmar"]
    assert a["source"]["line"] == 1 and b["source"]["line"] == 20  # where each transcript's system turn starts


def test_llama3_header_transcript():
    (t,) = read("llama3_transcript.txt")
    assert t["question"] == "What is the tallest peak of the Brann range?"
    assert kinds(t) == ["reasoning", "search", "search_result", "answer"] and t["final_answer"] == "Mount Ilse"
    assert t["steps"][1]["query"] == "Brann range tallest peak" and titles(t["steps"][2]) == ["Brann range"]


def test_roll_rollout_turn_markers_inside_the_response_are_turn_boundaries():
    # main: the search and its three documents went into metadata, 0 tool calls, empty question
    (t,) = read("roll_rollout.jsonl")
    assert t["question"] == "Which bird is the national bird of Veldia: the grey heron or the rock dove?"
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert t["steps"][1]["query"] == "national bird of Veldia"
    assert titles(t["steps"][2]) == ["Grey heron", "Veldia", "Rock dove"]
    assert t["steps"][2]["source_ref"]["path"].startswith("$.response[")
    assert t["final_answer"] == "the grey heron" and t["gold_answers"] == ["grey heron"]
    assert t["correct"] == {"value": True, "source": "source_data", "detail": {"field": "score"}}
    assert "prompt" in t["metadata"] and "response" not in t["metadata"]


def test_r1_searcher_eval_records():
    # main: no CLI import at all; through the API the reasoning before the first query was dropped,
    # the gold `answer` was not read and the passages were not split
    first, second = read("r1_searcher_eval.jsonl")
    assert first["question"] == "When was the Halden observatory built?"
    assert kinds(first) == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert first["steps"][0]["text"].startswith("To answer this, I need the year")
    assert first["steps"][1]["query"] == "Halden observatory built"
    assert [(d["rank"], d["title"], d["text"]) for d in first["steps"][2]["documents"]] == [
        (1, "Halden observatory", "The Halden observatory was built in 1884 on Mount Rell."),
        (2, "Mount Rell", "Mount Rell is a hill near Halden.")]
    assert first["final_answer"] == "1884" and first["gold_answers"] == ["1884"]
    assert first["correct"] == {"value": True, "source": "judge", "detail": {"field": "gpt4o_output"}}
    # passages whose title is set off by spaces, and a judge verdict of False
    assert titles(second["steps"][2]) == ["Grey Lantern", "Pell family"]
    assert second["gold_answers"] == ["Omar Pell"] and second["final_answer"] == "Ann Pell"
    assert second["correct"]["value"] is False
    assert first["metadata"]["pred_ans"] == " 1884 "


def test_r1_searcher_imports_from_the_cli(cli, tmp_path):
    out = tmp_path / "out.jsonl"
    res = cli("convert", PRODUCERS / "r1_searcher_eval.jsonl", "-o", out)
    assert res.code == 0, res
    assert "imported 2 traces: 10 steps (reasoning 4, search 2, search_result 2, answer 2), 2 tool calls, " \
           "0 action calls, 4 documents; 0 with an empty question, 0 without an answer, 0 without a tool call" in res.err


def test_research_flashrag_array_with_nested_response_and_boxed_answer():
    (t,) = read("research_flashrag.json")
    assert t["trace_id"] == "test_0" and t["source"]["path"] == "$[0]"
    assert t["question"] == "What is the capital of the region where the Tarn glacier lies?"
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert t["steps"][1]["source_ref"]["path"].startswith("$[0].output.final_response[")
    assert [(d["title"], d["text"]) for d in t["steps"][2]["documents"]] == [
        ("Tarn glacier", "The Tarn glacier lies in the Hallen region."),
        ("Hallen", "Hallen is a region whose capital is Orvik.")]
    assert t["final_answer"] == "Orvik" and t["gold_answers"] == ["Orvik"]


def test_deepresearcher_tool_calls_in_tags():
    (t,) = read("deepresearcher_rollout.json")
    assert t["trace_id"] == "0" and t["question"] == "In which year did the Corran ferry start service?"
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "search", "search_result", "reasoning",
                        "answer"]
    search, browse = t["steps"][1], t["steps"][4]
    assert (search["tool"], search["query"]) == ("web_search", "Corran ferry first service | Corran ferry history")
    assert (browse["tool"], browse["url"], browse.get("query")) == ("browse_webpage", "https://example.org/corran", None)
    assert [(d["title"], d["url"]) for d in t["steps"][2]["documents"]] == [
        ("Corran ferry", "https://example.org/corran"), ("Ferries of Ardle", "https://example.org/ardle")]
    assert [d["text"] for d in t["steps"][5]["documents"]] == ["Service on the Corran ferry began in May 1934."]
    assert t["final_answer"] == "1934"
    assert t["metadata"]["tool_kinds"] == {"browse_webpage": "search", "web_search": "search"}
    assert "<tool_call>" in t["metadata"]["prompt_preamble"]  # the instructions' example is prompt, not a step


def test_miroflow_log_with_nested_message_history():
    (t,) = read("miroflow_task.json")
    assert t["trace_id"] == "task-7" and t["question"] == "Which town hosts the Ostrel music festival?"
    assert kinds(t) == ["reasoning", "search", "search_result", "answer"]
    assert (t["steps"][1]["tool"], t["steps"][1]["query"]) == ("google_search", "Ostrel music festival town")
    assert [(d["title"], d["url"], d["text"]) for d in t["steps"][2]["documents"]] == [
        ("Ostrel festival", "https://example.org/ostrel", "Held every July in Pella."),
        ("Pella", "https://example.org/pella", "Pella is a town on the coast.")]
    assert t["final_answer"] == "Pella" and t["gold_answers"] == ["Pella"]
    assert t["correct"] == {"value": True, "source": "judge", "detail": {"field": "judge_result"}}


def test_bare_openai_message_list_from_the_cli(cli, tmp_path):
    # main: "missing agent ... pass agent=", and no CLI option to pass it
    out = tmp_path / "out.jsonl"
    res = cli("convert", PRODUCERS / "openai_messages.json", "-o", out)
    assert res.code == 0, res
    assert "names no agent; using its file name 'openai_messages'" in res.err
    (t,) = read_traces(out).traces
    assert t["agent"] == "openai_messages" and t["question"] == "What colour is the flag of Tessany?"
    assert kinds(t) == ["search", "search_result", "search", "search_result", "answer"]
    assert [s.get("tool") for s in t["steps"]] == ["google_search", None, "scrape_page", None, None]
    assert t["steps"][0]["query"] == "flag of Tessany colour" and t["steps"][2]["url"] == "https://example.org/flag"
    assert titles(t["steps"][1]) == ["Flag of Tessany", "Tessany", "Green flags"]
    assert t["metadata"]["system"] == ["You are a search agent. Use google_search and scrape_page."]
    assert t["final_answer"] == "Green."
    res = cli("convert", PRODUCERS / "openai_messages.json", "-o", out, "--agent", "my-agent")
    assert res.code == 0 and "names no agent" not in res.err
    assert read_traces(out).traces[0]["agent"] == "my-agent"


def test_tau_bench_actions_are_other_steps_not_searches(cli, tmp_path):
    # main counted booking, cancel, calculate and think tools as searches
    (t,) = read("tau_bench.json")
    assert t["trace_id"] == "3-trial0"
    assert [(s["kind"], s.get("tool")) for s in t["steps"] if s.get("tool")] == [
        ("other", "think"), ("search", "search_direct_flight"), ("other", "calculate"),
        ("other", "cancel_reservation"), ("other", "book_reservation")]
    assert kinds(t).count("search_result") == 1  # only the search's result; an action's result is 'other'
    assert t["metadata"]["tool_kinds"] == {"book_reservation": "other", "calculate": "other",
                                           "cancel_reservation": "other", "search_direct_flight": "search",
                                           "think": "other"}
    assert t["correct"] == {"value": True, "source": "source_data", "detail": {"field": "reward"}}
    res = cli("convert", PRODUCERS / "tau_bench.json", "-o", tmp_path / "o.jsonl")
    assert "1 tool call, 4 action calls" in res.err
    # --search-tools decides instead of the names
    (u,) = read("tau_bench.json", search_tools="think,calculate")
    assert [s["tool"] for s in u["steps"] if s["kind"] == "search"] == ["think", "calculate"]
    assert u["metadata"]["tool_kinds"]["search_direct_flight"] == "other"


def test_agents_sdk_run_state_responses_items():
    (t,) = read("agents_run_state.json")
    assert t["agent"] == "finder" and t["question"] == "Who founded Brisk Labs?"
    assert kinds(t) == ["reasoning", "search", "search_result", "answer"]
    assert t["steps"][0]["text"] == "Look the company up."
    assert (t["steps"][1]["tool"], t["steps"][1]["query"]) == ("web_search", "Brisk Labs founder")
    assert t["steps"][1]["source_ref"]["path"] == "$.generated_items[1].raw_item"
    assert [(d["title"], d["url"]) for d in t["steps"][2]["documents"]] == [("Brisk Labs", "https://example.org/brisk")]
    assert t["final_answer"] == "Tom Haro founded Brisk Labs."
    assert "generated_items" not in t["metadata"] and t["metadata"]["current_turn"] == 2
