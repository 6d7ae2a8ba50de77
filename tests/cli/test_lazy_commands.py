"""A command imports its own module only: `seekbench metrics` starts without what judging or the environment needs."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from seekbench.cli._main import COMMANDS, build_parser, chosen_command


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_the_table_names_every_command_in_help_order():
    assert list(_subparsers(build_parser())) == [name for _, names in COMMANDS for name in names]


@pytest.mark.parametrize(("module", "names"), COMMANDS, ids=[m for m, _ in COMMANDS])
def test_a_command_alone_registers_its_module(module, names):
    # The module registers exactly the commands the table gives it, each with the whole parser's options.
    whole = _subparsers(build_parser())
    for name in names:
        alone = _subparsers(build_parser(name))
        assert list(alone) == list(names)
        assert alone[name].format_help() == whole[name].format_help()


@pytest.mark.parametrize(
    ("argv", "command"),
    [(["metrics", "x.jsonl"], "metrics"), (["--version"], None), ([], None), (["metricz"], None),
     (["-h"], None), (["cache", "stats"], "cache"), (["coverage", "--help"], "coverage")],
)  # fmt: skip
def test_the_chosen_command_is_the_first_word(argv, command):
    assert chosen_command(argv) == command


def test_metrics_imports_no_other_command():
    code = (
        "import sys, contextlib, io, json\n"
        "from seekbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['metrics', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('seekbench.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert "seekbench.cli._metrics" in loaded
    assert not [m for m in loaded if m.startswith(("seekbench.cli._agree", "seekbench.cli._judge", "seekbench.analysis",
                                                   "seekbench.env", "seekbench.annotate", "seekbench.agreement"))]
