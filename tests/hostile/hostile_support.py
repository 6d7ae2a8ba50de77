"""Helpers shared by the hostile-input tests: seed inputs per format, the outcome check, CLI runners."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

from seekbench import UserInputError
from seekbench._io import dumps
from seekbench.traces import read_traces, validate_trace
from seekbench.traces.importers import available_formats

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "importers"
FORMATS = available_formats()

#: Valid inputs to mutate, one per importer shape: (format, file name, bytes).
SEEDS: list[tuple[str, str, bytes]] = [
    ("seekbench", "same.seekbench.jsonl", (FIXTURES / "same.seekbench.jsonl").read_bytes()),
    ("openai_chat", "same.openai.jsonl", (FIXTURES / "same.openai.jsonl").read_bytes()),
    ("openai_chat", "parallel.openai.json", (FIXTURES / "parallel.openai.json").read_bytes()),
    ("atif", "same.atif.jsonl", (FIXTURES / "same.atif.jsonl").read_bytes()),
    ("atif", "trajectory.atif.json", (FIXTURES / "trajectory.atif.json").read_bytes()),
    ("search_r1", "same.search_r1.jsonl", (FIXTURES / "same.search_r1.jsonl").read_bytes()),
    ("search_r1", "research.txt", (FIXTURES / "research.txt").read_bytes()),
    ("inspect", "capitals.eval", (FIXTURES / "capitals.eval").read_bytes()),
    ("inspect", "capitals.inspect.json", (FIXTURES / "capitals.inspect.json").read_bytes()),
    ("otel", "agent.otel.jsonl", (FIXTURES / "agent.otel.jsonl").read_bytes()),
    ("otel", "otel_phoenix_tools.jsonl", (FIXTURES / "shapes" / "otel_phoenix_tools.jsonl").read_bytes()),
    ("langfuse", "langfuse_trace.json", (FIXTURES / "shapes" / "langfuse_trace.json").read_bytes()),
    ("langfuse", "langfuse_traces.jsonl", (FIXTURES / "shapes" / "langfuse_traces.jsonl").read_bytes()),
    ("swe_agent", "swe_agent.traj", (FIXTURES / "shapes" / "swe_agent.traj").read_bytes()),
    ("mini_swe_agent", "mini_swe_agent.traj.json", (FIXTURES / "shapes" / "mini_swe_agent.traj.json").read_bytes()),
    ("tau2", "tau_sim.json", (FIXTURES / "shapes" / "tau_sim.json").read_bytes()),
    ("langsmith", "langsmith_batch.json", (FIXTURES / "shapes" / "langsmith_batch.json").read_bytes()),
    ("langsmith", "langsmith_runs.jsonl", (FIXTURES / "shapes" / "langsmith_runs.jsonl").read_bytes()),
    ("smolagents", "smolagents_messages.jsonl", (FIXTURES / "shapes" / "smolagents_messages.jsonl").read_bytes()),
    ("smolagents", "smolagents_memory_steps.json", (FIXTURES / "shapes" / "smolagents_memory_steps.json").read_bytes()),
    ("atif", "atif_bare_version.json", (FIXTURES / "shapes" / "atif_bare_version.json").read_bytes()),
]


def canonical_trace(tid: str = "c1", n_steps: int = 4) -> dict:
    """A small valid canonical trace: reasoning, search, search_result, ..., answer (each on the one before)."""
    kinds = ("reasoning", "search", "search_result")
    steps = []
    for i in range(n_steps - 1):
        kind = kinds[i % 3]
        step: dict = {"index": i, "kind": kind, "depends_on": [i - 1] if i else []}
        if kind == "reasoning":
            step["text"] = f"plan step {i}"
        elif kind == "search":
            step["query"] = f"query {i}"
        else:
            step["documents"] = [{"id": f"d{i}", "title": "T", "text": f"evidence {i}", "rank": 1, "score": 0.5}]
        steps.append(step)
    steps.append({"index": n_steps - 1, "kind": "answer", "text": "x", "depends_on": [n_steps - 2]})
    return {"schema_version": "1.0", "trace_id": tid, "agent": "agent-a", "dataset": "d", "question": "q?",
            "gold_answers": ["x"], "final_answer": "x", "correct": {"value": True, "source": "em"}, "steps": steps}


CANONICAL_SEED = ("canonical", "canon.jsonl", (json.dumps(canonical_trace()) + "\n"
                                               + json.dumps(canonical_trace("c2", 7)) + "\n").encode())
SEEDS.append(CANONICAL_SEED)


def _parquet_seed() -> bytes | None:
    """A small valid Parquet trace file, when the Parquet importer and pyarrow are available."""
    if "parquet" not in FORMATS:
        return None
    import tempfile

    from seekbench.traces.importers._parquet import write_parquet

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "seed.parquet"
        write_parquet(path, [canonical_trace("p1", 5), canonical_trace("p2", 8)])
        return path.read_bytes()


if (_PARQUET := _parquet_seed()) is not None:
    SEEDS.append(("parquet", "seed.parquet", _PARQUET))


def assert_clean_error(e: UserInputError) -> None:
    """A user error as the CLI prints it: one line, saying something, no control or invisible characters
    (a hostile trace id must not reach the terminal raw)."""
    text = e.one_line()
    assert str(e) == text
    assert len(text.splitlines()) == 1 and text.strip(), repr(text)
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in text), repr(text)


def check_outcome(path: Path, fmt: str | None) -> str:
    """Read ``path`` as ``fmt`` (None: detected) both ways and check the contract.

    Every input ends in traces that pass the validator and can be written back
    as UTF-8 JSON, or in clean user errors; any other exception fails the test.
    Returns ``"ok"``, ``"partial"`` (some records skipped) or ``"error"``.
    """
    try:
        res = read_traces(path, format=fmt, skip_invalid=True)
    except UserInputError as e:
        assert_clean_error(e)
        return "error"
    for e in res.skipped:
        assert_clean_error(e)
    for tr in res.traces:
        validate_trace(tr)
        dumps(tr).encode("utf-8")
    try:
        strict = read_traces(path, format=fmt)
    except UserInputError as e:
        assert_clean_error(e)
        assert res.skipped, "the strict read failed where the lenient one skipped nothing"
    else:
        assert not res.skipped and len(strict.traces) == len(res.traces)
    return "partial" if res.skipped else "ok"


def run_cli(*args: object, cwd: Path | None = None) -> tuple[int, str, str]:
    """Run ``seekbench ARGS`` in this process (cwd changed for the call); returns code, stdout, stderr."""
    from seekbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def cli_command(*args: object) -> list[str]:
    """``python -m seekbench ARGS`` with this repository first on the path."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(REPO)!r}); "
            "from seekbench.cli import main; sys.exit(main(sys.argv[1:]))", *map(str, args)]


