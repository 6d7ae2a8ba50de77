"""Chat-shaped logs read by shape (issue 27, items 1-3): one fixture per shape, imported by detection.

Every expected value below is read off the fixture by hand: the steps in the order the rule of
:mod:`seekbench.traces.importers._chat_steps` gives (source order; a result right after its call
when the call was made in the same model turn), the paths of the messages they came from.
"""

from __future__ import annotations

import json

import pytest
from _importer_support import FIXTURES, load_records

from seekbench._errors import UserInputError
from seekbench.traces import read_traces
from seekbench.traces.importers import detect_format, importer_for

SHAPES = FIXTURES / "shapes"


def load(name: str, fmt: str | None = None, **options) -> list:
    path = SHAPES / name
    return load_records(importer_for(fmt or detect_format(path)).iter_records, path, **options)


def steps(trace: dict) -> list[tuple]:
    """``(kind, tool, query, path)`` of each step, in order."""
    return [(s["kind"], s.get("tool"), s.get("query"), s["source_ref"]["path"]) for s in trace["steps"]]


def titles(step: dict) -> list:
    return [d.get("title") for d in step["documents"]]


@pytest.mark.parametrize(
    "name",
    ["responses_stored.json", "prompt_completion.jsonl", "tool_call_text.jsonl", "anthropic_blocks.json",
     "flat_calls.jsonl", "string_calls.jsonl", "nested_gold.jsonl", "submit_tool.jsonl", "any_key.jsonl"],
)
def test_every_shape_is_detected_as_a_chat_log(name):
    assert detect_format(SHAPES / name) == "openai_chat"


def test_stored_responses_request_and_response():
    rs1, rs2 = load("responses_stored.json")
    assert (rs1["trace_id"], rs1["agent"]) == ("rs1", "toy-resp-2")  # the response's model, not the request's
    assert rs1["question"] == "Which river runs through the town of Tarnby?"
    assert rs1["metadata"]["system"] == ["Answer with the help of the tools."]
    # Two parallel calls (input[2], input[3]) and their outputs (input[4], input[5]): each result right
    # after its call, never the reversed call A, call B, result B, result A of before.
    assert steps(rs1) == [
        ("reasoning", None, None, "$[0].request.input[1].reasoning"),
        ("search", "web_search", "Tarnby river", "$[0].request.input[2]"),
        ("search_result", None, None, "$[0].request.input[4]"),
        ("search", "fetch_page", None, "$[0].request.input[3]"),
        ("search_result", None, None, "$[0].request.input[5]"),
        ("answer", None, None, "$[0].response.output[0].content"),
    ]
    assert [s["depends_on"] for s in rs1["steps"]] == [[], [0], [1], [2], [3], [4]]
    assert rs1["steps"][3]["url"] == "https://maps.example/tarnby"
    assert titles(rs1["steps"][2]) == ["Tarnby"]
    assert (rs1["final_answer"], rs1["gold_answers"]) == ("The Velk.", ["Velk"])
    assert rs2["question"] == "Who founded the Orsa observatory?"  # a string input is the user's message
    assert steps(rs2) == [("search", "web_search", "Orsa observatory founder", "$[1].response.output[0]"),
                          ("answer", None, None, "$[1].response.output[1].content")]
    assert rs2["final_answer"] == "Ida Marren founded it."


def test_parallel_responses_items_keep_each_result_after_its_call(tmp_path):
    items = [{"role": "user", "content": "q"},
             {"type": "function_call", "call_id": "a", "name": "search", "arguments": '{"query": "A"}'},
             {"type": "function_call", "call_id": "b", "name": "search", "arguments": '{"query": "B"}'},
             {"type": "function_call_output", "call_id": "a", "output": "ra"},
             {"type": "function_call_output", "call_id": "b", "output": "rb"}]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(items))
    (t,) = load_records(importer_for(detect_format(path)).iter_records, path)
    assert [(s["kind"], s.get("query") or s["text"]) for s in t["steps"]] == [
        ("search", "A"), ("search_result", "ra"), ("search", "B"), ("search_result", "rb")]
    assert [s["depends_on"] for s in t["steps"]] == [[], [0], [1], [2]]


