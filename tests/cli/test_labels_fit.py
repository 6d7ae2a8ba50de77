"""Labels that do not fit the traces (`--labels SET`): none fits -> exit 2 naming both files and the counts;
some fit -> one warning line first, and the report header says how many steps are labeled.

Issue 13: `metrics --labels SET` with a set made for other traces exited 0 with every metric n/a.
"""

from __future__ import annotations

import json

import pytest

from seekbench.data import sample_traces_path

SAMPLE = str(sample_traces_path())


@pytest.fixture
def label_set(cli, tmp_path):
    """The sample's inline labels exported as an annotation set: (path, its records)."""
    path = tmp_path / "labels.jsonl"
    r = cli("convert", SAMPLE, "-o", tmp_path / "c.jsonl", "--labels-out", path)
    assert r.code == 0, r
    return path, [json.loads(x) for x in path.read_text().splitlines()]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("command", ["metrics", "report"])
def test_labels_for_other_traces_are_a_user_error(cli, tmp_path, label_set, command):
    _, recs = label_set
    other = _write(tmp_path / "other.jsonl", [{**r, "trace_id": "elsewhere-" + r["trace_id"]} for r in recs])
    n_steps = len({(r["trace_id"], r["step"]) for r in recs})
    n_traces = len({r["trace_id"] for r in recs})
    args = ("-o", tmp_path / "rep") if command == "report" else ()
    r = cli(command, SAMPLE, "--labels", other, *args)
    assert r.code == 2, r
    assert r.err.count("\n") == 1 and str(other) in r.err and SAMPLE in r.err
    assert f"they label {n_steps} steps of {n_traces} traces" in r.err and "the labels fit no trace" in r.err


def test_labels_partly_for_other_traces_warn_first(cli, tmp_path, label_set):
    _, recs = label_set
    ids = sorted({r["trace_id"] for r in recs})
    moved = set(ids[: len(ids) // 4])
    part = _write(tmp_path / "part.jsonl", [{**r, "trace_id": "x-" + r["trace_id"]} if r["trace_id"] in moved else r
                                            for r in recs])
    bad = len({(r["trace_id"], r["step"]) for r in recs if r["trace_id"] in moved})
    total = len({(r["trace_id"], r["step"]) for r in recs})
    r = cli("metrics", SAMPLE, "--labels", part)
    assert r.code == 0, r
    first = r.err.splitlines()[0]
    assert first.startswith("seekbench: warning: ") and str(part) in first
    assert f"{bad} of {total} labeled steps ({len(moved)} of {len(ids)} traces) are not in {SAMPLE}" in first
    assert sum("warning" in ln for ln in r.err.splitlines()) == 1


def test_report_header_says_how_many_steps_are_labeled(cli, tmp_path, label_set):
    _, recs = label_set
    ids = sorted({r["trace_id"] for r in recs})
    keep = set(ids[: len(ids) // 2])
    half = _write(tmp_path / "half.jsonl", [r for r in recs if r["trace_id"] in keep])
    out = tmp_path / "rep"
    r = cli("report", SAMPLE, "--labels", half, "-o", out, "--n-boot", "20")
    assert r.code == 0, r
    labeled = len({(r["trace_id"], r["step"]) for r in recs if r["trace_id"] in keep and r["value"] is not None})
    md = (out / "report.md").read_text()
    header = md.split("\n\n")[1]
    assert f"{labeled} of " in header and "labelable steps labeled" in header, header
    assert "labelable steps labeled" in (out / "report.html").read_text()
