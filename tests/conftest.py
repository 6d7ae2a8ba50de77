"""Shared test fixtures: the gold data path (fails under CI when missing) and a CLI runner."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
REAL_FORMATS = REPO.parent / "shared" / "real-formats"


def _require(path: Path, what: str) -> Path:
    if path.exists():
        return path
    msg = f"{what} not found at {path}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (required under CI=true)")
    pytest.skip(msg)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The 190 human-labeled SeekBench traces, read in place (never copied into the project)."""
    return _require(SHARED_DATA, "shared SeekBench data")


@pytest.fixture(scope="session")
def real_format():
    """A real public file of a producer's format, read in place (never copied into the project)."""
    return lambda name: _require(REAL_FORMATS / name, "real public format file")


BENCH = REPO / "scripts" / "bench"


@pytest.fixture(scope="session")
def bench_script():
    """Load a benchmark script of scripts/bench by name (``"learned_rqi"``) as a fresh module; nothing runs.

    The scripts' own folder is on the path while it loads (some import a sibling script), and the
    module is registered in ``sys.modules`` (dataclasses look their module up while being built).
    """

    def load(name: str):
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        sys.path.insert(0, str(BENCH))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(BENCH))
        return module

    return load


@pytest.fixture(scope="session")
def shared_traces(shared_data):
    from seekbench.traces import read_traces

    return read_traces(shared_data).traces


@pytest.fixture(scope="session")
def shared_tables(shared_traces):
    from seekbench.traces import build_tables

    return build_tables(shared_traces)


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"CliResult(code={self.code}, out={self.out[-500:]!r}, err={self.err[-500:]!r})"


@pytest.fixture
def dead_url() -> str:
    """The URL of a port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def cli(capsys):
    """Run ``seekbench ARGS`` in-process; returns exit code, stdout and stderr."""
    from seekbench.cli import main

    def run(*args: str) -> CliResult:
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse usage errors
            code = e.code if isinstance(e.code, int) else 2
        cap = capsys.readouterr()
        return CliResult(code, cap.out, cap.err)

    return run


@pytest.fixture
def cli_subprocess():
    """Run ``python -m seekbench ARGS`` in a real subprocess (for tracebacks and exit codes)."""

    def run(*args: str, cwd: str | None = None, env: dict | None = None) -> CliResult:
        proc = subprocess.run([sys.executable, "-m", "seekbench", *map(str, args)], capture_output=True,
                              text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=300)
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return run
