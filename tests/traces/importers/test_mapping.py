"""Mapping files (``--map``): the JSONPath subset, the TOML schema and its errors, the mapped importer,
and the round trip ``convert --explain`` -> map file -> ``convert --map``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _importer_support import FIXTURES, load_records, write_jsonl

from seekbench import UserInputError
from seekbench.traces import read_traces
from seekbench.traces.importers import load_mapping
from seekbench.traces.importers._jsonpath import PathError, find, parse
from seekbench.traces.importers._mapped import iter_records

MAPPED, SHAPES = FIXTURES / "mapped", FIXTURES / "shapes"
EVENTS, EVENTS_MAP = MAPPED / "events.jsonl", MAPPED / "events.map.toml"


def test_paths_match_keys_indices_stars_quoted_keys_and_slices():
    doc = {"a": [{"b": 1}, {"c": 2}, {"b": None}], "x y": {"it's": "v"}, "q": "Which city?"}
    # hand-derived: [*] goes through the three items; the second has no b; a null b is still a match
    assert find(doc, "$.a[*].b") == [("$.a[0].b", 1), ("$.a[2].b", None)]
    assert find(doc, "$.a[-1]") == [("$.a[-1]", {"b": None})]
    assert find(doc, "$['x y']['it\\'s']") == [("$['x y']['it\\'s']", "v")]
    assert find(doc, "$.q[6:10]") == [("$.q[6:10]", "city")]  # "Which city?"[6:10]
    assert find(doc, "$.a[5]") == [] and find(doc, "$.q.b") == [] and find(doc, "$.a.b") == []
    assert find(doc, "$") == [("$", doc)]


@pytest.mark.parametrize("bad", ["a.b", "$..a", "$.a[", "$[1:2].a", "$.1a", "$['open"])
def test_paths_outside_the_subset_are_refused(bad):
    with pytest.raises(PathError):
        parse(bad)


def test_the_mapped_importer_reads_an_unknown_shape():
    t1, t2 = load_records(iter_records, EVENTS, mapping=EVENTS_MAP)
    assert (t1["trace_id"], t1["agent"], t1["question"]) == ("r-101", "kite-3", "Which river runs through Dunmarsh?")
    assert t1["gold_answers"] == ["the Avel", "Avel"]  # [["the Avel"], "Avel"] flattened in order
    assert (t1["final_answer"], t1["correct"]["value"]) == ("the Avel", True)  # "yes" is a verdict word
    # four events -> six steps: each call with a result is followed by that result, in source order
    got = [(s["kind"], s.get("tool"), s.get("query"), s["source_ref"]["path"]) for s in t1["steps"]]
    assert got == [
        ("reasoning", None, None, "$.events[0]"),
        ("search", "web_search", "Dunmarsh river", "$.events[1]"),  # the query from JSON-string arguments
        ("search_result", None, None, "$.events[1].output"),
        ("other", "send_email", None, "$.events[2]"),  # not a search tool: an action
        ("other", None, None, "$.events[2].output"),
        ("answer", None, None, "$.events[3]"),
    ]
    docs = t1["steps"][2]["documents"]
    assert [(d["title"], d["url"], d["text"], d["rank"]) for d in docs] == [
        ("Dunmarsh", "https://ex.org/dunmarsh", "Dunmarsh lies on the Avel.", 1),
        ("Avel (river)", "https://ex.org/avel", "The Avel flows east to the sea.", 2),
    ]
    assert t2["steps"] == [] and t2["final_answer"] is None and t2["correct"]["value"] is False


def test_the_mapped_importer_states_where_each_field_came_from():
    rec = next(iter_records(EVENTS, mapping=EVENTS_MAP))
    assert rec.sources == {
        "trace_id": "$.run.id",
        "question": "$.task.prompt",
        "final_answer": "$.result.answer",
        "agent": "$.run.model",
        "gold_answers": "$.task.expected",
        "correct": "$.result.ok",
    }


def _map(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_required_path_that_matches_nothing_is_an_error_naming_file_line_trace_and_path(tmp_path):
    m = _map(tmp_path, '[trace]\nid = "$.run.id"\nquestion = "$.task.question"\n[steps]\npath = "$.events[*]"\n')
    err = load_records(iter_records, EVENTS, mapping=m)[0]
    assert isinstance(err, UserInputError)
    assert err.one_line() == (
        f"{EVENTS}:1, trace r-101, at $.task.question: [trace] question = '$.task.question' (from {m}) matches "
        "nothing in this record; fix the path in the mapping file"
    )
    m = _map(tmp_path, '[trace]\nquestion = "$.task.prompt"\n[steps]\npath = "$.steps[*]"\n')
    err = load_records(iter_records, EVENTS, mapping=m)[0]
    assert isinstance(err, UserInputError) and err.path == "$.steps[*]" and err.line == 1
    assert "[steps] path = '$.steps[*]'" in err.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[trace]\nquestion = 1\n", "at [trace] question: must be a path string"),
        ('[trace]\nquestion = "question"\n[steps]\npath = "$.s[*]"\n', "at [trace] question: a path starts with '$'"),
        ('[trace]\nquestion = "$.q"\n', "at [steps] path: no steps"),
        ('[trace]\nquestion = "$.q"\n[steps]\npath = "$.s"\n', "at [steps] path: must end in [*]"),
        ('[trace]\nquestion = "$.q"\nwho = "$.w"\n[steps]\npath = "$.s[*]"\n', "at [trace] who: unknown key"),
        ('[trace]\nquestion = "$.q"\n[steps]\npath = "$.s[*]"\nkind = "$.t"\n[steps.kinds]\nthinking = ["t"]\n',
         "at [steps.kinds] thinking: unknown step kind"),
        ('[trace]\nquestion = "$.q"\n[step]\npath = "$.s[*]"\n', "unknown table [step]"),
        ("[trace\n", "--map: not valid TOML"),
        ('[steps]\npath = "$.s[*]"\n', "at [trace]: no question"),
    ],
)
def test_a_bad_mapping_file_is_one_line_naming_the_file_and_the_key(tmp_path, text, message):
    m = _map(tmp_path, text)
    with pytest.raises(UserInputError) as e:
        load_mapping(m)
    assert e.value.one_line().startswith(f"{m}") and message in e.value.one_line(), e.value.one_line()


def test_messages_are_read_by_the_chat_reader_and_the_map_overrides_fields(tmp_path):
    rec = {"meta": {"uid": "c9", "expected": "Oslo"},
           "conversation": [{"role": "user", "content": "Capital of Norway?"},
                            {"role": "assistant", "content": "<answer>Oslo</answer>"}]}
    path = write_jsonl(tmp_path, rec, name="c.jsonl")
    m = _map(tmp_path, '[trace]\nid = "$.meta.uid"\ngold = "$.meta.expected"\nmessages = "$.conversation"\n')
    (t,) = load_records(iter_records, path, mapping=m, agent="bot")
    assert (t["trace_id"], t["agent"], t["question"], t["final_answer"], t["gold_answers"]) == (
        "c9", "bot", "Capital of Norway?", "Oslo", ["Oslo"])
    assert [(s["kind"], s["source_ref"]["path"], s["source_ref"]["format"]) for s in t["steps"]] == [
        ("answer", "$.conversation[1].content", "mapped")]


def _explained_map(cli, fixture: Path, tmp_path: Path) -> Path:
    res = cli("convert", fixture, "--explain")
    assert res.code == 0, res
    lines = res.out.splitlines()
    start = next(i for i, ln in enumerate(lines) if "--map syntax" in ln) + 1
    return _map(tmp_path, "\n".join(lines[start:]) + "\n")


def _same_fields(trace: dict) -> dict:
    """What a map carries: the trace's fields and, per step, kind, text, query, tool and documents."""
    steps = [
        {k: s.get(k) for k in ("index", "kind", "text", "query", "tool")}
        | {"docs": [(d.get("title"), d.get("url"), d.get("text")) for d in s.get("documents") or []]}
        for s in trace["steps"]
    ]
    keep = ("trace_id", "agent", "question", "final_answer", "gold_answers", "dataset")
    return {k: trace[k] for k in keep} | {"correct": (trace["correct"] or {}).get("value"), "steps": steps}