def test_prompt_plus_completion_is_one_conversation():
    pc1, pc2 = load("prompt_completion.jsonl")
    assert pc1["question"] == "How tall is Mount Keld?" and pc1["metadata"]["system"] == ["You may search."]
    assert steps(pc1) == [("search", "search", "Mount Keld height", "$.completion[0].tool_calls[0]"),
                          ("search_result", None, None, "$.completion[1]"),
                          ("answer", None, None, "$.completion[2].content")]
    assert titles(pc1["steps"][1]) == ["Mount Keld"]
    assert (pc1["final_answer"], pc1["gold_answers"]) == ("2,140 m", ["2140 m"])
    # strings: the prompt is the user's message, the completion the assistant's
    assert pc2["question"] == "What colour is the flag of Norland?"
    # the answer's path is the string itself ($.completion holds no object with a content key)
    assert steps(pc2) == [("answer", None, None, "$.completion")]
    assert pc2["final_answer"] == "It is green and white."


def test_tool_calls_written_as_text_in_chat_turns():
    web, r1, sailor = load("tool_call_text.jsonl")
    assert web["question"] == "In which year did the Harlow ferry first sail?"
    assert [(k, tool, q) for k, tool, q, _ in steps(web)] == [
        ("reasoning", None, None),
        ("search", "search", "Harlow ferry first sailing | Harlow ferry history"),
        ("search_result", None, None),
        ("reasoning", None, None),
        ("search", "visit", None),
        ("search_result", None, None),
        ("reasoning", None, None),
        ("answer", None, None),
    ]
    # paths are character slices of the message each step came from (hand-counted on the fixture)
    assert [p for *_, p in steps(web)][:3] == ["$.messages[2].content[0:31]", "$.messages[2].content[32:155]",
                                               "$.messages[3].content[0:115]"]
    assert web["steps"][4]["url"] == "https://ferries.example/harlow"
    assert [len(s.get("documents", [])) for s in web["steps"] if s["kind"] == "search_result"] == [1, 1]
    assert (web["final_answer"], web["gold_answers"]) == ("1921", ["1921"])
    assert web["metadata"]["prediction"] == "1921" and "prompt_preamble" not in web["metadata"]
    # Search-R1 tags inside messages: the question is the one after "Question:", the prompt kept apart
    assert r1["question"] == "Who painted the Velmora chapel ceiling?"
    assert r1["metadata"]["prompt_preamble"].startswith("Answer the given question.")
    assert [(k, q) for k, _, q, _ in steps(r1)] == [
        ("reasoning", None), ("search", "Velmora chapel ceiling painter"), ("search_result", None),
        ("reasoning", None), ("answer", None)]
    assert titles(r1["steps"][2]) == ["Velmora chapel", "Brask"]
    assert (r1["final_answer"], r1["gold_answers"]) == ("Oda Brask", ["Brask"])
    # WebSailor style: tool instructions (with example tags, which are no steps) end in "User: {question}"
    assert sailor["question"] == "Which lighthouse stands on Skarv island?"
    assert sailor["metadata"]["prompt_preamble"].startswith("A dialogue in which")
    assert [(k, q) for k, _, q, _ in steps(sailor)] == [
        ("reasoning", None), ("search", "Skarv island lighthouse"), ("search_result", None),
        ("reasoning", None), ("answer", None)]
    assert steps(sailor)[1][3] == "$.messages[2].content[26:122]"  # the <tool_call> block: len(text) is 122
    assert sailor["final_answer"] == "Skarv Light"


def test_search_r1_format_reads_a_message_list_field():
    web, r1, _ = load("tool_call_text.jsonl", "search_r1", field="messages")
    assert web["source"]["format"] == r1["source"]["format"] == "search_r1"
    assert [s["kind"] for s in r1["steps"]] == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert (r1["question"], r1["final_answer"]) == ("Who painted the Velmora chapel ceiling?", "Oda Brask")
    assert web["steps"][1]["source_ref"]["path"] == "$.messages[2].content[32:155]"


def test_anthropic_content_blocks():
    (t,) = load("anthropic_blocks.json")
    assert (t["agent"], t["question"]) == ("toy-claude", "What is the capital of the province of Estrel?")
    # results come reversed (tu_2 first) and are matched by tool_use_id
    assert steps(t) == [
        ("reasoning", None, None, "$.messages[1].content[0]"),
        ("reasoning", None, None, "$.messages[1].content[1]"),
        ("search", "web_search", "Estrel province capital", "$.messages[1].content[2]"),
        ("search_result", None, None, "$.messages[2].content[1]"),
        ("other", "get_weather", None, "$.messages[1].content[3]"),
        ("other", None, None, "$.messages[2].content[0]"),
        ("answer", None, None, "$.messages[3].content"),
    ]
    assert t["steps"][0]["text"] == "Two lookups in parallel."
    assert titles(t["steps"][3]) == ["Estrel"] and t["steps"][5]["text"] == "Sunny, 21 C."
    assert (t["final_answer"], t["gold_answers"]) == ("The capital is Mora.", ["Mora"])


