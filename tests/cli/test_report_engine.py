"""`seekbench report --jobs/--engine`: the options `seekbench metrics` takes, with the same meaning; the
report is the same file for file whatever the jobs and the engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from seekbench.cli import _report
from seekbench.data import sample_traces_path

SECOND = sample_traces_path().with_name("sample_second_annotator.jsonl")
#: The minute the report was generated, the one thing that may differ between two runs.
_GENERATED = re.compile(rb"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


def _files(out: Path) -> dict[str, bytes]:
    """Every file of a report directory (HTML, Markdown, tables, figures) by relative path."""
    return {str(p.relative_to(out)): _GENERATED.sub(b"", p.read_bytes()) for p in sorted(out.rglob("*")) if p.is_file()}


def _report_files(cli, out: Path, *args: str) -> dict[str, bytes]:
    res = cli("report", "--n-boot", "60", "--by", "agent,dataset", *args, "-o", out)
    assert res.code == 0, res
    return _files(out)


def test_the_report_is_the_same_with_one_two_and_all_jobs(cli, tmp_path, monkeypatch):
    # Every group computed in worker processes, however small the bootstrap (the threshold only saves
    # the workers' start on small inputs): the same bytes as in this process.
    monkeypatch.setattr(_report, "PARALLEL_WORK", 1)
    one = _report_files(cli, tmp_path / "one", "--jobs", "1")
    assert {"report.html", "report.md", "explorer.html", "tables/comparison.csv"} <= set(one)
    assert _report_files(cli, tmp_path / "two", "--jobs", "2") == one
    assert _report_files(cli, tmp_path / "all") == one


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--jobs", "0"), "--jobs must be >= 1, got 0"),
        (("--engine", "ray", "--labels", str(SECOND)), "--labels is made with --engine local only"),
        (("--engine", "fast"), "argument --engine: invalid choice: 'fast' (choose from 'local', 'ray')"),
    ],
)
def test_engine_user_errors_are_one_line(cli, tmp_path, args, message):
    res = cli("report", *args, "-o", tmp_path / "r")
    assert res.code == 2 and message in res.err and "Traceback" not in res.err, res


@pytest.mark.slow  # starting Ray takes 10-30 s
def test_the_ray_engine_reduces_to_the_same_report(cli, tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        remote = _report_files(cli, tmp_path / "ray", "--engine", "ray")
    finally:
        ray.shutdown()
    assert remote == _report_files(cli, tmp_path / "local", "--engine", "local")