@pytest.mark.parametrize(
    "fixture",
    [
        FIXTURES / "same.seekbench.jsonl",  # seekbench: [steps] over $.trace[*]
        FIXTURES / "parallel.openai.json",  # openai_chat, a JSON array of records: messages
        FIXTURES / "producers" / "openai_messages.json",  # one bare message list: messages = "$"
        FIXTURES / "producers" / "miroflow_task.json",  # messages one level down, a judge verdict
        # the chat shapes of issue 27 that one message list holds: messages = "$.<key>" (not tool_call_text.jsonl,
        # whose records differ in their keys: a map written from its first record names a question the next lacks)
        *(SHAPES / n for n in ("anthropic_blocks.json", "any_key.jsonl", "flat_calls.jsonl", "nested_gold.jsonl",
                               "string_calls.jsonl", "submit_tool.jsonl")),
    ],
    ids=lambda p: p.name,
)
def test_explain_prints_a_map_that_reads_the_file_as_detection_does(cli, tmp_path, fixture):
    m = _explained_map(cli, fixture, tmp_path)
    auto, mapped = read_traces(fixture).traces, read_traces(fixture, mapping=m).traces
    assert len(auto) == len(mapped) > 0
    assert [_same_fields(t) for t in mapped] == [_same_fields(t) for t in auto]
    assert {t["source"]["format"] for t in mapped} == {"mapped"}


def test_canonical_traces_round_trip_through_their_map(cli, tmp_path):
    out = tmp_path / "canonical.jsonl"
    assert cli("convert", FIXTURES / "same.openai.jsonl", "-o", out).code == 0
    m = _explained_map(cli, out, tmp_path)
    assert 'path = "$.steps[*]"' in m.read_text()
    assert [_same_fields(t) for t in read_traces(out, mapping=m).traces] == [
        _same_fields(t) for t in read_traces(out).traces]


