"""Every command that writes: unwritable outputs are one line and exit 2; files honour the umask; report folders
keep a manifest and clean only their own stale files.

Issue 13: `convert FILE -o EXISTING_DIR` and `report FILE -o EXISTING_FILE` ended in tracebacks; every file
was mode 0600 whatever the umask; reusing a report folder kept stale tables from the previous run.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from seekbench._io import write_text
from seekbench.data import sample_traces_path
from seekbench.report import MANIFEST, record_written

SAMPLE = str(sample_traces_path())

#: (command line with OUT where the output goes, whether OUT is a folder).
WRITERS = [
    (("convert", SAMPLE, "-o", "OUT"), False),
    (("convert", SAMPLE, "-o", "{ok}/c.jsonl", "--labels-out", "OUT"), False),
    (("annotate", SAMPLE, "--judge", "rules", "-o", "OUT"), False),
    (("judge-answers", SAMPLE, "-o", "OUT"), False),
    (("judge-answers", SAMPLE, "-o", "{ok}/j.jsonl", "--decisions", "OUT"), False),
    (("judge", "train", "--human", SAMPLE, "-o", "OUT"), False),
    (("env", "build-corpus", "--default", "-o", "OUT"), False),
    (("env", "run", "--corpus", "default", "--agent", "keyphrase", "-o", "OUT"), False),
    (("env", "synth-beliefs", "{ok}/corpus.jsonl", "-o", "OUT"), False),
    (("env", "synth-beliefs", "{ok}/corpus.jsonl", "-o", "{ok}/b.jsonl", "--estimator", "mean",
      "--estimates", "OUT"), False),
    (("coverage", SAMPLE, "--skeleton", "{ok}/s.jsonl", "--per-trace", "OUT"), False),
    (("report", SAMPLE, "-o", "OUT"), True),
    (("conformal", "{ok}/e.jsonl", "-o", "OUT"), True),
    (("agree", SAMPLE, "--reference", "inline", "--rater", "{ok}/r.jsonl", "-o", "OUT"), True),
    (("samples", "-o", "OUT"), True),
]


def _cases(tmp_path, directory: bool) -> dict[str, str]:
    """The four unwritable places, made for real in tmp_path."""
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a-file").write_text("x")
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    return {
        # an existing folder where a file is expected, an existing file where a folder is expected
        "wrong kind": str(tmp_path / ("a-file" if directory else "a-dir")),
        "file as parent": str(tmp_path / "a-file" / "out"),
        "missing parent": str(tmp_path / "no" / "such" / "out"),
        "read-only": str(ro / "out"),
    }


@pytest.mark.parametrize("argv,directory", WRITERS, ids=[" ".join(a[:2]) + f" {a[-2]}" for a, _ in WRITERS])
def test_unwritable_output_is_one_line_and_exit_2(cli, tmp_path, argv, directory):
    ok = tmp_path / "ok"
    ok.mkdir()
    try:
        for what, place in _cases(tmp_path, directory).items():
            args = [place if a == "OUT" else a.replace("{ok}", str(ok)) for a in argv]
            r = cli(*args)
            assert r.code == 2, (what, r)
            assert r.err.count("\n") == 1 and r.err.startswith("seekbench: error: "), (what, r)
            assert "Traceback" not in r.err and place.split("/")[-1] in r.err, (what, r)
    finally:
        (tmp_path / "read-only").chmod(0o755)


@pytest.mark.parametrize("mask,expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_are_created_with_the_umask(tmp_path, mask, expected):
    old = os.umask(mask)
    try:
        write_text(tmp_path / "f.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]  # atomic: no temporary file left behind


def test_an_existing_file_keeps_its_mode(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")
    p.chmod(0o640)
    write_text(p, "new")
    assert p.read_text() == "new" and stat.S_IMODE(p.stat().st_mode) == 0o640


def test_cli_output_honours_the_umask(cli, tmp_path):
    old = os.umask(0o022)
    try:
        r = cli("convert", SAMPLE, "-o", tmp_path / "c.jsonl")
    finally:
        os.umask(old)
    assert r.code == 0, r
    assert stat.S_IMODE((tmp_path / "c.jsonl").stat().st_mode) == 0o644


def test_report_folder_manifest_removes_only_its_own_stale_files(cli, tmp_path):
    out = tmp_path / "rep"
    r = cli("report", SAMPLE, "-o", out, "--n-boot", "20")
    assert r.code == 0, r
    manifest = json.loads((out / MANIFEST).read_text())
    assert "report.html" in manifest["report"] and "tables/metrics.csv" in manifest["report"]
    assert all((out / f).is_file() for f in manifest["report"])
    # A previous run wrote tables/old.csv (listed); the user keeps notes beside the report; another
    # writer (conformal) owns its own entry.
    (out / "tables" / "old.csv").write_text("stale")
    (out / "tables" / "mine.csv").write_text("the user's")
    (out / "notes.txt").write_text("the user's")
    (out / "conformal.html").write_text("conformal's")
    manifest["report"].append("tables/old.csv")
    manifest["conformal"] = ["conformal.html"]
    (out / MANIFEST).write_text(json.dumps(manifest))
    r = cli("report", SAMPLE, "-o", out, "--n-boot", "20")
    assert r.code == 0, r
    assert not (out / "tables" / "old.csv").exists()
    assert (out / "tables" / "mine.csv").exists() and (out / "notes.txt").exists()
    assert (out / "conformal.html").exists()
    assert json.loads((out / MANIFEST).read_text())["conformal"] == ["conformal.html"]


def test_manifest_never_removes_outside_the_folder(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    outside = tmp_path / "precious.txt"
    outside.write_text("x")
    (out / MANIFEST).write_text(json.dumps({"report": ["../precious.txt", "/etc/hostname", 7]}))
    assert record_written(out, "report", []) == []
    assert outside.exists()
