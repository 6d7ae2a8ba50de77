"""ATIF importer: trajectory mapping, observation matching, file layouts and user errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _importer_support import FIXTURES, load_records

from seekbench._errors import UserInputError
from seekbench.traces.importers._atif import iter_records



def load(path, **options) -> list:
    return load_records(iter_records, path, **options)


def trajectory(*steps: dict, **fields) -> dict:
    return {"schema_version": "ATIF-v1.4", "session_id": "s", "agent": {"name": "ag", "version": "1"},
            **fields, "steps": [{"step_id": 1, "source": "user", "message": "Q?"}, *steps]}


def agent(step_id: int, message: str = "", **fields) -> dict:
    return {"step_id": step_id, "source": "agent", "message": message, **fields}


def write_jsonl(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "atif.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def one(tmp_path: Path, record: dict, **options) -> dict:
    (trace,) = load(write_jsonl(tmp_path, record), **options)
    assert isinstance(trace, dict), trace
    return trace


def kinds(trace: dict) -> list[str]:
    return [s["kind"] for s in trace["steps"]]


def test_pretty_printed_trajectory():
    path = FIXTURES / "trajectory.atif.json"
    (t,) = load(path)
    assert (t["trace_id"], t["agent"]) == ("sess-quill", "harborish/toy-model-7b")
    assert t["question"] == "Who designed the Quill Bridge?"  # from a content-part message
    assert (t["gold_answers"], t["dataset"]) == (["Mira Tal"], "bridges")
    # run_code retrieves nothing (spec section 1): an action, its output an other step too
    assert kinds(t) == ["reasoning", "reasoning", "search", "search_result", "search", "search_result",
                        "other", "other", "reasoning", "answer"]
    assert t["metadata"]["tool_kinds"] == {"run_code": "other", "visit": "search", "web_search": "search"}
    web, visit, code = (t["steps"][i] for i in (2, 4, 6))
    assert (web["tool"], web["query"]) == ("web_search", "Quill Bridge architect")
    assert (visit["tool"], visit["url"], visit["query"]) == ("visit", "https://example.org/quill", None)
    assert code["tool"] == "run_code" and json.loads(code["text"]) == {"code": "print(1958 - 1900)"}
    # results answered out of order still follow their own calls
    assert t["steps"][3]["documents"][0]["title"] == "Quill Bridge" and t["steps"][3]["depends_on"] == [2]
    assert t["steps"][5]["source_ref"]["path"] == "$.steps[2].observation.results[0]"
    assert t["steps"][7]["text"] == "58"  # no source_call_id, one call waiting in its step: matched
    assert t["final_answer"] == "Mira Tal designed it."
    meta = t["metadata"]
    assert meta["final_metrics"]["total_steps"] == 5 and meta["notes"] == "invented for tests"
    assert meta["extra"] == {"run": 3} and meta["system"] == ["Use the tools to answer."]
    assert meta["schema_version"] == "ATIF-v1.5"
    for s in t["steps"]:
        assert s["source_ref"]["format"] == "atif" and s["source_ref"]["line"] == 1
        assert s["source_ref"]["record_id"] == "sess-quill" and s["source_ref"]["path"].startswith("$.steps[")


def test_jsonl_fixture():
    traces = load(FIXTURES / "same.atif.jsonl")
    assert [t["trace_id"] for t in traces] == ["velmora", "orin7", "sum"]
    assert [t["source"]["line"] for t in traces] == [1, 2, 3]
    assert traces[1]["steps"][4]["query"] == "Lumeq Optics founder"


def test_json_list_of_trajectories(tmp_path):
    path = tmp_path / "many.json"
    path.write_text(json.dumps([trajectory(session_id="a"), trajectory(session_id="b")], indent=1))
    a, b = load(path)
    assert (a["trace_id"], b["trace_id"], b["source"]["path"]) == ("a", "b", "$[1]")


def test_unmatched_observation_without_id_is_other(tmp_path):
    calls = [{"tool_call_id": "x", "function_name": "search", "arguments": {}},
             {"tool_call_id": "y", "function_name": "search", "arguments": {}}]
    t = one(tmp_path, trajectory(agent(2, tool_calls=calls, observation={"results": [{"content": "?"}]})))
    assert kinds(t) == ["search", "search", "other"] and t["steps"][2]["original_kind"] == "observation"


def test_non_final_message_is_reasoning_and_last_agent_with_calls_means_no_answer(tmp_path):
    t = one(tmp_path, trajectory(agent(2, "thinking aloud"),
                                 agent(3, tool_calls=[{"tool_call_id": "k", "function_name": "search",
                                                       "arguments": {"q": "z"}}])))
    assert kinds(t) == ["reasoning", "search"] and t["final_answer"] is None


def test_question_and_agent_options(tmp_path):
    rec = trajectory(agent(2, "<answer>A</answer>"), extra={"question": "From extra?"})
    del rec["agent"]
    t = one(tmp_path, rec, agent="opt")
    assert (t["agent"], t["question"], t["metadata"]["prompt"], t["final_answer"]) == (
        "opt", "From extra?", "Q?", "A")
    t = one(tmp_path, trajectory(agent(2, "x"), extra={"model": {"free": "form"}, "id": 3}), question="Opt?")
    assert t["question"] == "Opt?" and t["metadata"]["extra"] == {"model": {"free": "form"}, "id": 3}


@pytest.mark.parametrize(("record", "path"), [
    ({**trajectory(), "steps": {"a": 1}}, "$.steps"),
    (trajectory({"step_id": 2, "source": 1, "message": ""}), "$.steps[1].source"),
    (trajectory({"step_id": 2, "source": "agent", "message": 5}), "$.steps[1].message"),
    (trajectory(agent(2, tool_calls=[{"tool_call_id": "k", "function_name": "s", "arguments": "{bad"}])),
     "$.steps[1].tool_calls[0].arguments"),
    (trajectory(agent(2, tool_calls=[{"tool_call_id": "k", "function_name": None, "arguments": {}}])),
     "$.steps[1].tool_calls[0].function_name"),
    (trajectory(agent(2, tool_calls=[{"tool_call_id": "k", "function_name": "s", "arguments": {}}],
                      observation={"results": [{"source_call_id": "j", "content": "r"}]})),
     "$.steps[1].observation.results[0].source_call_id"),
    (trajectory(agent(2, observation={"results": "r"})), "$.steps[1].observation.results"),
    (trajectory(agent(2, observation={"results": [{"content": 7}]})), "$.steps[1].observation.results[0].content"),
    (trajectory(agent(2, reasoning_content=1)), "$.steps[1].reasoning_content"),
    ({**trajectory(), "agent": {"version": "1"}}, "$.agent.name"),
    ({**trajectory(), "agent": {"name": "a", "model_name": 4}}, "$.agent.model_name"),
    ({**trajectory(), "schema_version": "2.0"}, "$.schema_version"),
    ({**trajectory(), "session_id": 9}, "$.session_id"),
    ({**trajectory(), "extra": {"gold_answers": [1.5, None]}}, "$.extra.gold_answers[1]"),
])
def test_errors_name_file_line_trace_and_path(tmp_path, record, path):
    file = write_jsonl(tmp_path, trajectory(session_id="fine"), record)
    good, err = load(file)
    assert isinstance(good, dict) and isinstance(err, UserInputError)
    msg = str(err)
    assert "\n" not in msg and f"{file}:2" in msg and f"at {path}: " in msg
    if path == "$.session_id":  # the id itself is unusable: no trace id to name
        assert err.trace_id is None and "trace " not in msg
    else:
        assert "trace s," in msg and err.trace_id == "s"


def test_mixed_fixture_keeps_good_records():
    items = load(FIXTURES / "mixed.atif.jsonl")
    assert [x["trace_id"] if isinstance(x, dict) else (x.line, x.trace_id) for x in items] == [
        "s1", (2, "s2"), (3, "s3"), "s4"]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["source", "message", "tool_calls", "tool_call_id", "function_name",
                                          "arguments", "observation", "results", "source_call_id", "content",
                                          "reasoning_content", "query", "type", "text"]),
                         inner, max_size=5), max_leaves=20)
_STEP = st.fixed_dictionaries({"source": st.sampled_from(["user", "agent", "system", "tool"])},
                              optional={"message": _JSON, "tool_calls": _JSON, "observation": _JSON,
                                        "reasoning_content": _JSON})


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.one_of(_STEP, _JSON), max_size=6))
def test_property_any_steps_give_a_trace_or_a_user_error(steps):
    with tempfile.TemporaryDirectory() as d:
        items = load(write_jsonl(Path(d), {**trajectory(), "steps": steps}))
    assert len(items) == 1


# --- Non-conforming ATIF (a bare version number, agent.model, flat calls, one-result observations) ---
# Expected values derived by hand from tests/fixtures/importers/shapes/atif_bare_version.json.

BARE = FIXTURES / "shapes" / "atif_bare_version.json"


def test_bare_version_trajectory_reads_with_a_note_naming_each_deviation():
    (rec,) = list(iter_records(BARE))
    trace = rec.trace
    assert trace["agent"] == "harbor-bot/orca-mini-2"  # agent.model read as agent.model_name
    assert trace["question"] == "Which river flows through the town of Kellbrook?"
    assert [s["kind"] for s in trace["steps"]] == [
        "reasoning", "search", "search_result", "other", "reasoning", "other", "answer"]
    search, result = trace["steps"][1], trace["steps"][2]
    assert search["query"] == "Kellbrook river" and search["tool"] == "web_search"
    assert [d["title"] for d in result["documents"]] == ["Kellbrook", "Arden (river)"]
    assert result["depends_on"] == [1]
    # the result of tc_b comes before its call in the file: kept in source order, not matched
    assert trace["steps"][3]["text"] == "written" and trace["steps"][3]["original_kind"] == "observation"
    assert trace["steps"][5]["tool"] == "Write"
    assert trace["final_answer"] == "The Arden." and trace["gold_answers"] == []
    (note,) = rec.notes
    for words in ("'1.4' has no 'ATIF-v' prefix", "agent.model in place of agent.model_name",
                  "{id, name, arguments}", "one result's content in place of observation.results"):
        assert words in note
    assert rec.sources["agent"] == "joined: $.agent.name, $.agent.model"


def test_bare_version_is_detected_but_other_versions_are_not(tmp_path):
    from seekbench.traces.importers import detect_format

    assert detect_format(BARE) == "atif"
    doc = json.loads(BARE.read_text(encoding="utf-8"))
    for version in ("2.0", "banana"):
        path = tmp_path / "x.json"
        path.write_text(json.dumps({**doc, "schema_version": version}), encoding="utf-8")
        with pytest.raises(UserInputError):
            detect_format(path)
        (err,) = load(path)
        assert isinstance(err, UserInputError) and "not an ATIF version" in str(err)


def test_conforming_trajectory_has_no_note(tmp_path):
    (rec,) = list(iter_records(write_jsonl(tmp_path, trajectory(agent(2, "A.")))))
    assert rec.notes == [] and rec.trace["final_answer"] == "A."


def test_real_claude_code_trajectory_claiming_atif_1_4_imports(real_format):
    (rec,) = list(iter_records(real_format("openagents_claudecode_atif14_trajectory.json")))
    trace = rec.trace
    assert trace["question"].startswith("Write a regex expression")
    assert {s["tool"] for s in trace["steps"] if s.get("tool")} == {"Write", "Bash"}
    assert not any(s["kind"] == "search" for s in trace["steps"])
    assert "has no 'ATIF-v' prefix" in rec.notes[0]
