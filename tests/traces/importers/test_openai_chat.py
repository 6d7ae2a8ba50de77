"""OpenAI chat importer: message mapping, tool-call matching, documents, file layouts and user errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _importer_support import FIXTURES, load_records
from _importer_support import write_jsonl as _write_jsonl

from seekbench._errors import UserInputError
from seekbench.traces.importers._openai_chat import iter_records



def load(path, **options) -> list:
    return load_records(iter_records, path, **options)


def write_jsonl(tmp_path: Path, *records: object, name: str = "chat.jsonl") -> Path:
    return _write_jsonl(tmp_path, *records, name=name)


def call(cid: str, name: str, args: object) -> dict:
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}


def chat(*messages: dict, **fields) -> dict:
    return {"id": "t", "model": "m", **fields, "messages": [{"role": "user", "content": "Q?"}, *messages]}


def one(tmp_path: Path, record: object, **options) -> dict:
    (trace,) = load(write_jsonl(tmp_path, record), **options)
    assert isinstance(trace, dict), trace
    return trace


def kinds(trace: dict) -> list[str]:
    return [s["kind"] for s in trace["steps"]]


def resolve(record: object, path: str) -> object:
    """Follow ``$.a[1].b`` inside a parsed record."""
    obj = record
    for name, index in __import__("re").findall(r"\.(\w+)|\[(\d+)\]", path):
        obj = obj[name] if name else obj[int(index)]
    return obj


def test_fixture_mapping_and_source_refs():
    path = FIXTURES / "same.openai.jsonl"
    traces = load(path, agent="fallback-agent")
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    t = traces[0]
    assert (t["trace_id"], t["agent"], t["question"]) == ("velmora", "toy-agent",
                                                           "In which country is the town of Velmora?")
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert t["metadata"]["system"] == ["You answer questions and may call the search tool."]
    assert t["steps"][1]["tool"] == "search" and t["steps"][1]["query"] == "Velmora town location"
    assert [d.get("score") for d in t["steps"][2]["documents"]] == [1.0, 0.5]
    assert t["final_answer"] == "Norland"  # taken from <answer>...</answer>
    assert traces[2]["agent"] == "fallback-agent" and traces[2]["trace_id"] == "same.openai.jsonl:3"
    for trace, rec in zip(traces, raw, strict=True):
        for s in trace["steps"]:
            ref = s["source_ref"]
            assert ref["format"] == "openai_chat" and ref["record_id"] == trace["trace_id"]
            assert resolve(rec, ref["path"]) is not None  # the path points at the source message or field


def test_parallel_calls_results_follow_their_calls_and_depend_on_them():
    path = FIXTURES / "parallel.openai.json"
    par, cut = load(path)
    assert kinds(par) == ["reasoning", "search", "search_result", "search", "search_result", "reasoning", "answer"]
    assert par["steps"][1]["query"] == "Mount Feld height | Feld elevation"  # a list of queries is joined
    assert par["steps"][3]["tool"] == "visit" and par["steps"][3]["url"] == "https://example.org/feld"
    assert par["steps"][2]["depends_on"] == [1] and par["steps"][4]["depends_on"] == [3]
    assert par["steps"][2]["documents"] == [{"id": "17", "title": "Mount Feld", "text": "2,140 metres", "rank": 1}]
    assert par["steps"][5]["original_kind"] == "reasoning"  # the "reasoning" field
    assert par["question"] == "How tall is Mount Feld?"  # from content parts
    assert par["metadata"]["system"] == ["Answer briefly."]
    # items of a whole-file JSON list carry their own line and a $[i] path
    lines = path.read_text().splitlines()
    assert lines[par["source"]["line"] - 1].strip() == "{" and par["source"]["path"] == "$[0]"
    assert lines[cut["source"]["line"] - 1].strip() == "{" and cut["source"]["line"] > par["source"]["line"]
    assert par["steps"][1]["source_ref"]["path"] == "$[0].messages[2].tool_calls[0]"
    # legacy function_call / function role; a later user message is kept as "other"; no answer: cut off
    assert kinds(cut) == ["reasoning", "other", "search", "search_result"]
    assert cut["steps"][2]["query"] == "Grey Tide poem author" and cut["final_answer"] is None


def test_tool_output_documents(tmp_path):
    outputs = {
        "json": (json.dumps([{"title": "A", "snippet": "s", "url": "u", "id": 3, "score": 2}]),
                 [{"id": "3", "title": "A", "text": "s", "rank": 1, "url": "u", "score": 2.0}]),
        "wrapped": (json.dumps({"organic": [{"title": "B", "content": "c"}]}),
                    [{"id": None, "title": "B", "text": "c", "rank": 1}]),
        "passages": ("Doc 1(Title: C) cc\nDoc 2(Title: D) dd", [{"id": None, "title": "C", "text": "cc", "rank": 1},
                                                               {"id": None, "title": "D", "text": "dd", "rank": 2}]),
        "plain": ("just text", [{"id": None, "title": None, "text": "just text", "rank": 1}]),
        "broken json": ("[not json", [{"id": None, "title": None, "text": "[not json", "rank": 1}]),
        "empty": ("", []),
    }
    for content, expected in outputs.values():
        t = one(tmp_path, chat({"role": "assistant", "content": None, "tool_calls": [call("c", "search", {"q": "x"})]},
                               {"role": "tool", "tool_call_id": "c", "content": content}))
        assert t["steps"][1]["documents"] == expected
        assert t["steps"][0]["query"] == "x"


def test_question_sources_and_answer_extraction(tmp_path):
    rec = chat({"role": "assistant", "content": "I think <answer>Rome</answer>"}, question="Given?")
    t = one(tmp_path, rec)
    assert t["question"] == "Given?" and t["metadata"]["prompt"] == "Q?"
    assert t["final_answer"] == "Rome" and t["steps"][0]["text"] == "I think <answer>Rome</answer>"
    assert one(tmp_path, rec, answer_tag=None)["final_answer"] == "I think <answer>Rome</answer>"
    t = one(tmp_path, chat({"role": "assistant", "content": "plain"}), question="Opt?")
    assert t["question"] == "Opt?" and t["final_answer"] == "plain"
    t = one(tmp_path, chat({"role": "assistant", "content": "<answer>unclosed"}))
    assert t["final_answer"] == "unclosed"


def test_non_final_assistant_text_is_reasoning_and_unknown_roles_are_other(tmp_path):
    t = one(tmp_path, chat({"role": "assistant", "content": "hmm"}, {"role": "critic", "content": "try again"},
                           {"role": "assistant", "content": "final"}))
    assert kinds(t) == ["reasoning", "other", "answer"] and t["steps"][1]["original_kind"] == "critic"


def test_tool_message_without_id_matches_a_single_waiting_call(tmp_path):
    t = one(tmp_path, chat({"role": "assistant", "content": None, "tool_calls": [call("c", "search", {"query": "x"})]},
                           {"role": "tool", "content": "r"}))
    assert kinds(t) == ["search", "search_result"]


def test_jsonl_line_holding_a_list_of_records(tmp_path):
    path = write_jsonl(tmp_path, [chat(id="a"), chat(id="b")])
    a, b = load(path)
    assert (a["trace_id"], b["trace_id"]) == ("a", "b") and b["source"]["path"] == "$[1]"


def test_broken_pretty_printed_file_gives_one_error_with_its_line(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text('[\n  {"messages": [\n    {"role": "user", "content": "q"}\n  ]\n  }\n  oops\n]\n')
    (err,) = load(path)
    assert isinstance(err, UserInputError) and err.line == 6 and "malformed JSON" in str(err)


def test_agent_defaults_to_the_file_stem_with_a_note(tmp_path):
    # issue 11: a bare message list names no agent; that is a default with one note, never a failure
    path = write_jsonl(tmp_path, [{"role": "user", "content": "q"}])
    (rec,) = list(iter_records(path))
    assert rec.trace["agent"] == path.stem and rec.trace["question"] == "q"
    assert rec.notes == [f"note: {path} names no agent; using its file name {path.stem!r} (pass --agent NAME to set one)"]


_ASSIST = {"role": "assistant", "content": None}


@pytest.mark.parametrize(("messages", "path"), [
    ([{**_ASSIST, "tool_calls": [call("c", "search", '{"query": "x"')]}], "$.messages[1].tool_calls[0].function.arguments"),
    ([{**_ASSIST, "tool_calls": [call("c", "search", "[1]")]}], "$.messages[1].tool_calls[0].function.arguments"),
    ([{**_ASSIST, "tool_calls": [call("c", "search", {"query": 5})]}],
     "$.messages[1].tool_calls[0].function.arguments.query"),
    ([{**_ASSIST, "tool_calls": [call("c", "search", {"queries": ["a", 1]})]}],
     "$.messages[1].tool_calls[0].function.arguments.queries[1]"),
    ([{**_ASSIST, "tool_calls": [call("c", "search", {})]}, {"role": "tool", "tool_call_id": "zz", "content": "r"}],
     "$.messages[2].tool_call_id"),
    ([{**_ASSIST, "tool_calls": [call("c", "search", {}), call("d", "search", {})]}, {"role": "tool", "content": "r"}],
     "$.messages[2].tool_call_id"),
    ([{"role": "tool", "tool_call_id": "c", "content": "r"}], "$.messages[1].tool_call_id"),
    ([{**_ASSIST, "tool_calls": {"id": "c"}}], "$.messages[1].tool_calls"),
    ([{**_ASSIST, "tool_calls": [{"id": "c", "function": "search"}]}], "$.messages[1].tool_calls[0].function"),
    ([{**_ASSIST, "tool_calls": [{"id": "c", "function": {"name": 3}}]}],
     "$.messages[1].tool_calls[0].function.name"),
    ([{**_ASSIST, "tool_calls": [{"id": 3, "function": {"name": "s"}}]}], "$.messages[1].tool_calls[0].id"),
    (["hello"], "$.messages[1]"),
    ([{"role": None, "content": "x"}], "$.messages[1].role"),
    ([{"role": "assistant", "content": 42}], "$.messages[1].content"),
    ([{"role": "assistant", "content": [3]}], "$.messages[1].content[0]"),
    ([{"role": "assistant", "content": "x", "reasoning_content": ["x"]}], "$.messages[1].reasoning_content"),
])
def test_message_errors_name_file_line_trace_and_path(tmp_path, messages, path):
    file = write_jsonl(tmp_path, chat(id="good"), chat(*messages, id="bad"))
    good, err = load(file)
    assert isinstance(good, dict) and isinstance(err, UserInputError)
    msg = str(err)
    assert "\n" not in msg and msg.startswith(f"{file}:2, trace bad, at {path}: ")
    assert (err.line, err.trace_id, err.path) == (2, "bad", path)


@pytest.mark.parametrize(("record", "path"), [
    ({"id": "r", "model": "m", "messages": {"role": "user"}}, "$.messages"),
    ({"id": "r", "model": "m"}, "$.messages"),
    ({"id": "r", "model": "m", "messages": [], "gold_answers": [None]}, "$.gold_answers[0]"),
    ({"id": "r", "model": "m", "messages": [], "dataset": 1}, "$.dataset"),
    ({"id": "r", "model": ["m"], "messages": []}, "$.model"),
    ('"a JSON string, not a record"', "$"),
])
def test_record_errors(tmp_path, record, path):
    (err,) = load(write_jsonl(tmp_path, record))
    assert isinstance(err, UserInputError) and err.path == path and err.line == 1


def test_mixed_fixture_keeps_good_records():
    items = load(FIXTURES / "mixed.openai.jsonl")
    assert [x["trace_id"] if isinstance(x, dict) else x.line for x in items] == ["o1", 2, 3, 4, "o4"]
    assert "invalid JSON in tool-call arguments" in str(items[1])


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["role", "content", "tool_calls", "tool_call_id", "id", "function", "name",
                                          "arguments", "query", "reasoning_content", "function_call", "type"]),
                         inner, max_size=5), max_leaves=20)
_MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool", "system", "x"])},
                                 optional={"content": _JSON, "tool_calls": _JSON, "tool_call_id": _JSON,
                                           "reasoning_content": _JSON})


@settings(max_examples=200, deadline=None)
@given(messages=st.lists(st.one_of(_MESSAGE, _JSON), max_size=6))
def test_property_any_message_list_gives_a_trace_or_a_user_error(messages):
    with tempfile.TemporaryDirectory() as d:
        items = load(write_jsonl(Path(d), {"id": "p", "model": "m", "messages": messages}))
    assert len(items) == 1  # a valid trace (schema-checked in load) or a UserInputError, never a crash
