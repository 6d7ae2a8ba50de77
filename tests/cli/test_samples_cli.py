"""``seekbench samples``: the shipped sample files, under the docs' names, and never over a user's file."""

from __future__ import annotations

from seekbench._resources import sample_path
from seekbench.cli._samples import FILES


def test_writes_the_shipped_files_under_the_docs_names(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("samples")
    assert r.code == 0, r
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.jsonl", "run.jsonl", "traces.jsonl"]
    for name, (which, _) in FILES.items():
        assert (tmp_path / name).read_bytes() == sample_path(which).read_bytes()
        assert f"wrote {name}: " in r.out


def test_the_files_are_what_the_quickstart_says(cli, tmp_path):
    assert cli("samples", "-o", tmp_path).code == 0
    r = cli("validate", tmp_path / "run.jsonl", "--format", "search_r1")
    assert r.code == 0 and "6 valid traces" in r.out, r
    r = cli("convert", tmp_path / "release.jsonl", "-o", tmp_path / "c.jsonl", "--labels-out", tmp_path / "l.jsonl")
    assert r.code == 0 and "6 traces" in r.out and " 0 labels" not in r.out, r


def test_a_new_folder_is_made_in_an_existing_one(cli, tmp_path):
    assert cli("samples", "-o", tmp_path / "try").code == 0
    assert (tmp_path / "try" / "traces.jsonl").is_file()


def test_never_replaces_a_file_and_writes_nothing_then(cli, tmp_path):
    (tmp_path / "run.jsonl").write_text("my own run\n")
    r = cli("samples", "-o", tmp_path)
    assert r.code == 2, r
    assert "run.jsonl already there; nothing was written" in r.err and "\n" not in r.err.strip()
    assert (tmp_path / "run.jsonl").read_text() == "my own run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]


def test_a_missing_parent_folder_is_a_user_error(cli, tmp_path):
    r = cli("samples", "-o", tmp_path / "no" / "such")
    assert r.code == 2 and "does not exist" in r.err, r
