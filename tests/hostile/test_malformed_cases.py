"""A corpus of named malformed inputs, each with the exact one-line message ``seekbench validate`` gives.

Every case is run through the CLI (``seekbench validate FILE``, in a temporary
directory so the file name in the message is just the name): a bad input exits
2 with exactly one line on stderr, ``seekbench: error: <expected>``, and
nothing on stdout; a tolerated quirk (BOM, CRLF, duplicate JSON keys) exits 0
with the summary line. ``{formats}`` in a message stands for the importers
available here. A case found to fail goes in with the message the fix should
give and ``marks=(pytest.mark.xfail(strict=True, reason=...),)`` naming the
bug, until it is fixed.

The small inputs are also kept as files in ``tests/hostile/cases/`` (written
by ``cases/make_cases.py``, checked here to be the same bytes); the huge ones
(10 MB strings, 10,000 steps, 100,000 levels of nesting) are only built here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hostile_support import FORMATS, run_cli
from malformed_builders import (
    DELETE,
    atif,
    canon,
    canon_line,
    deep_array,
    deep_field,
    huge_text,
    jsonl,
    many_steps,
    openai,
    search_r1,
    seekbench,
    setitem,
    step_line,
    truncated,
)

from seekbench import __version__

CASES_DIR = Path(__file__).resolve().parent / "cases"
#: Inputs up to this size are kept as files in cases/.
SMALL = 64 * 1024



@dataclass(frozen=True)
class Case:
    """One malformed input: how to build it, extra CLI arguments, and what ``validate`` says."""

    name: str
    build: Callable[[], bytes | None]
    args: tuple[str, ...]
    expected: str
    code: int = 2
    marks: tuple = field(default=())


CASES: list[Case] = [
    Case("truncated_json", lambda: truncated(canon_line(), 120), ("--format", "canonical"),
         "truncated_json.jsonl:1: malformed JSON (column 121): Expecting property name enclosed in double quotes; "
         "fix or remove this line, or pass --skip-invalid"),
    Case("truncated_last_record", lambda: canon_line() + truncated(jsonl(canon("t2")), 200), (),
         "truncated_last_record.jsonl:2: malformed JSON (column 198): Unterminated string starting at; fix or "
         "remove this line, or pass --skip-invalid"),
    Case("trailing_comma",
         lambda: b'{"schema_version": "1.0", "trace_id": "t1", "agent": "a", "question": "q", "steps": [],}\n',
         ("--format", "canonical"),
         "trailing_comma.jsonl:1: malformed JSON (column 88): Expecting property name enclosed in double quotes; "
         "fix or remove this line, or pass --skip-invalid"),
    Case("single_quotes", lambda: b"{'schema_version': '1.0', 'trace_id': 't1'}\n", ("--format", "canonical"),
         "single_quotes.jsonl:1: malformed JSON (column 2): Expecting property name enclosed in double quotes; fix "
         "or remove this line, or pass --skip-invalid"),
    Case("nan_score", lambda: canon_line().replace(b'"score": 0.5', b'"score": NaN'), ("--format", "canonical"),
         "nan_score.jsonl:1: malformed JSON: NaN is not valid JSON; fix or remove this line, or pass --skip-invalid"),
    Case("infinity_score",
         lambda: canon_line().replace(b'"score": 0.5', b'"score": Infinity'),
         ("--format", "canonical"),
         "infinity_score.jsonl:1: malformed JSON: Infinity is not valid JSON; fix or remove this line, or pass "
         "--skip-invalid"),
    Case("negative_infinity_score",
         lambda: canon_line().replace(b'"score": 0.5', b'"score": -Infinity'),
         ("--format", "canonical"),
         "negative_infinity_score.jsonl:1: malformed JSON: -Infinity is not valid JSON; fix or remove this line, or "
         "pass --skip-invalid"),
    Case("bom_first_line", lambda: b"\xef\xbb\xbf" + canon_line(), (),
         "1 valid traces (4 steps; format canonical)", code=0),
    Case("bom_second_line", lambda: canon_line() + b"\xef\xbb\xbf" + jsonl(canon("t2")), (),
         "bom_second_line.jsonl:2: malformed JSON (column 1): Unexpected UTF-8 BOM (decode using utf-8-sig); fix or "
         "remove this line, or pass --skip-invalid"),
    Case("crlf_line_endings", lambda: (canon_line() + jsonl(canon("t2"))).replace(b"\n", b"\r\n"), (),
         "2 valid traces (8 steps; format canonical)", code=0),
    Case("cr_only_line_endings", lambda: (canon_line() + jsonl(canon("t2"))).replace(b"\n", b"\r"), (),
         "cr_only_line_endings.jsonl:1: malformed JSON (column 557): Extra data; fix or remove this line, or pass "
         "--skip-invalid"),
    Case("nul_byte", lambda: canon_line().replace(b"plan step 0", b"plan\x00step 0"), ("--format", "canonical"),
         "nul_byte.jsonl:1: NUL byte in line; the file is binary or corrupt"),
    Case("utf16_file", lambda: canon_line().decode().encode("utf-16"), ("--format", "canonical"),
         "utf16_file.jsonl:1: invalid UTF-8 at byte 0; re-encode the file as UTF-8"),
    Case("invalid_utf8_byte", lambda: canon_line().replace(b"plan step 0", b"plan \xff step 0"), (),
         "invalid_utf8_byte.jsonl:1: invalid UTF-8 at byte 262; re-encode the file as UTF-8"),
    Case("latin1_text", lambda: canon_line().replace(b"plan step 0", "café".encode("latin-1")), (),
         "latin1_text.jsonl:1: invalid UTF-8 at byte 260; re-encode the file as UTF-8"),
    Case("encoded_surrogate_bytes", lambda: canon_line().replace(b"plan step 0", b"\xed\xa0\x80"), (),
         "encoded_surrogate_bytes.jsonl:1: invalid UTF-8 at byte 257; re-encode the file as UTF-8"),
    Case("lone_surrogate_escape", lambda: canon_line().replace(b"plan step 0", b"\\ud800"), (),
         "lone_surrogate_escape.jsonl:1: malformed JSON: a string holds an unpaired surrogate escape "
         "(\\ud800-\\udfff), which is not text; fix or remove this line, or pass --skip-invalid"),
    Case("empty_file", lambda: b"", (),
         "empty_file.jsonl: file is empty; expected traces (one JSON object per line)"),
    Case("whitespace_only", lambda: b"  \n\t\n\r\n", (),
         "whitespace_only.jsonl: file is empty; expected traces (one JSON object per line)"),
    Case("binary_garbage", lambda: bytes(range(256)) * 4, (),
         "binary_garbage.jsonl:1: cannot tell the trace format; pass --format with one of: {formats}"),
    Case("plain_prose", lambda: b"These are not traces, just notes.\nSecond line.\n", (),
         "plain_prose.jsonl:1: cannot tell the trace format; pass --format with one of: {formats}"),
    Case("top_level_array", lambda: b'[1, 2, 3]\n', ("--format", "canonical"),
         "top_level_array.jsonl:1, at $: record must be a JSON object"),
    Case("top_level_string", lambda: b'"hello"\n', ("--format", "canonical"),
         "top_level_string.jsonl:1, at $: record must be a JSON object"),
    Case("deep_nesting_100k", lambda: deep_array(100_000), ("--format", "canonical"),
         "deep_nesting_100k.jsonl:1: malformed JSON: nested too deeply to read (more than ~1000 levels); fix or "
         "remove this line, or pass --skip-invalid"),
    Case("deep_nesting_in_field", lambda: deep_field(50_000), ("--format", "canonical"),
         "deep_nesting_in_field.jsonl:1: malformed JSON: nested too deeply to read (more than ~1000 levels); fix or "
         "remove this line, or pass --skip-invalid"),
    Case("integer_5000_digits",
         lambda: canon_line().replace(b'"score": 0.5', b'"score": ' + b"9" * 5000),
         ("--format", "canonical"),
         "integer_5000_digits.jsonl:1: malformed JSON: Exceeds the limit (4300 digits) for integer string "
         "conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit; fix or remove "
         "this line, or pass --skip-invalid"),
    Case("string_10mb_then_bad_kind", lambda: huge_text(10 * 2**20, then_bad_kind=True), (),
         "string_10mb_then_bad_kind.jsonl:1, trace huge, at $.steps[3].kind: 'final' is not allowed; expected one "
         "of: reasoning, search, search_result, answer, other"),
    Case("string_10mb_truncated",
         lambda: truncated(huge_text(10 * 2**20, then_bad_kind=False), 10 * 2**20 + 100),
         ("--format", "canonical"),
         "string_10mb_truncated.jsonl:1: malformed JSON (column 259): Unterminated string starting at; fix or "
         "remove this line, or pass --skip-invalid"),
    Case("steps_10000_bad_last_kind", lambda: many_steps(10_000, last_kind="final"), (),
         "steps_10000_bad_last_kind.jsonl:1, trace long, at $.steps[9999].kind: 'final' is not allowed; expected "
         "one of: reasoning, search, search_result, answer, other"),
    Case("steps_10000_out_of_order", lambda: many_steps(10_000, repeat_index_at=7000), (),
         "steps_10000_out_of_order.jsonl:1, trace long, at $.steps[7000].index: step index 6999 is not greater than "
         "the previous one (6999); steps must be in order"),
    Case("missing_trace_id", lambda: canon_line(trace_id=DELETE), ("--format", "canonical"),
         "missing_trace_id.jsonl:1, at $: 'trace_id' is required"),
    Case("empty_trace_id", lambda: canon_line(trace_id=""), (),
         "empty_trace_id.jsonl:1, trace , at $.trace_id: '' should be non-empty"),
    Case("numeric_trace_id", lambda: canon_line(trace_id=17), (),
         "numeric_trace_id.jsonl:1, at $.trace_id: must be string, got int"),
    Case("wrong_schema_version", lambda: canon_line(schema_version="0.9"), (),
         "wrong_schema_version.jsonl:1, trace t1, at $.schema_version: '1.0' was expected"),
    Case("newer_schema_version", lambda: canon_line(schema_version="2.0"), (),
         f"newer_schema_version.jsonl:1, trace t1, at $.schema_version: trace schema_version 2.0 is newer than "
         f"this seekbench {__version__} reads (1.0); upgrade seekbench (pip install -U seekbench)"),
    Case("missing_steps", lambda: canon_line(steps=DELETE), ("--format", "canonical"),
         "missing_steps.jsonl:1, trace t1, at $: 'steps' is required"),
    Case("steps_is_object", lambda: canon_line(steps={"0": {"index": 0, "kind": "answer"}}), (),
         "steps_is_object.jsonl:1, trace t1, at $.steps: must be array, got dict"),
    Case("step_is_string", lambda: canon_line(steps=["reasoning"]), (),
         "step_is_string.jsonl:1, trace t1, at $.steps[0]: must be object, got str"),
    Case("step_missing_index", lambda: step_line(1, index=DELETE), (),
         "step_missing_index.jsonl:1, trace t1, at $.steps[1]: 'index' is required"),
    Case("negative_step_index", lambda: step_line(0, index=-1), (),
         "negative_step_index.jsonl:1, trace t1, at $.steps[0].index: -1 is less than the minimum of 0"),
    Case("step_index_beyond_int64", lambda: step_line(3, index=10**30), (),
         "step_index_beyond_int64.jsonl:1, trace t1, at $.steps[3].index: 1000000000000000000000000000000 is "
         "greater than the maximum of 9223372036854775807"),
    Case("fractional_step_index", lambda: step_line(0, index=0.5), (),
         "fractional_step_index.jsonl:1, trace t1, at $.steps[0].index: must be integer, got float"),
    Case("boolean_step_index", lambda: step_line(0, index=True), (),
         "boolean_step_index.jsonl:1, trace t1, at $.steps[0].index: must be integer, got bool"),
    Case("string_step_index", lambda: step_line(0, index="0"), (),
         "string_step_index.jsonl:1, trace t1, at $.steps[0].index: must be integer, got str"),
    Case("unknown_step_kind", lambda: step_line(2, kind="tool_output"), (),
         "unknown_step_kind.jsonl:1, trace t1, at $.steps[2].kind: 'tool_output' is not allowed; expected one of: "
         "reasoning, search, search_result, answer, other"),
    Case("unknown_top_level_field", lambda: canon_line(score=3), (),
         "unknown_top_level_field.jsonl:1, trace t1, at $: Additional properties are not allowed ('score' was "
         "unexpected)"),
    Case("unknown_step_field", lambda: step_line(0, thoughts="..."), (),
         "unknown_step_field.jsonl:1, trace t1, at $.steps[0]: Additional properties are not allowed ('thoughts' "
         "was unexpected)"),
    Case("label_outside_ontology", lambda: step_line(0, labels={"grounding": "Maybe"}), (),
         "label_outside_ontology.jsonl:1, trace t1, at $.steps[0].labels.grounding: 'Maybe' is not allowed; "
         "expected one of: Grounded, NotGrounded, null"),
    Case("document_score_string", lambda: step_line(2, documents=[{"text": "e", "score": "high"}]), (),
         "document_score_string.jsonl:1, trace t1, at $.steps[2].documents[0].score: must be number or null, got "
         "str"),
    Case("document_rank_zero", lambda: step_line(2, documents=[{"text": "e", "rank": 0}]), (),
         "document_rank_zero.jsonl:1, trace t1, at $.steps[2].documents[0].rank: 0 is less than the minimum of 1"),
    Case("gold_answers_string", lambda: canon_line(gold_answers="x"), (),
         "gold_answers_string.jsonl:1, trace t1, at $.gold_answers: must be array, got str"),
    Case("correct_unknown_source", lambda: canon_line(correct={"value": True, "source": "vibes"}), (),
         "correct_unknown_source.jsonl:1, trace t1, at $.correct.source: 'vibes' is not allowed; expected one of: "
         "em, judge, panel, human, source_data"),
    Case("question_null", lambda: canon_line(question=None), (),
         "question_null.jsonl:1, trace t1, at $.question: must be string, got NoneType"),
    Case("duplicate_trace_ids", lambda: canon_line() + canon_line(), (),
         "duplicate_trace_ids.jsonl:2, trace t1, at $.trace_id: duplicate trace_id (first seen at line 1); trace "
         "ids must be unique"),
    Case("steps_out_of_order",
         lambda: jsonl(canon(steps=[{"index": i, "kind": "reasoning"} for i in (0, 2, 1, 3)])),
         (),
         "steps_out_of_order.jsonl:1, trace t1, at $.steps[2].index: step index 1 is not greater than the previous "
         "one (2); steps must be in order"),
    Case("duplicate_step_index", lambda: step_line(1, index=0, depends_on=[]), (),
         "duplicate_step_index.jsonl:1, trace t1, at $.steps[1].index: step index 0 is not greater than the "
         "previous one (0); steps must be in order"),
    Case("dangling_depends_on", lambda: step_line(2, depends_on=[7]), (),
         "dangling_depends_on.jsonl:1, trace t1, at $.steps[2].depends_on[0]: depends_on names step 7, which is not "
         "an earlier step of this trace"),
    Case("depends_on_later_step", lambda: step_line(1, depends_on=[3]), (),
         "depends_on_later_step.jsonl:1, trace t1, at $.steps[1].depends_on[0]: depends_on names step 3, which is "
         "not an earlier step of this trace"),
    Case("depends_on_itself", lambda: step_line(1, depends_on=[1]), (),
         "depends_on_itself.jsonl:1, trace t1, at $.steps[1].depends_on[0]: depends_on names step 1, which is not "
         "an earlier step of this trace"),
    Case("seekbench_missing_model", lambda: seekbench(setitem("model", DELETE)), (),
         "seekbench_missing_model.jsonl:1, trace sb1, at $.model: missing agent (the 'model' field); add the agent "
         "name"),
    Case("seekbench_label_outside_ontology",
         lambda: seekbench(setitem("trace/0/annotation/attributes/groundness", "Sorta")),
         (),
         "seekbench_label_outside_ontology.jsonl:1, trace sb1, at $.trace[0].annotation.attributes.groundness: "
         "label 'Sorta' is outside the ontology for grounding; allowed: Grounded, NotGrounded"),
    Case("seekbench_unknown_label_field", lambda: seekbench(setitem("trace/0/annotation/attributes/vibes", "good")), (),
         "seekbench_unknown_label_field.jsonl:1, trace sb1, at $.trace[0].annotation.attributes.vibes: unknown "
         "label field 'vibes'"),
    Case("seekbench_trace_not_list",
         lambda: seekbench(setitem("trace", "step one; step two")),
         ("--format", "seekbench"),
         "seekbench_trace_not_list.jsonl:1, trace sb1, at $.trace: trace must be array, got string"),
    Case("seekbench_step_type_missing", lambda: seekbench(setitem("trace/1/type", DELETE)), (),
         "seekbench_step_type_missing.jsonl:1, trace sb1, at $.trace[1].type: step type missing or not a string"),
    Case("seekbench_dependency_string",
         lambda: seekbench(setitem("trace/1/trace_dependency", {"dependent_on": "0"})),
         (),
         "seekbench_dependency_string.jsonl:1, trace sb1, at $.trace[1].trace_dependency.dependent_on: dependent_on "
         "must be integer, got string"),
    Case("seekbench_dangling_dependency",
         lambda: seekbench(setitem("trace/1/trace_dependency", {"dependent_on": 9})),
         (),
         "seekbench_dangling_dependency.jsonl:1, trace sb1, at $.steps[1].depends_on[0]: depends_on names step 9, "
         "which is not an earlier step of this trace"),
    # a record without an agent is no error since issue 11: the file's stem is the agent, with a note
    Case("openai_unknown_tool_call_id", lambda: openai(setitem("messages/3/tool_call_id", "c9")), (),
         "openai_unknown_tool_call_id.jsonl:1, trace oa1, at $.messages[3].tool_call_id: tool call id 'c9' matches "
         "no earlier tool call without a result; fix the id or remove this result"),
    Case("openai_arguments_not_json",
         lambda: openai(setitem("messages/2/tool_calls/0/function/arguments", "{query: Velmora")),
         (),
         "openai_arguments_not_json.jsonl:1, trace oa1, at $.messages[2].tool_calls[0].function.arguments: invalid "
         "JSON in tool-call arguments (column 2): Expecting property name enclosed in double quotes; arguments must "
         "be a JSON object encoded as a string"),
    Case("openai_arguments_deep",
         lambda: openai(setitem("messages/2/tool_calls/0/function/arguments", "[" * 100000)),
         (),
         "openai_arguments_deep.jsonl:1, trace oa1, at $.messages[2].tool_calls[0].function.arguments: invalid JSON "
         "in tool-call arguments: nested too deeply to read; arguments must be a JSON object encoded as a string"),
    Case("openai_content_number", lambda: openai(setitem("messages/1/content", 42)), (),
         "openai_content_number.jsonl:1, trace oa1, at $.messages[1].content: content must be array, got integer"),
    Case("openai_pretty_truncated", lambda: truncated(openai(indent=2), 400), (),
         "openai_pretty_truncated.jsonl:23: malformed JSON (line 23, column 11): Unterminated string starting at"),
    Case("atif_wrong_version",  # a bare "1.4" is read (with a note); a version ATIF does not have is not
         lambda: atif(setitem("schema_version", "2.0")),
         ("--format", "atif"),
         "atif_wrong_version.jsonl:1, trace at1, at $.schema_version: schema_version '2.0' is not an ATIF version "
         "(ATIF-v1.x); pick the importer that fits this file"),
    Case("atif_steps_not_list", lambda: atif(setitem("steps", {"1": "user"})), ("--format", "atif"),
         "atif_steps_not_list.jsonl:1, trace at1, at $.steps: steps must be array, got object"),
    Case("atif_missing_agent_name", lambda: atif(setitem("agent/name", DELETE)), (),
         "atif_missing_agent_name.jsonl:1, trace at1, at $.agent.name: missing agent.name: add it to the file, or name "
         "the agent with --agent"),
    Case("atif_source_number", lambda: atif(setitem("steps/0/source", 7)), (),
         "atif_source_number.jsonl:1, trace at1, at $.steps[0].source: source must be string, got integer"),
    Case("search_r1_no_text_field",
         lambda: search_r1(lambda rec: rec.update(output_text=rec.pop("output"))),
         ("--format", "search_r1"),
         "search_r1_no_text_field.jsonl:1, trace r1, at $.output: no tagged text: add a output / response / "
         "responses / text field, or name it with --field"),
    Case("search_r1_output_number",
         lambda: search_r1(setitem("output", 5)).replace(b'"id"', b'"response": "<answer>x</answer>", "id"'),
         (),
         "search_r1_output_number.jsonl:1, trace r1, at $.output: output must be string, got integer"),
    Case("search_r1_gold_object", lambda: search_r1(setitem("golden_answers", {"answer": "Norland"})), (),
         "search_r1_gold_object.jsonl:1, trace r1, at $.golden_answers: gold answers must be array, got object"),
    Case("truncated_first_record_autodetect", lambda: truncated(canon_line(), 120), (),
         "truncated_first_record_autodetect.jsonl:1: cannot tell the trace format; pass --format with one of: "
         "{formats}"),
    Case("first_record_line_separator", lambda: jsonl(canon(question="a\u2028b"), canon("t2")), (),
         "2 valid traces (8 steps; format canonical)", code=0),
    Case("first_record_line_separator_forced",
         lambda: jsonl(canon(question="a\u2028b"), canon("t2")),
         ("--format", "canonical"),
         "2 valid traces (8 steps; format canonical)", code=0),
    Case("control_chars_in_trace_id", lambda: jsonl(canon(trace_id="t\x1b[31mred\rX", steps="bad")), (),
         "control_chars_in_trace_id.jsonl:1, trace t\\x1b[31mred\\rX, at $.steps: must be array, got str"),
    Case("duplicate_json_keys",
         lambda: b'{"schema_version": "1.0", "trace_id": "a", "trace_id": "b", "agent": "a", '
         b'"question": "q", "steps": []}\n',
         (),
         "1 valid traces (0 steps; format canonical)", code=0),
    Case("forced_wrong_format", lambda: canon_line(), ("--format", "atif"),
         "forced_wrong_format.jsonl:1, trace forced_wrong_format.jsonl:1, at $.schema_version: schema_version '1.0' "
         "is not an ATIF version (ATIF-v1.x); pick the importer that fits this file"),

    # inputs that are not a file of traces at all
    Case("missing_file", lambda: None, (),
         "missing_file.jsonl: file not found"),
    Case("directory_given", lambda: None, (),
         "directory_given.jsonl: is a directory, expected a file"),
    Case("duplicate_trace_ids_across_files", lambda: canon_line(), ("second.jsonl",),
         "second.jsonl:1, trace t1, at $.trace_id: duplicate trace_id across input files; trace ids must be unique"),
]


def _materialise(case: Case, where: Path) -> list[str]:
    """Write the case's input under ``where``; return the CLI arguments naming it."""
    name = f"{case.name}.jsonl"
    if case.name == "directory_given":
        (where / name).mkdir()
    data = case.build()
    if data is not None:
        (where / name).write_bytes(data)
    if case.name == "duplicate_trace_ids_across_files":
        (where / "second.jsonl").write_bytes(data)
    return [name, *case.args]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=c.marks) for c in CASES])
