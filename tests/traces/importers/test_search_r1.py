"""Search-R1 tagged-text importer: tags, documents, prompts, truncation, options and user errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _importer_support import FIXTURES, load_records
from _importer_support import write_jsonl as _write_jsonl

from seekbench._errors import UserInputError
from seekbench.traces.importers import detect_format
from seekbench.traces.importers._search_r1 import iter_records, parse_passages, parse_tool_output



def load(path, **options) -> list:
    return load_records(iter_records, path, **options)


def write_jsonl(tmp_path: Path, *records: object, name: str = "r1.jsonl") -> Path:
    return _write_jsonl(tmp_path, *records, name=name)


def one(tmp_path: Path, record: dict, **options) -> dict:
    (trace,) = load(write_jsonl(tmp_path, record), **options)
    assert isinstance(trace, dict), trace
    return trace


def kinds(trace: dict) -> list[str]:
    return [s["kind"] for s in trace["steps"]]


def test_fixture_structure_and_source_refs():
    traces = load(FIXTURES / "same.search_r1.jsonl")
    raw = [json.loads(line) for line in (FIXTURES / "same.search_r1.jsonl").read_text().splitlines()]
    assert [t["trace_id"] for t in traces] == ["velmora", "orin7", "sum"]
    t = traces[0]
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert t["agent"] == "toy-agent" and t["dataset"] == "toyqa" and t["gold_answers"] == ["Norland"]
    assert t["steps"][1]["query"] == "Velmora town location" and t["steps"][1]["tool"] == "search"
    assert [(d["rank"], d["title"]) for d in t["steps"][2]["documents"]] == [(1, "Velmora"), (2, "Velmora (ship)")]
    assert t["final_answer"] == "Norland"
    # each step depends on the one before it
    assert [s["depends_on"] for s in t["steps"]] == [[], [0], [1], [2], [3]]
    # source_ref.path is a character slice of the source field that starts at the step's tag
    for trace, rec, line in zip(traces, raw, (1, 2, 3), strict=True):
        for s in trace["steps"]:
            ref = s["source_ref"]
            assert (ref["format"], ref["file"], ref["line"], ref["record_id"]) == (
                "search_r1", str(FIXTURES / "same.search_r1.jsonl"), line, trace["trace_id"])
            field, span = ref["path"][2:].split("[")
            start, end = map(int, span.rstrip("]").split(":"))
            assert rec[field][start:end].startswith("<")


def test_prompt_with_tag_examples_goes_to_metadata():
    t = load(FIXTURES / "same.search_r1.jsonl")[1]
    # the prompt mentions <think>, <search>, <information> and an example <answer>: none become steps
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "search", "search_result",
                        "reasoning", "answer"]
    assert "<answer> Oslo </answer>" in t["metadata"]["prompt_preamble"]
    assert t["metadata"]["prompt_preamble"].endswith(t["question"])
    assert t["final_answer"] == "Ada Kessler"


def test_text_before_first_tag_is_reasoning_unless_a_prompt_is_recognised(tmp_path):
    # issue 11: R1-Searcher's outputs start with reasoning before the first tag; it is a step, not a prompt
    with_q = one(tmp_path, {"question": "Where?", "output": "Please answer.\n<think>hm</think><answer>x</answer>"})
    assert kinds(with_q) == ["reasoning", "reasoning", "answer"]
    assert with_q["steps"][0]["text"] == "Please answer." and "metadata" not in with_q
    without_q = one(tmp_path, {"output": "Let me see.\n<think>hm</think><answer>x</answer>"})
    assert kinds(without_q) == ["reasoning", "reasoning", "answer"]
    assert without_q["steps"][0]["text"] == "Let me see."
    no_tags = one(tmp_path, {"question": "Where?", "output": "I cannot tell."})
    assert kinds(no_tags) == ["reasoning"] and no_tags["final_answer"] is None


def test_text_file_with_chat_template_and_custom_tags():
    path = FIXTURES / "research.txt"
    assert detect_format(path) == "search_r1"
    (t,) = load(path, tags={"search_result": "result"})
    assert t["trace_id"] == "research.txt" and t["agent"] == "research"  # a file naming no agent: its stem
    assert t["question"] == "Which lake feeds the river Sallow?"  # read from the prompt
    assert kinds(t) == ["reasoning", "search", "search_result", "reasoning", "answer"]
    assert t["steps"][2]["documents"] == [{"id": None, "title": "Sallow (river)",
                                           "text": "The Sallow flows out of Lake Ommen.", "rank": 1}]
    assert t["final_answer"] == "Lake Ommen"  # <|im_end|> stripped
    assert "<|im_start|>user" in t["metadata"]["prompt_preamble"]
    lines = path.read_text().splitlines()
    for s in t["steps"]:  # in a text file, source_ref.line is the line the block starts on
        assert lines[s["source_ref"]["line"] - 1].lstrip().startswith("<")
    # <result> (ReSearch) is read by default too
    (plain,) = load(path)
    assert kinds(plain) == kinds(t)


def test_multi_turn_chat_template_leaves_no_role_names(tmp_path):
    out = ("<|im_start|>assistant\n<search>q</search><|im_end|>\n<|im_start|>user\n<result>r</result><|im_end|>\n"
           "<|im_start|>assistant\n<answer>a</answer><|im_end|>")
    t = one(tmp_path, {"output": out}, tags={"search_result": "result"})
    assert kinds(t) == ["search", "search_result", "answer"]


def test_pair_delimiters_for_special_token_formats(tmp_path):
    rec = {"output": "<|begin_of_query|>alpha<|end_of_query|><|begin_of_documents|>Doc 1(Title: A) aa"
                     "<|end_of_documents|><answer>b</answer>"}
    t = one(tmp_path, rec, tags={"search": ["<|begin_of_query|>", "<|end_of_query|>"],
                                 "search_result": ["<|begin_of_documents|>", "<|end_of_documents|>"]})
    assert kinds(t) == ["search", "search_result", "answer"]
    assert t["steps"][0]["query"] == "alpha" and t["steps"][1]["documents"][0]["title"] == "A"


def test_unclosed_tags_take_text_up_to_next_tag_and_are_marked(tmp_path):
    path = write_jsonl(tmp_path, {"id": "cut", "output": "<think>no closing <search>q1</search><answer>par"})
    (rec,) = list(iter_records(path))
    t = rec.trace
    assert kinds(t) == ["reasoning", "search", "answer"]
    assert t["steps"][0]["text"] == "no closing" and t["final_answer"] == "par"
    assert t["steps"][0]["source_ref"]["path"].endswith("(unclosed <think>)")
    assert t["metadata"]["unclosed_tags"] == [{"step": 0, "tag": "<think>"}, {"step": 2, "tag": "<answer>"}]
    assert len(rec.warnings) == 2 and "trace cut" in rec.warnings[0]


def test_closing_tag_after_a_reopened_tag_does_not_swallow_blocks(tmp_path):
    t = one(tmp_path, {"output": "<think>a<search>q</search><think>b</think><answer>c</answer>"})
    assert kinds(t) == ["reasoning", "search", "reasoning", "answer"]


def test_outside_text_and_trailing_text(tmp_path):
    t = one(tmp_path, {"output": "<think>a</think> between </think><search>q</search>x<answer>c</answer> after"})
    assert kinds(t) == ["reasoning", "reasoning", "search", "reasoning", "answer", "other"]
    assert t["steps"][1]["text"] == "between"  # a stray closing tag is dropped
    assert t["steps"][-1]["original_kind"] == "text_after_answer"


def test_record_fields_and_metadata(tmp_path):
    t = one(tmp_path, {"id": 12, "question": "Q?", "ground_truth": {"target": ["A", 3]}, "model": "m1",
                       "agent": "a1", "question_id": 7, "is_correct": True, "reward": 1.0,
                       "generation": "<answer>A</answer>"}, agent="ignored")
    assert t["trace_id"] == "12" and t["agent"] == "a1" and t["question_id"] == "7"
    assert t["gold_answers"] == ["A", "3"]
    assert t["correct"] == {"value": True, "source": "source_data", "detail": {"field": "is_correct"}}
    assert t["metadata"] == {"reward": 1.0}
    u = one(tmp_path, {"question": "Q?", "text": "<answer>A</answer>"}, agent="opt-agent")
    assert u["agent"] == "opt-agent" and u["trace_id"] == "r1.jsonl:1" and u["question_id"] == "::q?"
    v = one(tmp_path, {"text": "<answer>A</answer>", "response": "<answer>B</answer>"}, field="response")
    assert v["final_answer"] == "B"


@pytest.mark.parametrize(("record", "path", "trace_id"), [
    ({"id": "a", "output": 5}, "$.output", "a"),
    ({"id": "b", "question": "q"}, "$.output", "b"),
    ({"id": "c", "question": ["q"], "output": ""}, "$.question", "c"),
    ({"id": "d", "golden_answers": ["x", None], "output": ""}, "$.golden_answers[1]", "d"),
    ({"id": "e", "is_correct": "yes", "output": ""}, "$.is_correct", "e"),
    ({"id": 1.5, "output": ""}, "$.id", None),
    ({"id": "f", "model": 3, "output": ""}, "$.model", "f"),
    (["not", "a", "record"], "$", None),
])
def test_user_errors_name_file_line_trace_and_path(tmp_path, record, path, trace_id):
    file = write_jsonl(tmp_path, {"id": "ok", "output": "<answer>x</answer>"}, record)
    first, err = load(file)
    assert isinstance(first, dict)  # the bad record does not lose the good one
    assert isinstance(err, UserInputError)
    msg = str(err)
    assert "\n" not in msg and f"{file}:2" in msg and f"at {path}:" in msg
    assert (err.file, err.line, err.path, err.trace_id) == (str(file), 2, path, trace_id)
    if trace_id is not None:
        assert f"trace {trace_id}" in msg


def test_mixed_fixture_keeps_good_records():
    items = load(FIXTURES / "mixed.search_r1.jsonl")
    assert [type(x).__name__ for x in items] == ["dict", "UserInputError", "UserInputError", "dict"]
    assert items[1].line == 2 and "malformed JSON" in str(items[1])
    assert items[2].trace_id == "g3" and items[2].path == "$.output"


@pytest.mark.parametrize("tags", [{"observation": "obs"}, {"search": "bad tag"}, {"search": ["<a>"]}, ["think"]])
def test_bad_tags_option_is_a_user_error(tmp_path, tags):
    with pytest.raises(UserInputError, match="option tags"):
        load(write_jsonl(tmp_path, {"output": ""}), tags=tags)


def test_invalid_utf8_text_file_is_a_record_error(tmp_path):
    path = tmp_path / "gen.txt"
    path.write_bytes(b"<think>caf\xe9</think>")
    (err,) = load(path)
    assert isinstance(err, UserInputError) and "UTF-8" in str(err)


def test_blank_text_file_holds_no_trace(tmp_path):
    path = tmp_path / "gen.txt"
    path.write_text("  \n")
    assert load(path) == []


def test_parse_passages_edge_cases():
    assert parse_passages("") == [] and parse_passages(None) == []
    assert parse_passages("plain text") == [{"id": None, "title": None, "text": "plain text", "rank": 1}]
    docs = parse_passages('Doc 1(Title: "Quoted") one\nDoc 2(Title: Open (paren) two\nDoc 3(Title: NoClose\nbody')
    assert [(d["title"], d["text"]) for d in docs] == [("Quoted", "one"), ("Open (paren", "two"), ("NoClose", "body")]
    assert parse_tool_output("[1, 2]")[0]["text"] == "[1, 2]"  # JSON that is not documents stays text


_SAFE = st.text(st.characters(blacklist_characters="<>\r", blacklist_categories=("Cs",)), min_size=1, max_size=30
                ).filter(lambda s: s.strip() and not s.lstrip().startswith("Doc"))
_BLOCK = st.tuples(st.sampled_from(["think", "search", "information", "answer"]), _SAFE)
_KIND = {"think": "reasoning", "search": "search", "information": "search_result", "answer": "answer"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(_BLOCK, max_size=8))
def test_property_tagged_blocks_round_trip(blocks):
    text = "\n".join(f"<{tag}>{body}</{tag}>" for tag, body in blocks)
    with tempfile.TemporaryDirectory() as d:
        (t,) = load(write_jsonl(Path(d), {"output": text}))
    assert kinds(t) == [_KIND[tag] for tag, _ in blocks]
    assert [s["text"] for s in t["steps"]] == [body.strip() for _, body in blocks]
    answers = [body.strip() for tag, body in blocks if tag == "answer"]
    assert t["final_answer"] == (answers[-1] if answers else None)


_NOISE = st.lists(st.one_of(st.sampled_from(["<think>", "</think>", "<search>", "</search>", "<information>",
                                             "</information>", "<answer>", "</answer>", "Doc 1(Title: ", ")",
                                             "<|im_start|>assistant\n", "<|im_end|>", "\n", "Question: q"]),
                            st.text(max_size=12)), max_size=25).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=_NOISE, question=st.sampled_from([None, "q", ""]))
def test_property_any_text_imports_without_crashing(text, question):
    rec = {"output": text} if question is None else {"output": text, "question": question}
    with tempfile.TemporaryDirectory() as d:
        items = load(write_jsonl(Path(d), rec))  # validates every trace against the schema
    assert len(items) == 1 and isinstance(items[0], dict)


@settings(max_examples=100, deadline=None)
@given(docs=st.lists(st.tuples(st.text(st.characters(blacklist_characters='()"\n\r', blacklist_categories=("Cs",)),
                                       min_size=1).filter(str.strip),
                               st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)))
                               .filter(lambda s: not s.lstrip().startswith("Doc"))), min_size=1, max_size=5))
def test_property_passages_round_trip(docs):
    text = "".join(f"Doc {i}(Title: {t}) {x}\n" for i, (t, x) in enumerate(docs, start=1))
    parsed = parse_passages(text)
    assert [(d["rank"], d["title"], d["text"]) for d in parsed] == [
        (i, t.strip(), x.strip()) for i, (t, x) in enumerate(docs, start=1)]


def test_verl_records_with_the_prompt_inside_the_text_or_apart(tmp_path):
    prompt = ("<|im_start|>system\nSearch with <search> query </search>; answer in <answer> x </answer>.<|im_end|>\n"
              "<|im_start|>user\nQuestion: Where is Brell?\n<|im_end|>\n<|im_start|>assistant\n")
    output = "<search> Brell </search><information>Doc 1(Title: Brell) In Lowmark.</information><answer>Lowmark</answer>"
    together = one(tmp_path, {"sequences_str": prompt + output, "reward": 0.0})
    apart = one(tmp_path, {"input": prompt, "output": output, "gts": ["Lowmark"], "score": 1})
    for t in (together, apart):
        assert t["question"] == "Where is Brell?" and kinds(t) == ["search", "search_result", "answer"]
        assert t["steps"][0]["query"] == "Brell" and t["final_answer"] == "Lowmark"
    assert together["correct"] == {"value": False, "source": "source_data", "detail": {"field": "reward"}}
    assert apart["gold_answers"] == ["Lowmark"] and apart["correct"]["value"] is True
    # a reward that is neither 0 nor 1 (format credit) decides nothing
    assert one(tmp_path, {"output": output, "reward": 0.2})["correct"] is None


_TITLE = st.text(st.characters(blacklist_characters="()\n\r", blacklist_categories=("Cs", "Zs", "Cc")),
                 min_size=1, max_size=12)
_BODY = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=30).filter(
    lambda s: "Text:" not in s and "Title:" not in s)


@settings(max_examples=100, deadline=None)
@given(docs=st.lists(st.tuples(_TITLE, _BODY), min_size=1, max_size=5))
def test_property_r1_searcher_passages_round_trip(docs):
    text = "".join(f"({i})Title: {t} Text: {x}\n" for i, (t, x) in enumerate(docs, start=1))
    assert [(d["rank"], d["title"], d["text"]) for d in parse_passages(text)] == [
        (i, t.strip(), x.strip()) for i, (t, x) in enumerate(docs, start=1)]


def test_plain_user_assistant_template(tmp_path):
    # ReSearch without a chat template: instructions with example tags, then "User: q. Assistant:"
    text = ("The assistant reasons in <think> </think> and searches with <search> </search>; results come in "
            "<result> </result>. For example, <think> reasoning </think> <search> query here </search> "
            "<answer> The final answer is \\[ \\boxed{answer here} \\] </answer>. User: Who built the Arlen tower?. "
            "Assistant: <think> Search it. </think> <search> Arlen tower builder </search> <result>\n\"Arlen tower\"\n"
            "Built by Kai Moro.\n</result> <answer> The final answer is \\[ \\boxed{Kai Moro} \\] </answer>")
    t = one(tmp_path, {"output": text})
    assert t["question"] == "Who built the Arlen tower?"
    assert kinds(t) == ["reasoning", "search", "search_result", "answer"]
    assert t["steps"][1]["query"] == "Arlen tower builder" and t["final_answer"] == "Kai Moro"
    assert t["steps"][2]["documents"] == [{"id": None, "title": "Arlen tower", "text": "Built by Kai Moro.", "rank": 1}]
    assert t["metadata"]["prompt_preamble"].endswith("Assistant:")
