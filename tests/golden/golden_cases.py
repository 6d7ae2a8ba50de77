"""The golden cases: which CLI outputs are pinned, how they are made stable, how they are compared.

Shared by ``tests/golden/test_golden.py`` (compares) and ``scripts/regen_golden.py``
(rewrites the files). Each case runs the real CLI in-process on real files and keeps
numbers, ids and labels only: the JSON of ``seekbench metrics --json`` and
``seekbench agree --json``, and the CSV tables ``seekbench report`` writes. Nothing
here reproduces trace text (questions, queries, documents, answers).

Volatile fields are removed explicitly, one by one (:data:`VOLATILE_PATHS`): the
``inputs`` block echoes the command line's file paths, which differ per checkout and per
temporary directory, so each path is reduced to its file name. Nothing else in the
outputs depends on time, version or location (checked when the cases were written:
the rules judge's provenance times and latencies never reach these outputs).

Floats are compared to a relative 1e-12 (:data:`REL_TOL`): a different CPU's SIMD
path or numpy build may move the last bit of a sum; any real change is far larger.
Everything else (keys and their order, strings, ints, nulls, row order) must be equal.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent
REPO = GOLDEN_DIR.parent.parent
SHARED_DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
REL_TOL = 1e-12
ABS_TOL = 1e-15

# Every metric option away from its default, so the golden files also pin how each option
# travels from the command line to the numbers.
NON_DEFAULT_OPTIONS = ("--evidence-mapping", "sufficiency_first", "--evidence-scope", "latest",
                       "--ce-aggregate", "pooled", "--ce-prevalence", "group", "--decision-points", "step",
                       "--recovery", "evidence", "--erf-method", "km", "--time", "step", "--rqi-aggregate", "step",
                       "--n-boot", "200", "--seed", "7")

# (command, key path inside the JSON output) of each field that echoes a file path.
VOLATILE_PATHS = {
    "metrics": [("inputs", "files")],
    "agree": [("inputs", "files"), ("inputs", "reference"), ("inputs", "raters")],
}


@dataclass(frozen=True)
class Case:
    """One pinned output: ``name`` is its file under ``tests/golden/<dataset>/``."""

    dataset: str  # "sample" or "shared190"
    name: str  # file name: NAME.json, or NAME/ (a directory of CSV tables)
    command: str  # metrics, agree or report
    args: tuple[str, ...]  # with {traces}, {human}, {second}, {rules} placeholders


CASES = (
    Case("sample", "metrics", "metrics", ("--json",)),
    Case("sample", "metrics_options", "metrics", ("--json", "--by", "agent,dataset", *NON_DEFAULT_OPTIONS)),
    Case("sample", "agree", "agree", ("{traces}", "--reference", "{human}", "--rater", "{second}", "--json")),
    Case("sample", "agree_options", "agree", ("{traces}", "--reference", "{human}", "--rater", "{second}", "--json",
                                              *NON_DEFAULT_OPTIONS)),
    Case("sample", "report_tables", "report", ("--reference", "{human}", "--rater", "{second}")),
    Case("shared190", "metrics", "metrics", ("{traces}", "--json")),
    Case("shared190", "metrics_options", "metrics", ("{traces}", "--json", "--by", "agent,dataset",
                                                     *NON_DEFAULT_OPTIONS)),
    Case("shared190", "agree", "agree", ("{traces}", "--reference", "inline", "--rater", "{rules}", "--json")),
    Case("shared190", "report_tables", "report", ("{traces}", "--rater", "{rules}")),
)


def _cli(*args: str) -> str:
    """Run ``seekbench ARGS`` in-process; return stdout (a failure raises with stderr)."""
    from seekbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    if code != 0:
        raise RuntimeError(f"seekbench {' '.join(args)} exited {code}:\n{err.getvalue()}")
    return out.getvalue()


def _inputs(dataset: str, work: Path) -> dict[str, str]:
    """The files a dataset's cases read; for the shared traces, the rules judge's labels made now."""
    from seekbench._resources import sample_path

    if dataset == "sample":
        return {"traces": str(sample_path("traces")), "human": str(sample_path("human")),
                "second": str(sample_path("second"))}
    rules = work / "rules.jsonl"
    if not rules.exists():  # the rules judge is deterministic and offline: its labels are an input, not pinned
        _cli("annotate", str(SHARED_DATA), "--judge", "rules", "-o", str(rules), "--cache", str(work / "cache.sqlite"),
             "--no-progress")
    return {"traces": str(SHARED_DATA), "rules": str(rules)}


def _stable_json(command: str, text: str) -> dict:
    out = json.loads(text)
    for path in VOLATILE_PATHS[command]:
        parent = out
        for key in path[:-1]:
            parent = parent[key]
        value = parent[path[-1]]
        parent[path[-1]] = [Path(v).name for v in value] if isinstance(value, list) else Path(value).name
    return out


def run_case(case: Case, work: Path) -> dict[str, str]:
    """The case's output as {relative file name: text}, volatile fields removed."""
    files = _inputs(case.dataset, work)
    args = [a.format(**files) for a in case.args]
    if case.command == "report":
        out_dir = Path(tempfile.mkdtemp(dir=work))
        _cli("report", *args, "-o", str(out_dir))
        tables = sorted((out_dir / "tables").glob("*.csv"))
        return {f"{case.name}/{t.name}": t.read_text(encoding="utf-8") for t in tables}
    stable = _stable_json(case.command, _cli(case.command, *args))
    return {f"{case.name}.json": json.dumps(stable, indent=1, ensure_ascii=False) + "\n"}


def golden_files(case: Case) -> dict[str, str]:
    """The stored golden output of a case, in the shape :func:`run_case` returns."""
    base = GOLDEN_DIR / case.dataset
    if case.command == "report":
        tables = sorted((base / case.name).glob("*.csv"))
        return {f"{case.name}/{p.name}": p.read_text(encoding="utf-8") for p in tables}
    path = base / f"{case.name}.json"
    return {f"{case.name}.json": path.read_text(encoding="utf-8")} if path.exists() else {}


def _cell(s: str):
    try:
        return float(s)
    except ValueError:
        return s


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def differences(expected, actual, where: str = "") -> list[str]:
    """Where two JSON values differ (floats to :data:`REL_TOL`); empty when they match."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            return [f"{where}: keys {list(expected)} != {list(actual)}"]
        return [d for k in expected for d in differences(expected[k], actual[k], f"{where}.{k}")]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: length {len(expected)} != {len(actual)}"]
        pairs = enumerate(zip(expected, actual, strict=True))
        return [d for i, (e, a) in pairs for d in differences(e, a, f"{where}[{i}]")]
    return [] if _same(expected, actual) else [f"{where}: {expected!r} != {actual!r}"]


def compare_file(name: str, expected: str, actual: str) -> list[str]:
    """Differences between a stored and a fresh output file (JSON by value, CSV cell by cell)."""
    if name.endswith(".json"):
        return differences(json.loads(expected), json.loads(actual), name)
    exp = [[_cell(c) for c in row] for row in csv.reader(io.StringIO(expected))]
    act = [[_cell(c) for c in row] for row in csv.reader(io.StringIO(actual))]
    return differences(exp, act, name)
