"""Full disk and write errors (issue 25, item 6): one line, exit 2 (3 for a judge run), earlier outputs intact.

Each command runs as a real process under a file size limit (``RLIMIT_FSIZE``, as ``ulimit -f``): Python
ignores SIGXFSZ, so every write past the limit fails with EFBIG, as one past a full disk fails with
ENOSPC. The output of an earlier, unlimited run must come through byte for byte; an annotation set cut
at its last line (a kill mid-write) is named by ``validate`` and ``metrics --labels`` with the fix, and
recovered by the next ``annotate``.
"""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

import pytest
from hostile_support import chat_completions, cli_command

from seekbench.data import sample_traces_path
from seekbench.testing import OpenAIServer

SAMPLE = sample_traces_path()
LIMIT = 64 * 1024  # bytes: smaller than every output below, larger than Python needs to start


def run(*args: object, cwd: Path, limit: int | None = None) -> subprocess.CompletedProcess:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        cli_command(*args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=cap if limit is not None else None,
    )


def assert_one_line(proc: subprocess.CompletedProcess, code: int, *words: str) -> str:
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("seekbench: error:")]
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(errors) == 1, proc.stderr
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def no_temp_files(root: Path) -> None:
    assert not [p.name for p in root.rglob(".*.tmp")]


@pytest.mark.parametrize("out", ["out.jsonl", "out.parquet"])
def test_convert_full_disk_keeps_the_earlier_file(tmp_path, out):
    assert run("convert", SAMPLE, "-o", out, cwd=tmp_path).returncode == 0
    before = (tmp_path / out).read_bytes()
    # the same input again, where the file no longer fits: the earlier conversion stays whole
    proc = run("convert", SAMPLE, "-o", out, cwd=tmp_path, limit=len(before) // 2)
    assert_one_line(proc, 2, out, "cannot write: File too large", "the earlier file is kept")
    assert (tmp_path / out).read_bytes() == before
    no_temp_files(tmp_path)


def test_convert_full_disk_writes_no_part_of_a_new_file(tmp_path):
    proc = run("convert", SAMPLE, "-o", "new.jsonl", cwd=tmp_path, limit=LIMIT)
    assert_one_line(proc, 2, "new.jsonl", "no part of it was written")
    assert not (tmp_path / "new.jsonl").exists()
    no_temp_files(tmp_path)


@pytest.mark.parametrize("command", ["report", "explore"])
def test_report_and_explorer_full_disk(tmp_path, command):
    assert run(command, SAMPLE, "-o", "out", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path / "out")
    proc = run(command, SAMPLE, "-o", "out", cwd=tmp_path, limit=LIMIT)
    assert_one_line(proc, 2, "cannot write: File too large", "free space")
    after = snapshot(tmp_path / "out")
    # every file is whole: the earlier run's (a file rewritten from the same input is the same but for times)
    assert after.keys() == before.keys()
    for name in (n for n in before if n.endswith((".html", ".js", "seekbench-manifest.json"))):
        assert after[name] == before[name], name
    no_temp_files(tmp_path)


def _annotation_lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


def test_annotate_rules_full_disk_is_resumable(tmp_path):
    proc = run("annotate", "--judge", "rules", SAMPLE, "-o", "labels.jsonl", "--no-progress", cwd=tmp_path, limit=LIMIT)
    assert_one_line(proc, 3, "labels.jsonl", "File too large", "a re-run resumes")
    out = tmp_path / "labels.jsonl"
    part = _annotation_lines(out)  # whole records only: the failed append was cut back
    assert 0 < len(part) and out.stat().st_size <= LIMIT
    assert run("validate", "--annotations", out, cwd=tmp_path).returncode == 0
    done = run("annotate", "--judge", "rules", SAMPLE, "-o", "labels.jsonl", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "already done" in done.stderr and len(_annotation_lines(out)) > len(part)
    assert run("validate", "--annotations", out, cwd=tmp_path).returncode == 0


def test_annotate_local_judge_full_disk(tmp_path):
    """The judge cache outgrows the limit first (its WAL): the failed commit is rolled back, exit 3, and the
    re-run pays again for no completion the cache kept."""
    with OpenAIServer() as srv:
        args = (
            "annotate",
            "--judge",
            "local",
            "--base-url",
            srv.base_url,
            SAMPLE,
            "-o",
            "labels.jsonl",
            "--cache",
            "cache.sqlite",
            "--no-progress",
        )
        proc = run(*args, cwd=tmp_path, limit=LIMIT)
        assert_one_line(proc, 3, "cache.sqlite", "cannot write", "the completions paid before are kept")
        out = tmp_path / "labels.jsonl"
        first = _annotation_lines(out) if out.exists() else []
        paid = chat_completions(srv)
        done = run(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        labeled = {r["trace_id"] for r in first}
        # each trace written before the failure is done; every other one asked once more at most
        assert chat_completions(srv) - paid <= 48 - len(labeled)
        assert run("validate", "--annotations", out, cwd=tmp_path).returncode == 0


@pytest.fixture
def torn_set(tmp_path) -> Path:
    """A whole annotation set of the sample, then its last line cut in half (a kill mid-write)."""
    good = tmp_path / "labels.jsonl"
    proc = run("annotate", "--judge", "rules", SAMPLE, "-o", good, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = good.read_bytes()
    start = data[:-1].rfind(b"\n") + 1
    good.write_bytes(data[: start + (len(data) - start) // 2])
    return good


def test_validate_names_a_torn_last_line(torn_set):
    n = torn_set.read_bytes().count(b"\n") + 1
    proc = run("validate", "--annotations", torn_set, cwd=torn_set.parent)
    assert_one_line(
        proc, 2, f"labels.jsonl:{n}:", "cut off mid-record", "re-run the annotate command", "delete the last line"
    )


def test_metrics_on_a_torn_set_is_one_line(torn_set):
    proc = run("metrics", SAMPLE, "--labels", torn_set, cwd=torn_set.parent)
    assert_one_line(proc, 2, "cut off mid-record", "re-run the annotate command")


def test_annotate_recovers_a_torn_last_line(torn_set):
    proc = run("annotate", "--judge", "rules", SAMPLE, "-o", torn_set, "--no-progress", cwd=torn_set.parent)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "cut off mid-record" in ln]
    assert len(notes) == 1 and notes[0].startswith("seekbench: note:")
    assert "labeled 1" in proc.stderr  # the torn trace is labeled again, the others kept
    assert run("validate", "--annotations", torn_set, cwd=torn_set.parent).returncode == 0