def run_subprocess(*args: object, cwd: Path | None = None, env: dict | None = None,
                   timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cli_command(*args), capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})})


def labeled_traces(n: int) -> list[dict]:
    """``n`` small canonical traces of varied length with inline human labels (so reports have content)."""
    inline = {"reasoning": {"reasoning_type": "PlanFormation", "grounding": "Grounded"},
              "search_result": {"clarity": "Clear", "sufficiency": "Sufficient"}}
    out = []
    for i in range(n):
        tr = canonical_trace(f"t{i:04d}", 4 + i % 9)
        tr["agent"] = f"agent-{i % 2}"
        tr["correct"] = {"value": i % 3 != 0, "source": "em"}
        for s in tr["steps"]:
            if s["kind"] in inline:
                s["labels"] = dict(inline[s["kind"]])
            if s["kind"] == "reasoning" and i % 4 == 0:
                s["labels"]["grounding"] = "NotGrounded"
        tr["inline_labels"] = {"rater": "human", "kind": "human"}
        out.append(tr)
    return out


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def embed_writer(path: str, n_batches: int, batch: int, dim: int) -> None:
    """Write ``n_batches`` batches of vectors to an embedding cache (the SIGKILL test's victim)."""
    import numpy as np

    from seekbench.env._embed_cache import EmbeddingCache

    with EmbeddingCache(path) as cache:
        for b in range(n_batches):
            texts = [f"batch {b} text {i}" for i in range(batch)]
            cache.put_many("model-x", texts, np.full((batch, dim), float(b), dtype=np.float32))


def chat_completions(server) -> int:
    """Chat-completion requests a bundled ``OpenAIServer`` has answered (what a run paid for)."""
    return sum(r.get("path", "").endswith("/chat/completions") for r in server.requests)
