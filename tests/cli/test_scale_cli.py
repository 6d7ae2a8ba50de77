"""`seekbench metrics --jobs/--engine`: the fragment-by-fragment summary is the whole-table summary, byte for byte."""

import copy
import json
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from seekbench.data import sample_traces_path
from seekbench.metrics import MetricOptions, summarize
from seekbench.traces import build_tables, read_traces
from seekbench.traces.importers._parquet import write_parquet


def _traces(n_copies: int = 4) -> list[dict]:
    sample = read_traces(sample_traces_path()).traces
    return [dict(copy.deepcopy(t), trace_id=f"{t['trace_id']}-{k}") for k in range(n_copies) for t in sample]


def _expected(traces, **kw) -> dict:
    """The summary of the whole tables (the path every metric took before seekbench.scale), as the CLI prints it."""
    steps, table = build_tables(traces)
    return summarize(steps, table, by=("agent",), options=MetricOptions(**kw), n_boot=50, seed=0).to_dict()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_metrics_over_a_folder_of_parquet_and_jsonl_equals_the_whole_table_summary(cli, tmp_path, monkeypatch, jobs):
    from seekbench.traces import _fragments

    monkeypatch.setattr(_fragments, "JSONL_BYTES", 30_000)  # many fragments even for 192 traces
    traces = _traces()
    write_parquet(tmp_path / "a.parquet", traces[:100])
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces[100:]))
    res = cli("metrics", tmp_path, "--json", "--n-boot", "50", "--jobs", jobs, "--decision-points", "step")
    assert res.code == 0, res
    out = json.loads(res.out)
    want = _expected(traces, decision_points="step")
    assert out["groups"] == want["groups"] and out["options"] == want["options"]
    assert out["inputs"]["skipped_records"] == 0


def test_skip_invalid_reports_the_same_records_as_before(cli, tmp_path):
    traces = _traces(2)
    lines = [json.dumps(t) for t in traces]
    lines.insert(30, "{broken")
    lines.append(json.dumps(traces[7]))  # a duplicate
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = cli("metrics", path, "--json", "--n-boot", "0", "--skip-invalid", "--jobs", "2")
    assert res.code == 0, res
    assert json.loads(res.out)["inputs"]["skipped_records"] == 2
    assert f"{path}:31: malformed JSON" in res.err and f"{path}:{len(lines)}, trace {traces[7]['trace_id']}" in res.err
    res = cli("metrics", path, "--json", "--n-boot", "0", "--jobs", "2")
    assert res.code == 2 and res.err.strip().splitlines()[-1].endswith(
        "fix or remove this line, or pass --skip-invalid"
    ), res


def test_bad_jobs_and_a_missing_ray_install_are_one_line_user_errors(cli, monkeypatch):
    res = cli("metrics", "--jobs", "0")
    assert res.code == 2 and "--jobs must be >= 1, got 0" in res.err
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` does when Ray is not installed
    monkeypatch.setitem(sys.modules, "ray.data", None)
    res = cli("metrics", "--engine", "ray", "--n-boot", "0")
    assert res.code == 2, res
    assert res.err.strip() == "seekbench: error: --engine ray needs Ray Data: pip install 'seekbench[ray]'"


def test_groups_computed_in_worker_processes_print_the_same_summary_and_notes(cli, monkeypatch, tmp_path):
    from seekbench import metrics
    from seekbench.cli import _scale

    # The sample's 48 traces with no labels on the 12 of one agent: undefined numbers, and their notes.
    traces = _traces(1)
    for t in traces:
        if t["agent"] == traces[0]["agent"]:
            for s in t["steps"]:
                s.pop("labels", None)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    used = []
    real = metrics.summarize_statistics

    def spy(*args, **kw):
        used.append(kw["executor"])
        return real(*args, **kw)

    monkeypatch.setattr(metrics, "summarize_statistics", spy)  # imported by the command as it runs
    here = cli("metrics", path, "--json", "--n-boot", "60", "--jobs", "2")
    monkeypatch.setattr(_scale, "PARALLEL_WORK", 0)  # worker processes even for a small corpus
    there = cli("metrics", path, "--json", "--n-boot", "60", "--jobs", "2")
    assert used[0] is None and isinstance(used[1], ProcessPoolExecutor)
    assert here.code == there.code == 0, there
    assert there.out == here.out and there.err == here.err
    assert "undefined" in here.err
