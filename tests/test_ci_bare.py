"""The ``bare`` stage of ``.ci/run`` runs every registered CLI command on a fresh install.

The stage's command list lives in the shell function ``bare_commands``: each command runs as
``sb CMD ...`` (against the live server) or ``dead CMD ...`` (against a dead port). A command
added to the CLI without a line there fails this test, so the fresh-install check stays complete.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from seekbench.cli._main import build_parser

CI_RUN = Path(__file__).resolve().parents[1] / ".ci" / "run"


def _function_body(script: str, name: str) -> str:
    """The body of the shell function ``name() {`` ... its closing ``}`` at the start of a line."""
    match = re.search(rf"^{name}\(\) {{.*?^}}$", script, flags=re.S | re.M)
    assert match, f".ci/run has no function {name}()"
    return match.group(0)


def _run_commands(body: str) -> set[tuple[str, ...]]:
    """The words after ``sb`` / ``dead`` on every line of ``body``: the commands the stage runs
    (a few words more than the command path; the check looks at prefixes)."""
    found = set()
    for line in body.splitlines():
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        for m in re.finditer(r"(?:^|[\s;&|(])(?:sb|dead)\s+((?:[a-z][a-z-]*\s*){1,2})", code):
            found.add(tuple(m.group(1).split()))
    return found


def _leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command path (``validate``, ``env run``, ``cache stats``...): sub-commands of a
    group, not the group itself. argparse has no public way to list sub-parsers; the docs' CLI page
    (docs/hooks/generate.py) walks them the same way."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _leaf_commands(sub, (*prefix, name)) or [(*prefix, name)]
    return out


def test_the_bare_stage_is_a_stage_run_after_wheel():
    script = CI_RUN.read_text(encoding="utf-8")
    stages = re.search(r"^for name in (.*); do$", script, flags=re.M)
    assert stages, "the stage list of .ci/run changed shape"
    names = stages.group(1).split()
    assert "bare" in names and names.index("bare") == names.index("wheel") + 1, names
    # the same command list for both installs: the wheel, and the README's first command on a clean clone
    bare = _function_body(script, "bare")
    assert re.search(r'^  bare_run "the wheel" "\$work/wheel-venv" ', bare, flags=re.M)
    assert re.search(r'^  bare_run "pip install -e \." "\$work/editable-venv" ', bare, flags=re.M)
    assert 'cd "$work/checkout" && "$work/editable-venv/bin/python" -m pip install -q -e .' in bare
    assert "bare_commands" in _function_body(script, "bare_run")


def test_the_bare_stage_runs_every_registered_command():
    ran = _run_commands(_function_body(CI_RUN.read_text(encoding="utf-8"), "bare_commands"))
    commands = _leaf_commands(build_parser())
    assert len(commands) >= 20 and ("env", "run") in commands and ("cache", "clear") in commands
    missing = [" ".join(c) for c in commands if not any(r[: len(c)] == c for r in ran)]
    assert not missing, f".ci/run's bare_commands runs no `sb {missing[0]} ...` line (all missing: {missing})"


@pytest.mark.parametrize("command", ["annotate", "judge-answers", "coverage", "env run", "env synth-beliefs"])
def test_every_command_that_asks_a_model_meets_a_dead_port(command):
    body = _function_body(CI_RUN.read_text(encoding="utf-8"), "bare_commands")
    assert re.search(rf"^\s*dead {command} .*--base-url \"\$dead\"", body, flags=re.M), command


def test_the_check_sees_a_missing_command():
    # The extraction must not find what is not there: drop the env run lines and the check misses it.
    body = _function_body(CI_RUN.read_text(encoding="utf-8"), "bare_commands")
    without = "\n".join(line for line in body.splitlines() if not re.search(r"\b(sb|dead) env run\b", line))
    ran = _run_commands(without)
    assert not any(r[:2] == ("env", "run") for r in ran)
    assert any(r[:2] == ("env", "theta") for r in ran) and any(r[:1] == ("validate",) for r in ran)
