"""``seekbench convert --labels-out``: the inline labels as an annotation set, or exit 2 when there are none."""

from __future__ import annotations

import json

import pytest

from seekbench._resources import sample_path


def test_release_labels_become_an_annotation_set(cli, tmp_path):
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    r = cli("convert", sample_path("release"), "--format", "seekbench", "-o", out, "--labels-out", labels)
    assert r.code == 0, r
    records = [json.loads(line) for line in labels.read_text().splitlines()]
    # Every non-null inline label, one record each (counted from the traces written beside them).
    inline = sum(
        v is not None
        for t in map(json.loads, out.read_text().splitlines())
        for st in t["steps"]
        for v in (st.get("labels") or {}).values()
    )
    assert len(records) == inline > 0
    assert f"; {inline} labels to {labels}" in r.out
    assert cli("validate", "--annotations", labels).code == 0


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_traces_without_a_label_stop_with_one_line_and_write_nothing(cli, tmp_path, suffix):
    """A Search-R1 run carries no labels: an empty annotation set would only fail two commands later
    ("annotation file is empty"), so convert says so now and points at a judge."""
    out, labels = tmp_path / f"t.{suffix}", tmp_path / "l.jsonl"
    r = cli("convert", sample_path("search_r1"), "--format", "search_r1", "-o", out, "--labels-out", labels)
    assert r.code == 2, r
    line = r.err.strip()
    assert "\n" not in line and "Traceback" not in r.err
    assert "--labels-out: none of the 6 traces carries a step label" in line
    assert f"seekbench annotate {out} --judge rules -o {labels}" in line
    assert list(tmp_path.iterdir()) == []


def test_one_labeled_trace_is_enough(cli, tmp_path):
    """Only traces with no label at all are refused: partly labeled files give the labels they have."""
    mixed, one = tmp_path / "mixed.jsonl", tmp_path / "one.jsonl"
    assert cli("convert", sample_path("search_r1"), "--format", "search_r1", "-o", mixed).code == 0
    assert cli("convert", sample_path("release"), "--format", "seekbench", "-o", one).code == 0
    with open(mixed, "a", encoding="utf-8") as fh:  # six unlabeled traces, then one labeled
        fh.write(one.read_text().splitlines()[0] + "\n")
    r = cli("convert", mixed, "-o", tmp_path / "t.jsonl", "--labels-out", tmp_path / "l.jsonl")
    assert r.code == 0 and "wrote 7 traces" in r.out, r
    records = [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert records and {rec["trace_id"] for rec in records} == {"release-looper-q01"}
