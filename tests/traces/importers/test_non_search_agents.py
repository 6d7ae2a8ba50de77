"""Agents whose tools mostly act: SWE-agent trajectories and tau2-bench simulations (our own fixtures in
``tests/fixtures/importers/shapes/``, invented content in the shapes SWE-agent and tau2-bench write).

Expected values are read off the fixtures by hand: the task is the question (never the demonstration
before it), each command or tool call is one step in source order, a retrieving tool a ``search``
and every other tool an ``other`` step naming it, and the answer is what the agent delivered.
"""

from __future__ import annotations

import json

import pytest
from _importer_support import FIXTURES

from seekbench import UserInputError
from seekbench.traces import read_traces
from seekbench.traces.importers import detect_format

SHAPES = FIXTURES / "shapes"
ISSUE = "Ruler.measure rounds 2.5 cm down to 2\nCalling Ruler().measure(2.5) returns 2; it should return 3."
PATCH = ("diff --git a/ruler/core.py b/ruler/core.py\n--- a/ruler/core.py\n+++ b/ruler/core.py\n@@ -10 +10 @@\n"
         "-        return int(cm)\n+        return round_half_up(cm)\n")


def _one(path, **options) -> dict:
    traces = read_traces(path, **options).traces
    assert len(traces) == 1
    return traces[0]


def _steps(trace: dict) -> list[tuple]:
    return [(s["kind"], s.get("tool"), s.get("query")) for s in trace["steps"]]


def test_swe_agent_trajectory_reads_the_task_the_commands_and_the_patch():
    path = SHAPES / "swe_agent.traj"
    assert detect_format(path) == "swe_agent"
    tr = _one(path)
    assert tr["trace_id"] == "acme__ruler-17" and tr["agent"] == "SWE-agent/gpt-4o-mini"
    assert tr["question"] == ISSUE  # replay_config.problem_statement.text, not the demonstration
    assert tr["final_answer"] == PATCH  # info.submission, not the "submit" command
    # Five trajectory entries: thought, command, observation each (the fourth has an empty thought);
    # search_dir and open retrieve (searches), edit, python and submit act (other steps naming the tool).
    assert _steps(tr) == [
        ("reasoning", None, None), ("search", "search_dir", "def measure"), ("search_result", None, None),
        ("reasoning", None, None), ("search", "open", "ruler/core.py"), ("search_result", None, None),
        ("reasoning", None, None), ("other", "edit", None), ("other", None, None),
        ("other", "python", None), ("other", None, None),
        ("reasoning", None, None), ("other", "submit", None), ("other", None, None),
        ("answer", None, None),
    ]
    assert [s["depends_on"] for s in tr["steps"]][:3] == [[], [0], [1]]
    assert tr["steps"][2]["documents"][0]["text"].startswith('Found 1 matches for "def measure"')
    assert tr["metadata"]["exit_status"] == "submitted"
    assert tr["metadata"]["tool_kinds"] == {
        "edit": "other", "open": "search", "python": "other", "search_dir": "search", "submit": "other"}


def test_swe_agent_without_replay_config_takes_the_issue_after_the_demonstration():
    # An older trajectory: no replay_config, the demonstration an is_demo user message; the issue is the
    # text between ISSUE: and INSTRUCTIONS: of the first other user message. No submission: no answer.
    tr = _one(SHAPES / "swe_agent_exit_cost.traj")
    assert tr["question"] == ISSUE and "DEMONSTRATION" not in tr["question"]
    assert tr["final_answer"] is None and "answer" not in [s["kind"] for s in tr["steps"]]
    assert tr["agent"] == "swe_agent_exit_cost" and tr["metadata"]["exit_status"] == "exit_cost"
    read = read_traces(SHAPES / "swe_agent_exit_cost.traj")
    assert "0 with an empty question, 1 without an answer, 0 without a tool call" in read.summary.line()


def test_swe_agent_search_tools_option_decides_which_commands_search():
    tr = _one(SHAPES / "swe_agent.traj", search_tools="search_dir")
    assert [s.get("tool") for s in tr["steps"] if s["kind"] == "search"] == ["search_dir"]
    assert ("other", "open", None) in _steps(tr)