def test_validate_gives_the_exact_one_line_message(case, tmp_path):
    code, out, err = run_cli("validate", *_materialise(case, tmp_path), cwd=tmp_path)
    expected = case.expected.format(formats=", ".join(FORMATS))
    if case.code == 2:
        assert (code, out) == (2, "")
        assert err.splitlines() == [f"seekbench: error: {expected}"], err
        assert err.count("\n") == 1
    else:
        assert (code, err) == (0, "")
        assert out.splitlines() == [expected]


def test_the_corpus_is_large_and_named_uniquely():
    names = [c.name for c in CASES]
    assert len(names) >= 50 and len(set(names)) == len(names)


def test_small_cases_are_kept_as_files_under_cases():
    """Every small input is in cases/ byte for byte (regenerate with ``python cases/make_cases.py``)."""
    kept = {p.name for p in CASES_DIR.glob("*.jsonl")}
    wanted = set()
    for case in CASES:
        data = case.build()
        if data is None or len(data) > SMALL:
            continue
        wanted.add(f"{case.name}.jsonl")
        assert (CASES_DIR / f"{case.name}.jsonl").read_bytes() == data, case.name
    assert kept == wanted


def test_a_subprocess_prints_one_line_and_no_traceback(tmp_path):
    """The same contract from a real process for a few cases (tracebacks only show up there)."""
    from hostile_support import run_subprocess

    for case in CASES:
        if case.name not in ("steps_10000_bad_last_kind", "binary_garbage"):
            continue
        proc = run_subprocess("validate", *_materialise(case, tmp_path), cwd=tmp_path)
        expected = case.expected.format(formats=", ".join(FORMATS))
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"seekbench: error: {expected}\n")


MINIMAL = {"schema_version": "1.0", "trace_id": "m", "agent": "a", "question": "q",
           "steps": [{"index": 0, "kind": "answer", "text": "x"}]}


@pytest.mark.parametrize("command", [
    ("validate",), ("convert", "-o", "out.jsonl"), ("metrics",), ("annotate", "--judge", "rules", "-o", "a.jsonl"),
    ("report", "-o", "rep", "--n-boot", "20"),
], ids=lambda c: c[0])
def test_the_smallest_valid_trace_goes_through_every_command(command, tmp_path):
    """The least a valid trace needs (no dataset, no question id, one answer step): no command may crash on it."""
    (tmp_path / "min.jsonl").write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    code, out, err = run_cli(command[0], "min.jsonl", *command[1:], cwd=tmp_path)
    assert code == 0, err
