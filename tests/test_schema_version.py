"""Records written for a newer schema_version are refused with one clear line (exit 2)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seekbench import SCHEMA_VERSION, UserInputError, __version__
from seekbench._resources import sample_path
from seekbench._schema_version import check_schema_version, parse_schema_version
from seekbench.labels import load_annotations
from seekbench.traces import read_traces


def _first_record(which: str, version: str) -> dict:
    with open(sample_path(which), encoding="utf-8") as fh:
        rec = json.loads(fh.readline())
    assert rec["schema_version"] == SCHEMA_VERSION
    return {**rec, "schema_version": version}


def _write(path, *records: dict):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_shipped_version_is_major_minor():
    assert parse_schema_version(SCHEMA_VERSION) == (1, 0)


@pytest.mark.parametrize("version", ["1.1", "2.0", "1.10"])
def test_newer_trace_is_refused_with_one_line(tmp_path, cli_subprocess, version):
    f = _write(tmp_path / "t.jsonl", _first_record("traces", version))
    r = cli_subprocess("validate", f)
    assert r.code == 2 and "Traceback" not in r.err
    lines = r.err.strip().splitlines()
    assert lines == [
        f"seekbench: error: {f}:1, trace sample-careful-planner-q01, at $.schema_version: trace "
        f"schema_version {version} is newer than this seekbench {__version__} reads (1.0); "
        "upgrade seekbench (pip install -U seekbench)"
    ]


def test_newer_annotation_is_refused(tmp_path, cli):
    f = _write(tmp_path / "a.jsonl", _first_record("human", "1.1"))
    r = cli("validate", "--annotations", f)
    assert r.code == 2 and "annotation schema_version 1.1 is newer than this seekbench" in r.err
    with pytest.raises(UserInputError, match=r"a.jsonl:1, trace .*annotation schema_version 1.1 is newer"):
        load_annotations(f)


def test_newer_trace_is_refused_by_the_api_and_skippable(tmp_path):
    good = _first_record("traces", SCHEMA_VERSION)
    newer = {**_first_record("traces", "3.0"), "trace_id": "from-the-future"}
    f = _write(tmp_path / "t.jsonl", newer, good)
    with pytest.raises(UserInputError, match="trace from-the-future.*schema_version 3.0 is newer"):
        read_traces(f)
    # The valid neighbour is not lost with --skip-invalid.
    read = read_traces(f, skip_invalid=True)
    assert [t["trace_id"] for t in read.traces] == [good["trace_id"]]


@pytest.mark.parametrize("version", ["0.9", "1", "v1.0", "", None, 1.0])
def test_older_or_malformed_versions_are_left_to_the_schema(tmp_path, version):
    check_schema_version(version, what="trace")  # not "newer": no error from the version check
    f = _write(tmp_path / "t.jsonl", _first_record("traces", version))
    with pytest.raises(UserInputError, match=r"\$\.schema_version: .*1\.0") as e:
        read_traces(f)
    assert "newer" not in str(e.value)


@given(st.integers(0, 50), st.integers(0, 50))
def test_only_strictly_newer_versions_are_refused(major, minor):
    version = f"{major}.{minor}"
    if (major, minor) > (1, 0):
        with pytest.raises(UserInputError, match="is newer than"):
            check_schema_version(version, what="trace")
    else:
        check_schema_version(version, what="trace")


def test_newer_parquet_is_refused(tmp_path, cli):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    assert cli("convert", sample_path("traces"), "-o", tmp_path / "s.parquet").code == 0
    table = pq.read_table(tmp_path / "s.parquet")
    table = table.set_column(
        table.schema.get_field_index("schema_version"), "schema_version", pa.array(["1.4"] * len(table))
    )
    pq.write_table(table, tmp_path / "newer.parquet")
    r = cli("validate", tmp_path / "newer.parquet")
    assert r.code == 2 and "trace schema_version 1.4 is newer than this seekbench" in r.err


def test_changelog_documents_both_versions_together():
    from pathlib import Path

    changelog = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"| {__version__} | {SCHEMA_VERSION} | {SCHEMA_VERSION} |" in changelog
    assert "## Unreleased" in changelog and "Keep a Changelog" in changelog


def test_version_flag_names_both(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == f"seekbench {__version__} (trace and annotation schema_version 1.0)"