def test_swe_agent_without_a_task_is_a_user_error(tmp_path):
    doc = json.loads((SHAPES / "swe_agent_exit_cost.traj").read_text())
    doc["history"] = [m for m in doc["history"] if m.get("is_demo") or m["role"] != "user"]
    path = tmp_path / "no_task.traj"
    path.write_text(json.dumps(doc))
    read = read_traces(path, skip_invalid=True)
    assert read.traces == [] and len(read.skipped) == 1
    with pytest.raises(UserInputError, match="without its task.*--question-field"):
        read_traces(path)


def test_cli_convert_of_a_traj_file(cli, tmp_path):
    res = cli("convert", SHAPES / "swe_agent.traj", "-o", tmp_path / "out.jsonl")
    assert res.code == 0, res
    # Hand count: 15 steps (reasoning 4, search 2, search_result 2, answer 1, other 6); action calls:
    # edit, python, submit.
    assert ("imported 1 trace: 15 steps (reasoning 4, search 2, search_result 2, answer 1, other 6), 2 tool calls, "
            "3 action calls, 2 documents; 0 with an empty question, 0 without an answer, "
            "0 without a tool call") in res.err


def test_tau2_simulations_are_one_trace_each_with_actions_as_other_steps():
    path = SHAPES / "tau_sim.json"
    assert detect_format(path) == "tau2"
    a1, a2 = read_traces(path).traces
    assert (a1["trace_id"], a1["agent"], a1["dataset"], a1["question_id"]) == (
        "sim-a1", "helper-model-1", "airline", "airline::7")
    assert a1["question"] == "I need to cancel my trip to Orvik, reservation K7Q2."
    assert a1["final_answer"] == "Reservation K7Q2 is cancelled; the refund takes 5 days."
    assert a1["correct"]["value"] is True and a2["correct"]["value"] is False
    # Greeting, lookup and its result, a question to the user, the user's yes, the cancel and its result,
    # the closing message (the answer: the run ended by user_stop), the user's thanks.
    assert [(s["kind"], s.get("tool"), s.get("original_kind")) for s in a1["steps"]] == [
        ("reasoning", None, "assistant"), ("other", "get_reservation_details", "tool_call"),
        ("other", None, "observation"), ("reasoning", None, "assistant"), ("other", None, "user"),
        ("other", "cancel_reservation", "tool_call"), ("other", None, "observation"),
        ("answer", None, "assistant"), ("other", None, "user"),
    ]
    assert a1["steps"][6]["depends_on"] == [5]
    assert a1["metadata"]["reason_for_call"] == "You want to cancel reservation K7Q2."
    # sim-a2 ran out of steps (max_steps): no answer; its flight search is a search with two documents.
    assert a2["final_answer"] is None
    assert [s["kind"] for s in a2["steps"]] == ["reasoning", "search", "search_result", "reasoning", "other"]
    assert [d["text"] for d in a2["steps"][2]["documents"]] == [
        '{"flight_number": "HT1", "price": 120}', '{"flight_number": "HT9", "price": 95}']


def test_tau_bench_tools_that_act_are_other_steps():
    # The tau-bench producer fixture (read as a chat log): think, calculate, cancel_reservation and
    # book_reservation act; search_direct_flight retrieves.
    tr = _one(FIXTURES / "producers" / "tau_bench.json")
    calls = [(s["kind"], s["tool"]) for s in tr["steps"] if s.get("tool")]
    assert calls == [("other", "think"), ("search", "search_direct_flight"), ("other", "calculate"),
                     ("other", "cancel_reservation"), ("other", "book_reservation")]
    assert tr["steps"][3]["documents"][0]["text"] == '{"flight_number": "HT1", "price": 120}'


KETTLE = "Kettle.boil() never stops at 100 degrees\nThe loop in kettle/heat.py checks > 100 instead of >= 100."