def test_flat_and_string_calls():
    (flat,) = load("flat_calls.jsonl")
    assert steps(flat) == [("search", "search_web", "Ilse Varn birthplace", "$.messages[1].tool_calls[0]"),
                           ("search_result", None, None, "$.messages[2]"),
                           ("answer", None, None, "$.messages[3].content")]
    assert flat["final_answer"] == "Kessel."
    (st,) = load("string_calls.jsonl")
    assert steps(st) == [("search", "web_search", "Lake Orsa depth", "$.messages[1].tool_calls[0]"),
                         ("search_result", None, None, "$.messages[2]"),
                         ("search", "web_search", "Lake Orsa area", "$.messages[1].tool_calls[1]"),
                         ("search_result", None, None, "$.messages[3]"),
                         ("answer", None, None, "$.messages[4].content")]
    assert st["steps"][2]["text"] == '{"query": "Lake Orsa area"}'  # arguments encoded twice, read once decoded


def test_a_call_string_that_is_not_json_is_a_user_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "b", "messages": [{"role": "user", "content": "q"},
                                                        {"role": "assistant", "tool_calls": ["search(q)"]}]}) + "\n")
    (err,) = load_records(importer_for("openai_chat").iter_records, path)
    assert isinstance(err, UserInputError) and err.path == "$.messages[1].tool_calls[0]"
    assert "tool call is a string that is not a JSON object" in str(err)


def test_nested_gold_answers_are_flattened():
    ng1, ng2 = load("nested_gold.jsonl")
    assert ng1["gold_answers"] == ["Orsa", "Orsa town"]
    assert ng2["gold_answers"] == ["Velk", "Rhone", "Rhône"]


def test_an_answer_given_through_a_tool():
    sb1, sb2 = load("submit_tool.jsonl")
    assert steps(sb1) == [("search", "web_search", "Andel Brook retirement", "$.messages[1].tool_calls[0]"),
                          ("search_result", None, None, "$.messages[2]"),
                          ("reasoning", None, None, "$.messages[3].content"),
                          ("answer", "submit", None, "$.messages[3].tool_calls[0]"),
                          ("other", None, None, "$.messages[4]"),
                          ("reasoning", None, None, "$.messages[5].content")]  # "Done." is no second answer
    assert (sb1["final_answer"], sb1["steps"][3]["text"]) == ("1842", "1842")
    assert sb1["metadata"]["tool_kinds"] == {"submit": "answer", "web_search": "search"}
    assert sb2["final_answer"] is None and [s["kind"] for s in sb2["steps"]] == ["other"]
    _, sb2 = load("submit_tool.jsonl", answer_tool="reply_to_user")
    assert sb2["final_answer"] == "TB-41" and [s["kind"] for s in sb2["steps"]] == ["answer"]


def test_answer_tool_option_on_the_command_line(cli, tmp_path):
    out = tmp_path / "o.jsonl"
    res = cli("convert", SHAPES / "submit_tool.jsonl", "--answer-tool", "reply_to_user", "-o", out)
    assert res.code == 0
    traces = [json.loads(x) for x in out.read_text().splitlines()]
    assert [t["final_answer"] for t in traces] == ["1842", "TB-41"]
    assert "0 without an answer" in res.err


def test_messages_under_any_key():
    (t,) = load("any_key.jsonl")
    assert steps(t) == [("search", "search", "Norland sea", "$.dialog[1].tool_calls[0]"),
                        ("search_result", None, None, "$.dialog[2]"),
                        ("answer", None, None, "$.dialog[3].content")]
    assert (t["question"], t["gold_answers"], t["final_answer"]) == (
        "Which sea borders Norland?", ["Grey Sea"], "The Grey Sea.")
    assert "dialog" not in t.get("metadata", {})


def test_role_lists_of_other_shapes_under_other_keys_are_not_chats(tmp_path):
    # smolagents' intermediate_steps use tool-call / tool-response roles written as Python text: not read
    rec = {"question": "q", "intermediate_steps": [{"role": "user", "content": "q"},
                                                   {"role": "tool-call", "content": "Calling tools: [...]"}]}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(UserInputError, match="cannot tell the trace format"):
        detect_format(path)