@pytest.mark.parametrize(
    ("fixture", "why"),
    [
        (FIXTURES / "same.search_r1.jsonl", "# the steps are tags inside the text at $.output"),
        (FIXTURES / "trajectory.atif.json", "# each ATIF step holds a message, tool calls and observations"),
        (FIXTURES / "capitals.inspect.json", "# agent <- $.eval.model: not a path inside the record"),
        (SHAPES / "prompt_completion.jsonl", "# the messages are one conversation joined from $.prompt and"),
        (SHAPES / "responses_stored.json", "# the messages are one conversation joined from $[0].request and"),
        (SHAPES / "langfuse_trace.json", "# the steps are observations nested by parentObservationId"),
        (SHAPES / "langfuse_trace.json", "# agent <- joined: $.name, $.observations[2].model: not a path"),
    ],
)
def test_a_shape_a_map_cannot_say_is_a_toml_comment(cli, tmp_path, fixture, why):
    m = _explained_map(cli, fixture, tmp_path)
    text = m.read_text()
    assert any(ln.startswith(why) for ln in text.splitlines()), text
    with pytest.raises(UserInputError, match="no steps"):  # valid TOML, and honest: it cannot read the steps
        load_mapping(m)


def test_search_r1_explain_keeps_the_fields_a_map_can_name(cli, tmp_path):
    text = _explained_map(cli, FIXTURES / "same.search_r1.jsonl", tmp_path).read_text().splitlines()
    # hand-read from the fixture's first line: question, golden_answers, model and dataset are plain keys;
    # the answer is a span of $.output, which differs per record
    assert {'question = "$.question"', 'gold = "$.golden_answers"', 'agent = "$.model"',
            'dataset = "$.dataset"'} <= set(text)
    assert any(ln.startswith("# answer <- $.output[") and ln.endswith("different in each record") for ln in text)


def test_map_on_json_document_with_records_under_a_key(tmp_path):
    doc = {"items": [{"q": "A?", "s": [{"t": "x"}]}, {"q": "B?", "s": []}]}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    m = _map(tmp_path, '[trace]\npath = "$.items[*]"\nquestion = "$.q"\n[steps]\npath = "$.s[*]"\ntext = "$.t"\n')
    t1, t2 = read_traces(path, mapping=m, agent="a").traces
    assert (t1["trace_id"], t1["question"], t1["source"]["path"]) == ("doc.json:1.items[0]", "A?", "$.items[0]")
    assert [(s["kind"], s["text"], s["source_ref"]["path"]) for s in t1["steps"]] == [("other", "x", "$.items[0].s[0]")]
    assert t2["steps"] == []


def test_the_worked_example_in_the_docs_reads_as_the_docs_say(tmp_path):
    docs = (Path(__file__).resolve().parents[3] / "docs" / "formats.md").read_text(encoding="utf-8")
    section = docs.split("## Any other shape: a mapping file")[1].split("\n## ")[0]
    record = json.loads(section.split("```json\n")[1].split("```")[0])
    m = _map(tmp_path, section.split("```toml\n")[1].split("```")[0])
    path = write_jsonl(tmp_path, record, name="events.jsonl")
    (t,) = read_traces(path, mapping=m).traces
    # what the docs' paragraph after the example says
    assert (t["trace_id"], t["gold_answers"]) == ("r-101", ["the Avel", "Avel"])
    assert [(s["kind"], s.get("tool"), s.get("query")) for s in t["steps"]] == [
        ("reasoning", None, None), ("search", "web_search", "Dunmarsh river"), ("search_result", None, None),
        ("other", "send_email", None), ("other", None, None), ("answer", None, None)]
    assert [d["title"] for d in t["steps"][2]["documents"]] == ["Dunmarsh"]


def test_a_null_step_list_is_an_error_and_an_empty_one_a_trace_without_steps(tmp_path):
    m = _map(tmp_path, '[trace]\nquestion = "$.q"\n[steps]\npath = "$.s[*]"\n')
    path = write_jsonl(tmp_path, {"q": "A?", "s": None}, {"q": "B?", "s": []}, name="n.jsonl")
    err, t = load_records(iter_records, path, mapping=m, agent="a")
    assert isinstance(err, UserInputError) and err.path == "$.s[*]" and err.line == 1
    assert t["question"] == "B?" and t["steps"] == []


def test_search_tools_decide_which_mapped_calls_are_searches():
    (t, _) = read_traces(EVENTS, mapping=EVENTS_MAP, search_tools="send_email").traces
    # named as the only search tool, send_email is the search and web_search an action
    assert [(s["kind"], s.get("tool")) for s in t["steps"] if s.get("tool")] == [
        ("other", "web_search"), ("search", "send_email")]
    assert t["metadata"]["tool_kinds"] == {"send_email": "search", "web_search": "other"}