def test_mini_swe_agent_reads_the_task_from_its_template_and_bash_commands_as_actions():
    path = SHAPES / "mini_swe_agent.traj.json"
    assert detect_format(path) == "mini_swe_agent"
    tr = _one(path)
    assert (tr["trace_id"], tr["agent"]) == ("acme__kettle-4", "mini-swe-agent/helper-model-2")
    # The task is where {{task}} sits in info.config.agent.instance_template, not the instructions around it.
    assert tr["question"] == KETTLE
    assert tr["final_answer"].startswith("diff --git a/kettle/heat.py")
    # Three turns: thought, bash command (an action), its output; then the submission as the answer.
    assert [(s["kind"], s.get("tool")) for s in tr["steps"]] == [
        ("reasoning", None), ("other", "bash"), ("other", None),
        ("reasoning", None), ("other", "bash"), ("other", None),
        ("reasoning", None), ("other", "bash"), ("answer", None),
    ]
    assert tr["steps"][1]["text"] == "grep -n 'while' kettle/heat.py" and tr["steps"][2]["depends_on"] == [1]


def test_mini_swe_agent_text_based_run_without_template_or_submission(tmp_path):
    # The v1 text-based shape: commands in fenced blocks, outputs as user messages, the default
    # "Please solve this issue: {{task}}" message with no template saved; the run hit its step limit.
    doc = {"trajectory_format": "mini-swe-agent-1", "info": {"exit_status": "LimitsExceeded", "submission": ""},
           "messages": [
               {"role": "system", "content": "You can run bash."},
               {"role": "user", "content": "Please solve this issue: Fix the kettle.\n\nYou can run bash commands."},
               {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\nls kettle\n```"},
               {"role": "user", "content": "<returncode>0</returncode>\n<output>\nheat.py\n</output>"},
               {"role": "exit", "content": "LimitsExceeded",
                "extra": {"exit_status": "LimitsExceeded", "submission": ""}},
           ]}
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(doc))
    tr = _one(path)
    assert tr["question"] == "Fix the kettle." and tr["final_answer"] is None
    assert [(s["kind"], s.get("tool"), s.get("text")) for s in tr["steps"]] == [
        ("reasoning", None, "THOUGHT: look.\n\n```bash\nls kettle\n```"), ("other", "bash", "ls kettle"),
        ("other", None, "<returncode>0</returncode>\n<output>\nheat.py\n</output>")]
    assert tr["metadata"]["exit_status"] == "LimitsExceeded"


def test_mini_swe_agent_without_a_marked_task_warns(tmp_path):
    doc = {"trajectory_format": "mini-swe-agent-1.1", "info": {},
           "messages": [{"role": "user", "content": "Fix the kettle, then run the tests."}]}
    path = tmp_path / "bare.traj.json"
    path.write_text(json.dumps(doc))
    read = read_traces(path)
    assert read.traces[0]["question"] == "Fix the kettle, then run the tests."
    assert any("--question-field" in w for w in read.warnings)


def test_a_chat_log_under_a_trajectory_key_is_not_a_swe_agent_file(tmp_path):
    # Messages (role / content) under "trajectory" beside "info": not SWE-agent steps, so not this format.
    doc = {"trajectory": [{"role": "user", "content": "What is the capital of Orvia?"},
                          {"role": "assistant", "content": "Pell"}], "info": {"model": "m"}}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc))
    try:  # another format (the chat importer, reading messages under any key), or none: never this one
        assert detect_format(path) != "swe_agent"
    except UserInputError as e:
        assert "cannot tell the trace format" in str(e)


def test_swe_agent_history_alone_reads_the_same_steps(tmp_path):
    # A demonstration file keeps only "history": the same task and commands, read from the messages
    # (each assistant message's thought and action, the next message its output); no submission.
    doc = json.loads((SHAPES / "swe_agent.traj").read_text())
    path = tmp_path / "demo.traj"
    path.write_text(json.dumps({"history": doc["history"]}))
    assert detect_format(path) == "swe_agent"
    full, alone = _one(SHAPES / "swe_agent.traj"), _one(path)
    assert alone["question"] == ISSUE and alone["final_answer"] is None
    assert _steps(alone) == _steps(full)[:-1]  # all but the answer (the submission is in info)
    assert alone["steps"][1]["source_ref"]["path"] == "$.history[3].action"
