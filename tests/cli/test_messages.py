"""Every user-facing error text names only options that exist (issue 13: "or pass field=", `env run` suggesting
a `--judge` it lacks).

The texts are collected from the package's source: the string parts (f-string pieces included) of every
``UserInputError(...)``, ``parser.error(...)`` and ``warnings.warn(...)`` call, and of the module-level
advice constants they use. Each ``--option`` they name must be an option of some seekbench command, and
no text may tell a command-line user to "pass NAME=" (a Python keyword they cannot give) without
saying that it is for Python callers.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import seekbench
from seekbench.cli._main import build_parser
from seekbench.testing.openai_server import build_parser as server_parser

PACKAGE = Path(seekbench.__file__).parent
CALLS = {"UserInputError", "error", "warn", "RequestFailed", "PolicyError"}
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
PYTHON_KEYWORD = re.compile(r"\bpass (\w+)=")


def _strings(node: ast.AST) -> list[str]:
    """The literal text of a call argument: constants and the constant parts of f-strings, joined."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    if isinstance(node, ast.BinOp):
        return _strings(node.left) + _strings(node.right)
    return [s for child in ast.iter_child_nodes(node) for s in _strings(child)]


def user_texts() -> list[tuple[str, int, str]]:
    """(file, line, text) of every user-facing error or warning text in the package."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(PACKAGE))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in CALLS:
                    out += [(rel, node.lineno, s) for arg in node.args[:1] for s in _strings(arg)]
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.startswith("_ADVICE")
                                                      for t in node.targets):
                out += [(rel, node.lineno, s) for s in _strings(node.value)]
    return out


def cli_options() -> set[str]:
    """Every long option of every command and subcommand."""
    found: set[str] = set()

    def walk(parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            found.update(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)

    walk(build_parser())
    walk(server_parser())  # python -m seekbench.testing.openai_server
    return found


def test_the_scan_finds_the_texts():
    texts = user_texts()
    assert len(texts) > 200
    assert any("--skip-invalid" in t for _, _, t in texts)  # the advice constant of the JSONL reader


def test_every_option_named_in_an_error_exists():
    options = cli_options()
    assert {"--skip-invalid", "--judge", "--labels", "--overwrite"} <= options
    wrong = [f"{f}:{n}: {opt} in {t!r}" for f, n, t in user_texts() for opt in OPTION.findall(t)
             if opt not in options]
    assert not wrong, "\n".join(wrong)


def test_no_error_tells_a_command_line_user_to_pass_a_python_keyword():
    wrong = [f"{f}:{n}: {t!r}" for f, n, t in user_texts() if PYTHON_KEYWORD.search(t) and "Python" not in t]
    assert not wrong, "\n".join(wrong)