def test_summary_counts_of_all_shapes():
    chats = ["anthropic_blocks.json", "any_key.jsonl", "flat_calls.jsonl", "nested_gold.jsonl", "prompt_completion.jsonl",
             "responses_stored.json", "string_calls.jsonl", "submit_tool.jsonl", "tool_call_text.jsonl"]
    res = read_traces([SHAPES / name for name in chats])  # the other shapes' fixtures sit beside them
    # 1 + 1 + 1 + 2 + 2 + 2 + 1 + 2 + 3 traces (anthropic ... tool_call_text); sb2 has no answer without --answer-tool
    assert len(res.traces) == 15 and res.summary.no_answer == 1


def test_text_calls_answered_in_tool_messages_and_in_parallel(tmp_path):
    call = '<tool_call>{{"name": "search", "arguments": {{"query": "{}"}}}}</tool_call>'
    msgs = [{"role": "user", "content": "q?"},
            {"role": "assistant", "content": call.format("A") + "\n" + call.format("B")},
            {"role": "tool", "content": "<tool_response>ra</tool_response>\n<tool_response>rb</tool_response>"},
            {"role": "assistant", "content": "<answer>x</answer>"}]
    path = tmp_path / "qwen.jsonl"
    path.write_text(json.dumps({"id": "q", "messages": msgs}) + "\n")
    (t,) = load_records(importer_for(detect_format(path)).iter_records, path)
    # two calls in one turn: each result right after its call, the oldest waiting call answered first
    assert [(s["kind"], s.get("query") or s["text"]) for s in t["steps"]] == [
        ("search", "A"), ("search_result", "ra"), ("search", "B"), ("search_result", "rb"), ("answer", "x")]
    assert [s["depends_on"] for s in t["steps"]] == [[], [0], [1], [2], [3]]
    assert t["final_answer"] == "x"


def test_answer_tool_written_as_text_in_a_search_r1_record(tmp_path):
    out = ('<think>t</think><tool_call>{"name": "search", "arguments": {"query": "Q"}}</tool_call>'
           '<tool_response>r</tool_response>'
           '<tool_call>{"name": "final_answer", "arguments": {"answer": "Mora"}}</tool_call>')
    path = tmp_path / "r1.jsonl"
    path.write_text(json.dumps({"id": "f", "question": "q?", "output": out}) + "\n")
    assert detect_format(path) == "search_r1"
    (t,) = load_records(importer_for("search_r1").iter_records, path)
    assert [s["kind"] for s in t["steps"]] == ["reasoning", "search", "search_result", "answer"]
    assert (t["final_answer"], t["steps"][3]["text"], t["steps"][3]["tool"]) == ("Mora", "Mora", "final_answer")
    assert t["metadata"]["tool_kinds"] == {"final_answer": "answer", "search": "search"}


def test_web_search_call_actions(tmp_path):
    items = [{"role": "user", "content": "q?"},
             {"type": "web_search_call", "id": "w1", "action": {"type": "search", "query": "Velk river"}},
             {"type": "web_search_call", "id": "w2", "action": {"type": "open_page", "url": "https://a.example"}},
             {"type": "web_search_call", "id": "w3",
              "action": {"type": "find", "url": "https://a.example", "pattern": "source"}},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A."}]}]
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(items))
    (t,) = load_records(importer_for(detect_format(path)).iter_records, path)
    assert [(s["kind"], s.get("query"), s.get("url")) for s in t["steps"]] == [
        ("search", "Velk river", None), ("search", None, "https://a.example"),
        ("search", "source", "https://a.example"), ("answer", None, None)]


def test_explain_names_where_a_tool_answer_came_from():
    (rec, _) = list(importer_for("openai_chat").iter_records(SHAPES / "submit_tool.jsonl"))
    assert rec.sources["final_answer"] == "$.messages[3].tool_calls[0].function.arguments"  # the answer argument
    (rs1, _) = list(importer_for("openai_chat").iter_records(SHAPES / "responses_stored.json"))
    assert rs1.sources["agent"] == "$[0].response.model"
    (_, r1, _) = list(importer_for("openai_chat").iter_records(SHAPES / "tool_call_text.jsonl"))
    # the question runs from after "Question: " to the end of its line
    content = json.loads((SHAPES / "tool_call_text.jsonl").read_text().splitlines()[1])["messages"][0]["content"]
    start, end = content.index("Who painted"), content.index("?\n") + 1
    assert r1.sources["question"] == f"$.messages[0].content[{start}:{end}]"
