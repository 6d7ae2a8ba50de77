"""Reading traces from the CLI: forced formats, detection on whole records, the input option group,
the import summary line and its warnings, and ``convert --explain``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _importer_support import FIXTURES, write_jsonl

from seekbench import UserInputError
from seekbench.cli._main import build_parser
from seekbench.traces import read_traces
from seekbench.traces.importers import detect_format

PRODUCERS = FIXTURES / "producers"
SEEKBENCH = FIXTURES / "same.seekbench.jsonl"


def one_error(res) -> str:
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert res.code == 2 and len(lines) == 1 and "Traceback" not in res.err, res
    return lines[0]


@pytest.mark.parametrize("name", ["openai_messages.json", "tau_bench.json", "agents_run_state.json"])
def test_forced_search_r1_never_reads_a_json_array_or_object_as_tagged_text(cli, tmp_path, name):
    # main read these as one junk trace of tagged text, exit 0
    res = cli("convert", PRODUCERS / name, "--format", "search_r1", "-o", tmp_path / "o.jsonl")
    assert "no tagged text" in one_error(res)
    res = cli("convert", PRODUCERS / name, "--format", "search_r1", "--skip-invalid", "-o", tmp_path / "o.jsonl")
    assert res.code == 2 and "--format search_r1 found nothing of its format" in res.err
    assert not (tmp_path / "o.jsonl").exists()


def test_forced_search_r1_on_records_without_tags_exits_2(cli, tmp_path):
    path = write_jsonl(tmp_path, {"id": "a", "text": "plain words"}, {"id": "b", "text": "more words"}, name="x.jsonl")
    res = cli("convert", path, "--format", "search_r1", "-o", tmp_path / "o.jsonl")
    assert "--format search_r1 found nothing of its format here" in one_error(res)


def test_forced_chat_format_on_a_transcript_exits_2(cli, tmp_path):
    res = cli("convert", PRODUCERS / "search_r1_case.txt", "--format", "openai_chat", "-o", tmp_path / "o.jsonl")
    assert "malformed JSON" in one_error(res)


@pytest.mark.parametrize(("record", "fmt"), [
    ({"question": "x" * (10 << 20), "output": "<search>q</search><answer>a</answer>"}, "search_r1"),
    ({"question": "x" * (10 << 20), "messages": [{"role": "user", "content": "q"}], "agent": "a"}, "openai_chat"),
])
def test_detection_reads_a_10_mb_first_record_whole(tmp_path, record, fmt):
    # issue 13: main looked at the first 64 KiB only and could not tell the format
    path = write_jsonl(tmp_path, record, {**record, "question": "small", "id": "second"}, name="big.jsonl")
    assert detect_format(path) == fmt
    first, second = read_traces(path).traces
    assert len(first["question"]) == 10 << 20 and second["question"] == "small"


def test_skip_invalid_detects_from_the_first_valid_record(tmp_path):
    # issue 13: one bad first line lost every valid record ("cannot tell the trace format")
    lines = SEEKBENCH.read_text().splitlines()
    path = tmp_path / "bad_first.jsonl"
    path.write_text("{oops\n" + "\n".join(lines) + "\n")
    assert detect_format(path, skip_invalid=True) == "seekbench"
    res = read_traces(path, skip_invalid=True)
    assert len(res.traces) == len(lines) and res.n_skipped == 1 and res.skipped[0].line == 1
    with pytest.raises(Exception, match="cannot tell the trace format"):
        detect_format(path)  # without --skip-invalid the bad first line still decides


def test_skip_invalid_with_no_valid_record_names_the_line(tmp_path):
    # Found by mypy: the fallback (None, line) was reversed with the found pair, so the error lost its line.
    path = tmp_path / "all_bad.jsonl"
    path.write_text("{oops\n{worse\n")
    with pytest.raises(UserInputError, match=r"all_bad\.jsonl:1: cannot tell the trace format"):
        detect_format(path, skip_invalid=True)


def test_every_trace_reading_command_has_the_one_input_group():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("metrics", "report", "convert", "annotate", "agree", "judge-answers", "evidence-metrics", "coverage"):
        group = next(g for g in sub.choices[name]._action_groups if g.title == "reading trace files")
        flags = {s for a in group._group_actions for s in a.option_strings}
        assert flags == {"--format", "--skip-invalid", "--agent", "--question-field", "--answer-field", "--field",
                         "--tags", "--search-tools", "--answer-tool", "--map", "--max-record-bytes", "--max-member-bytes",
                         "--max-row-group-bytes"}, name


def test_field_options_map_an_unusual_record(cli, tmp_path):
    rec = {"uid": "u1", "ask": {"text": "Where is Brell?"}, "target": ["Lowmark"],
           "gen": "<q>Brell location</q><docs>Doc 1(Title: Brell) Brell is in Lowmark.</docs><answer>Lowmark</answer>"}
    path = write_jsonl(tmp_path, rec, name="odd.jsonl")
    out = tmp_path / "o.jsonl"
    res = cli("convert", path, "--format", "search_r1", "--field", "gen", "--question-field", "ask.text",
              "--answer-field", "target", "--tags", "search=q,search_result=docs", "--agent", "odd", "-o", out)
    assert res.code == 0, res
    (t,) = read_traces(out).traces
    assert (t["agent"], t["question"], t["gold_answers"], t["final_answer"]) == (
        "odd", "Where is Brell?", ["Lowmark"], "Lowmark")
    assert [s["kind"] for s in t["steps"]] == ["search", "search_result", "answer"]
    assert t["steps"][0]["query"] == "Brell location" and t["steps"][1]["documents"][0]["title"] == "Brell"
    res = cli("convert", path, "--format", "search_r1", "--field", "nope", "-o", out)
    assert "no field 'nope' (from --field)" in one_error(res)
    res = cli("convert", path, "--tags", "search", "-o", out)
    assert "--tags 'search': write KIND=TAG" in one_error(res)


def test_summary_warns_when_every_question_is_empty(cli, tmp_path):
    path = write_jsonl(tmp_path, {"id": "a", "output": "<search>q</search><information>r</information><answer>x"
                                                       "</answer>"}, name="noq.jsonl")
    res = cli("convert", path, "-o", tmp_path / "o.jsonl")
    assert res.code == 0
    assert ("seekbench: note: warning: every question is empty; name the field holding it with --question-field "
            "FIELD") in res.err.splitlines()
    assert ("seekbench: note: imported 1 trace: 3 steps (search 1, search_result 1, answer 1), 1 tool call, "
            "0 action calls, 1 document; 1 with an empty question, 0 without an answer, 0 without a tool call"
            ) in res.err.splitlines()


def test_warning_when_tool_tags_give_no_tool_call(tmp_path):
    path = write_jsonl(tmp_path, {"id": "a", "question": "q", "output": "<search>x</search><answer>y</answer>"},
                       name="t.jsonl")
    res = read_traces(path, tags={"search": "query"})
    assert res.traces[0]["steps"][0]["kind"] == "reasoning"
    assert res.warnings == [f"{path}:1: trace a: the text holds tool tags but no tool call was found; set --tags "
                            "(or --field if $.output is not the model's text)"]


def test_options_a_format_does_not_take_are_noted(cli, tmp_path):
    res = cli("convert", SEEKBENCH, "--tags", "search=q", "-o", tmp_path / "o.jsonl")
    assert res.code == 0
    assert f"seekbench: note: {SEEKBENCH} is seekbench, which does not take --tags; ignored for this file" \
        in res.err.splitlines()


def test_explain_shows_where_each_part_came_from(cli):
    res = cli("convert", PRODUCERS / "r1_searcher_eval.jsonl", "--explain")
    assert res.code == 0, res
    lines = res.out.splitlines()
    text = json.loads((PRODUCERS / "r1_searcher_eval.jsonl").read_text().splitlines()[0])["gen_text_store"]
    answer = (text.index("<answer>"), text.index("</answer>") + len("</answer>"))
    query = (text.index("<|begin_of_query|>"), text.index("<|end_of_query|>") + len("<|end_of_query|>"))
    assert lines[:8] == [
        f"{PRODUCERS / 'r1_searcher_eval.jsonl'}: format search_r1 (detected)",
        "first record (line 1): trace r1_searcher_eval.jsonl:1",
        "  agent         <- the file name (no agent field): 'r1_searcher_eval'",
        "  question      <- $.question: 'When was the Halden observatory built?'",
        f"  final_answer  <- $.gen_text_store[{answer[0]}:{answer[1]}]: '1884'",
        "  gold_answers  <- $.answer: \"['1884']\"",
        "  correct       <- $.gpt4o_output: 'True (judge)'",
        "  steps (5):",
    ]
    assert lines[9] == (f"      1 search        <- $.gen_text_store[{query[0]}:{query[1]}] tool 'search': "
                        "'Halden observatory built'")
    assert lines[10].endswith("2 documents: 'Halden observatory', 'Mount Rell'")


def test_explain_names_the_prompt_span_of_the_question(cli):
    res = cli("convert", PRODUCERS / "roll_rollout.jsonl", "--explain")
    line = next(ln for ln in res.out.splitlines() if ln.startswith("  question"))
    text = json.loads((PRODUCERS / "roll_rollout.jsonl").read_text())["prompt"]
    span = line.split("<- $.prompt[")[1].split("]")[0]
    start, end = map(int, span.split(":"))
    assert text[start:end] == "Which bird is the national bird of Veldia: the grey heron or the rock dove?"


def test_convert_without_output_or_explain_is_a_user_error(cli):
    assert "convert needs -o OUT" in one_error(cli("convert", PRODUCERS / "tau_bench.json"))


def test_labels_free_metrics_on_the_shared_data_show_the_summary(cli, shared_data: Path):
    res = cli("metrics", shared_data, "--json")
    assert res.code == 0
    # 190 traces, 188 answer steps: two traces (33 and 43) have no answer step, unanswered for the metrics.
    assert ("seekbench: note: imported 190 traces: 1837 steps (reasoning 630, search 529, search_result 490, "
            "answer 188), 529 tool calls, 0 action calls, 1290 documents; 0 with an empty question, "
            "2 without an answer, 0 without a tool call") in res.err.splitlines()


def test_chat_log_with_calls_in_the_text_reads_them_and_warns_on_tags_it_cannot_read(tmp_path):
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>'},
            {"role": "user", "content": "<tool_response>r</tool_response>"},
            {"role": "assistant", "content": "done"}]
    path = write_jsonl(tmp_path, {"id": "c", "agent": "a", "messages": msgs}, name="c.jsonl")
    res = read_traces(path)
    assert res.summary.tool_calls == 1 and res.warnings == []  # the <tool_call> text is read (issue 27)
    mcp = [{"role": "user", "content": "q"},
           {"role": "assistant", "content": "<use_mcp_tool><tool_name>search</tool_name></use_mcp_tool>"},
           {"role": "assistant", "content": "done"}]
    path = write_jsonl(tmp_path, {"id": "m", "agent": "a", "messages": mcp}, name="m.jsonl")
    res = read_traces(path)
    assert res.summary.tool_calls == 0
    assert res.warnings == [f"{path}:1: trace m: assistant messages hold tool-call tags seekbench does not read "
                            "(<use_mcp_tool>, <function=...>); map the calls with a mapping file or convert the "
                            "text with --format search_r1 --field FIELD --tags tool_call=TAG"]


def test_importer_warnings_show_three_and_a_count(cli, tmp_path):
    path = write_jsonl(tmp_path, *({"id": f"t{i}", "question": "q", "output": "<search>cut"} for i in range(5)),
                       name="cut.jsonl")
    res = cli("convert", path, "-o", tmp_path / "o.jsonl")
    assert res.code == 0
    warned = [ln for ln in res.err.splitlines() if ln.startswith("seekbench: note: warning:")]
    assert len(warned) == 4 and all("unclosed <search>" in ln for ln in warned[:3])
    assert warned[3] == "seekbench: note: warning: ... and 2 more like these"
