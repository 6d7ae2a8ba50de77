"""The shared option builders (seekbench/cli/_options.py) and the one way a command ends (_output.py).

Every command that has an option gets it from one builder, so the same flag means the same thing,
with the same default, type and action, wherever it appears; old spellings still parse.
"""

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from seekbench._errors import EXIT_FAILURES, EXIT_OK, UserInputError
from seekbench.cli._main import build_parser
from seekbench.cli._options import add_command, check_at_least, llm_kwargs
from seekbench.cli._output import finish, fixed_width


def _docs_hook():
    """The CLI reference generator: its walk over the parsers is the set of commands the docs list."""
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROOT = Path(__file__).resolve().parents[2]
PARSERS = {name: parser for name, parser, _ in _docs_hook()._commands(build_parser(), "seekbench")}

#: Options built by one builder each: wherever they appear, they must be the same option.
SHARED = ("--seed", "--cache", "--concurrency", "--budget-usd", "--base-url", "--no-progress", "--no-cache",
          "--json", "--skip-invalid", "--labels", "--labels-rater", "--reference", "--tiebreaker", "--n-boot",
          "--output", "--lang", "--by", "--judge")
#: A different thing under the same name, older than this rule (a corpus format, not a trace format).
OTHER_MEANING = {("seekbench env build-corpus", "--format")}


def _shape(action: argparse.Action) -> tuple:
    kind = type(action).__name__
    return kind, action.dest, action.type, action.nargs, action.default if kind != "_AppendAction" else "append"


def _where(flag: str) -> dict[str, argparse.Action]:
    return {name: a for name, p in PARSERS.items() for a in p._actions if flag in a.option_strings
            and (name, flag) not in OTHER_MEANING}


@pytest.mark.parametrize("flag", SHARED)
def test_a_shared_option_is_the_same_option_on_every_command(flag):
    where = _where(flag)
    assert where, flag
    # required or not, its default, repeatable or not may differ; its name in the code and type may not
    # (annotate's --concurrency defaults at run time to the local server's slot count: its default is None)
    varies = ("--reference", "--by", "--output", "--judge", "--concurrency")
    shapes = {_shape(a)[1:3] if flag in varies else _shape(a) for a in where.values()}
    assert len(shapes) <= 1, (flag, {n: _shape(a) for n, a in where.items()})
    assert all(a.help and len(a.help) > 15 for a in where.values()), flag  # every one explains itself


def test_the_seed_is_0_and_the_concurrency_8_everywhere():
    assert {a.default for a in _where("--seed").values()} == {0}
    assert len(_where("--seed")) >= 6
    concurrency = _where("--concurrency")
    assert concurrency.pop("seekbench annotate").default is None  # the server's slots for a local judge, else 8
    assert {a.default for a in concurrency.values()} == {8}


def test_every_trace_reading_command_exposes_the_same_options():
    readers = [n for n, p in PARSERS.items() if any(g.title == "reading trace files" for g in p._action_groups)]
    assert {"seekbench metrics", "seekbench report", "seekbench explore", "seekbench agree", "seekbench annotate",
            "seekbench judge-answers", "seekbench convert", "seekbench evidence-metrics",
            "seekbench coverage"} <= set(readers)
    options = {n: {s for a in PARSERS[n]._actions for s in a.option_strings} for n in readers}
    reading = {"--format", "--skip-invalid", "--agent", "--question-field", "--answer-field", "--field", "--tags",
               "--search-tools", "--answer-tool"}
    assert all(reading <= o for o in options.values())
    label_readers = {"seekbench metrics", "seekbench report", "seekbench explore"}
    assert all({"--labels", "--labels-rater"} <= options[n] for n in label_readers)
    judged = {"seekbench agree", "seekbench report", "seekbench explore"}
    assert all({"--reference", "--rater"} <= options[n] for n in judged)


def test_the_metric_options_are_one_set_on_metrics_report_and_agree():
    def metric_flags(name):
        group = next(g for g in PARSERS[name]._action_groups if g.title.startswith("metric options"))
        return {s for a in group._group_actions for s in a.option_strings} - {"--by"}

    assert metric_flags("seekbench metrics") == metric_flags("seekbench report") == metric_flags("seekbench agree")
    assert metric_flags("seekbench explore") == {"--evidence-mapping", "--evidence-scope", "--recovery"}


@pytest.mark.parametrize(("command", "old", "new", "dest", "value"), [
    (["judge-answers", "t.jsonl", "-o", "o.jsonl"], ["--tiebreak", "c"], ["--tiebreaker", "c"], "tiebreaker", "c"),
    (["env", "run", "--corpus", "default", "--agent", "keyphrase", "-o", "o.jsonl"], ["--quiet"],
     ["--no-progress"], "no_progress", True),
    (["validate", "t.jsonl"], ["--all"], ["--skip-invalid"], "skip_invalid", True),
    (["judge", "evaluate", "t.jsonl"], ["--rater", "ann"], ["--labels-rater", "ann"], "labels_rater", "ann"),
])
def test_an_old_spelling_still_parses_as_the_new_option(command, old, new, dest, value):
    parser = build_parser()
    assert getattr(parser.parse_args([*command, *old]), dest) == value
    assert getattr(parser.parse_args([*command, *new]), dest) == value


def test_check_at_least_names_the_option_and_lets_none_and_the_floor_through():
    args = argparse.Namespace(concurrency=1, budget_usd=None, b=float("nan"), n_boot=-1)
    check_at_least(args, ("concurrency", 1), ("budget_usd", 0))
    with pytest.raises(UserInputError, match=r"^--n-boot must be >= 0, got -1$"):
        check_at_least(args, ("n_boot", 0))
    with pytest.raises(UserInputError, match=r"--b must be >= 0, got nan"):  # NaN is below every floor
        check_at_least(args, ("b", 0))


def test_llm_kwargs_turns_no_progress_into_the_api_progress_flag():
    args = argparse.Namespace(cache="c.sqlite", concurrency=3, no_progress=True)
    assert llm_kwargs(args, "cache", "concurrency", "no_progress") == {"cache": "c.sqlite", "concurrency": 3,
                                                                       "progress": False}
    args.no_progress = False  # None: the API decides (a bar when stderr is a terminal)
    assert llm_kwargs(args, "no_progress") == {"progress": None}


def test_finish_prints_json_or_text_and_gives_the_exit_code(capsys):
    assert finish(argparse.Namespace(json=True), {"a": 1}, lambda: 1 / 0) == EXIT_OK  # text never built
    assert json.loads(capsys.readouterr().out) == {"a": 1}
    assert finish(argparse.Namespace(json=False), {"a": 1}, "done", failed=True) == EXIT_FAILURES
    assert capsys.readouterr().out == "done\n"


def test_fixed_width_pads_each_column_to_its_widest_cell():
    # "ab" is the widest cell of column 1 (2), "value" the widest of column 2 (5)
    assert fixed_width(["k", "value"], [["ab", "1"], ["c", "22"]]) == ["k   value", "--  -----", "ab  1", "c   22"]
    assert fixed_width(["k"], []) == ["k", "-"]


def test_a_description_laid_out_in_lines_is_printed_as_written():
    sub = argparse.ArgumentParser().add_subparsers()
    laid_out = add_command(sub, "a", help="a", description="line one\n  indented example")
    wrapped = add_command(sub, "b", help="b", description="one paragraph " * 20)
    assert "\n  indented example" in laid_out.format_help()
    assert max(len(line) for line in wrapped.format_help().splitlines()) < 200
