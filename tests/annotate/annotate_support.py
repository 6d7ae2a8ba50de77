"""Helpers shared by the annotate tests (synthetic traces, JSONL, comparisons, the CLI runner)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "_runner.py"


def make_trace(tid: str, n_steps: int, *, question: str = "Who wrote the book?") -> dict:
    """A canonical trace cycling reasoning -> search -> search_result, ending with an answer."""
    steps = []
    kinds = ("reasoning", "search", "search_result")
    for i in range(n_steps - 1):
        kind = kinds[i % 3]
        step = {"index": i, "kind": kind}
        if kind == "reasoning":
            step["text"] = f"Thinking about part {i} of trace {tid}."
        elif kind == "search":
            step["query"] = f"query {i // 3 % 2} for {tid}"  # every other search repeats an earlier one
        else:
            step["documents"] = [{"title": f"Doc {i}", "text": f"Evidence {i} about {tid}.", "rank": 1}]
        steps.append(step)
    steps.append({"index": n_steps - 1, "kind": "answer", "text": "The author."})
    return {"schema_version": "1.0", "trace_id": tid, "agent": "test-agent", "question": question,
            "steps": steps}


def write_traces(path: Path, traces: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in traces)
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def comparable(records: list[dict]) -> list[dict]:
    """Records without the fields that differ between two equal runs (wall-clock time and latency)."""
    out = []
    for r in records:
        prov = {k: v for k, v in r["provenance"].items() if k not in ("time", "latency_s")}
        out.append({**r, "provenance": prov})
    return out


def runner_cmd(*args: str) -> list[str]:
    """``python tests/annotate/_runner.py ARGS``: the seekbench CLI with the annotate commands registered."""
    return [sys.executable, str(RUNNER), *map(str, args)]
