"""Crash safety: SIGKILL ``seekbench annotate``, ``convert`` and ``report`` at random points, 20 in a row each.

Kill delays are drawn (seeded) uniformly from the duration of an
uninterrupted run measured first, so they land anywhere in the work. After
every kill nothing may be truncated or corrupt:

- ``convert`` and ``report`` replace whole files atomically: each output file
  is byte for byte either the previous run's version or the new one (the
  directory starts with an older report / conversion in place), never a mix
  or a prefix; the next run is the re-run, and the last one completes and
  leaves exactly the uninterrupted output.
- ``annotate`` appends one trace's block at a time with fsync: every complete
  line is a valid record, a torn tail is repaired on resume, the SQLite judge
  cache passes ``integrity_check`` with every stored completion whole, and
  the re-run (itself killed half the time) ends with the uninterrupted
  run's records, having paid again only for answers in flight at a kill.
- The embedding cache keeps whole batches (all of a batch's rows or none).

The killed processes are forked from a warm interpreter (``_zygote.py``) so
that kill points fall in the work rather than in imports: each is a full
process running ``seekbench.cli.main``. One more test kills a fresh
``python`` process running ``convert`` (``tests/annotate/test_crash_resume.py``
does the same for ``annotate``).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_support import cli_command, labeled_traces, write_jsonl

from seekbench.annotate._output import AnnotationOutput
from seekbench.testing import OpenAIServer

pytestmark = pytest.mark.slow
KILLS = 20
ZYGOTE = Path(__file__).resolve().parent / "_zygote.py"


class Zygote:
    """Client of ``_zygote.py``: run a command in a forked child, optionally SIGKILLed after a delay."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(ZYGOTE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        assert json.loads(self.proc.stdout.readline()) == {"ready": True}

    def run(self, cwd: Path, *, argv: list | None = None, call: str | None = None, args: list | None = None,
            kill_after: float | None = None) -> dict:
        req = {"cwd": str(cwd), "out": str(cwd / ".stdout"), "err": str(cwd / ".stderr"), "kill_after": kill_after}
        req.update({"argv": [str(a) for a in argv]} if argv is not None else {"call": call, "args": args or []})
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        res = json.loads(self.proc.stdout.readline())
        err = cwd / ".stderr"  # absent when the kill came before the child opened it
        res["stderr"] = err.read_text(encoding="utf-8", errors="replace") if err.exists() else ""
        return res

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    yield z
    z.close()


_TIME = re.compile(rb'"time": "[0-9T:-]+Z"|generated \d{4}-\d\d-\d\d \d\d:\d\d UTC')


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every visible output file under ``root`` (temporary ``.name.*.tmp`` files left by a kill excluded),
    with label and report timestamps blanked (the only bytes that differ between two equal runs)."""
    return {str(p.relative_to(root)): _TIME.sub(b"<time>", p.read_bytes()) for p in sorted(root.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)}


def _assert_old_or_new(now: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes]) -> None:
    assert set(now) <= set(old) | set(new), set(now) - set(old) - set(new)
    for name, data in now.items():
        assert data in (old.get(name), new.get(name)), f"{name} is neither the old nor the new version"


def _kill_chain(zygote, work: Path, argv: list, old: dict, seed: int) -> int:
    """Time an uninterrupted run of ``argv`` in ``work`` (its output is the new version), put the old output
    back, then make KILLS runs each killed at a random point, and one that completes."""
    rng = random.Random(seed)
    measure = zygote.run(work, argv=argv)
    assert measure["status"] == 0, measure["stderr"]
    duration, new = measure["elapsed"], _snapshot(work / "out")
    _restore(work, old)
    killed = 0
    for _ in range(KILLS):
        res = zygote.run(work, argv=argv, kill_after=rng.uniform(0.0, 0.9 * duration))
        killed += res["killed"]
        assert res["killed"] or res["status"] == 0, res["stderr"]
        _assert_old_or_new(_snapshot(work / "out"), old, new)
    final = zygote.run(work, argv=argv)
    assert final["status"] == 0, final["stderr"]
    assert _snapshot(work / "out") == new
    return killed


def _restore(work: Path, files: dict[str, bytes]) -> None:
    shutil.rmtree(work / "out", ignore_errors=True)
    (work / "out").mkdir()  # -o needs an existing parent folder
    for name, data in files.items():
        (work / "out" / name).parent.mkdir(parents=True, exist_ok=True)
        (work / "out" / name).write_bytes(data)


def _outputs(zygote, tmp: Path, argv_for, traces: list[dict]) -> dict[str, bytes]:
    """The outputs of an uninterrupted run on ``traces``."""
    tmp.mkdir()
    (tmp / "out").mkdir()  # -o needs an existing parent folder
    write_jsonl(tmp / "in.jsonl", traces)
    res = zygote.run(tmp, argv=argv_for("in.jsonl"))
    assert res["status"] == 0, res["stderr"]
    return _snapshot(tmp / "out")


def test_convert_survives_20_random_kills(zygote, tmp_path):
    traces = labeled_traces(1000)
    argv = lambda f: ["convert", f, "-o", "out/traces.jsonl", "--labels-out", "out/labels.jsonl"]  # noqa: E731
    old = _outputs(zygote, tmp_path / "old", argv, traces[:50])
    work = tmp_path / "work"
    work.mkdir()
    (work / "out").mkdir()
    write_jsonl(work / "in.jsonl", traces)
    assert _kill_chain(zygote, work, argv("in.jsonl"), old, seed=7) >= KILLS // 4


def test_report_survives_20_random_kills(zygote, tmp_path):
    traces = labeled_traces(16)
    argv = lambda f: ["report", f, "-o", "out", "--n-boot", "10"]  # noqa: E731
    old = _outputs(zygote, tmp_path / "old", argv, traces[:8])
    assert {"report.html", "report.md"} <= set(old) and any(n.endswith(".png") for n in old)
    work = tmp_path / "work"
    work.mkdir()
    write_jsonl(work / "in.jsonl", traces)
    assert _kill_chain(zygote, work, argv("in.jsonl"), old, seed=11) >= KILLS // 4


# -- annotate ---------------------------------------------------------------------------------------------------

def _comparable(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out.append({**r, "provenance": {k: v for k, v in r["provenance"].items() if k not in ("time", "latency_s")}})
    return out


def _check_after_kill(work: Path) -> None:
    """The output holds whole records (a torn tail is repairable); the cache is a sound SQLite file."""
    out = work / "o.jsonl"
    if out.exists():
        data = out.read_bytes()
        for line in data[: data.rfind(b"\n") + 1].splitlines():
            rec = json.loads(line)
            assert rec["rater"] == "local" and "provenance" in rec
        copy = work / "check.jsonl"
        copy.write_bytes(data)
        AnnotationOutput(copy, rater="local").recover()  # cuts the torn tail, raises on anything else
        copy.unlink()
    cache = work / "c.sqlite"
    if cache.exists():
        with sqlite3.connect(cache) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            # killed before the schema was made: an empty file
            assert tables in (set(), {"completions", "endpoint_formats"})
            rows = db.execute("SELECT raw, labels FROM completions") if tables else []
            for raw, labels in rows:
                json.loads(raw)
                assert labels is None or isinstance(json.loads(labels), dict)


def test_annotate_survives_20_random_kills(zygote, tmp_path):
    traces = labeled_traces(24)
    n, concurrency = len(traces), 4
    write_jsonl(tmp_path / "in.jsonl", traces)
    rng = random.Random(5)
    with OpenAIServer(latency_ms=3) as srv:
        def argv(work):
            return ["annotate", tmp_path / "in.jsonl", "--judge", "local", "--base-url", srv.base_url, "-o",
                    work / "o.jsonl", "--cache", work / "c.sqlite", "--concurrency", concurrency, "--no-progress"]

        ref = tmp_path / "ref"
        ref.mkdir()
        measure = zygote.run(ref, argv=argv(ref))
        assert measure["status"] == 0, measure["stderr"]
        reference, duration = _comparable(ref / "o.jsonl"), measure["elapsed"]
        killed = 0
        for k in range(KILLS):
            work = tmp_path / f"k{k}"
            work.mkdir()
            before = len(srv.requests)
            kills = 0
            for attempt in range(3):  # the first run, and the re-run killed too half of the time
                last = attempt == 2 or (attempt == 1 and rng.random() < 0.5)
                res = zygote.run(work, argv=argv(work), kill_after=None if last else rng.uniform(0, 0.9 * duration))
                kills += res["killed"]
                if last:
                    assert res["status"] == 0, res["stderr"]
                    break
                assert res["killed"] or res["status"] == 0, res["stderr"]
                _check_after_kill(work)
            killed += kills
            paid = sum(r["path"] == "/v1/chat/completions" and r["status"] == 200 for r in srv.requests[before:])
            assert n <= paid <= n + kills * concurrency  # paid twice only for answers in flight at a kill
            assert _comparable(work / "o.jsonl") == reference
    assert killed >= KILLS // 4


def test_embedding_cache_keeps_whole_batches(zygote, tmp_path):
    np = pytest.importorskip("numpy")
    pytest.importorskip("seekbench.env._embed_cache")
    from seekbench.env._embed_cache import EmbeddingCache

    call, args = "hostile_support:embed_writer", [str(tmp_path / "e.sqlite"), 60, 50, 64]
    rng = random.Random(3)
    measure = zygote.run(tmp_path, call=call, args=[str(tmp_path / "m.sqlite"), *args[1:]])
    assert measure["status"] == 0, measure["stderr"]
    for _ in range(KILLS):
        res = zygote.run(tmp_path, call=call, args=args, kill_after=rng.uniform(0, measure["elapsed"]))
        assert res["killed"] or res["status"] == 0, res["stderr"]
        with sqlite3.connect(tmp_path / "e.sqlite") as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        with EmbeddingCache(tmp_path / "e.sqlite") as cache:
            for b in range(60):
                got = cache.get_many("model-x", [f"batch {b} text {i}" for i in range(50)])
                assert len(got) in (0, 50), f"batch {b} is partly stored"
                assert all(np.all(v == b) for v in got.values())
    assert zygote.run(tmp_path, call=call, args=args)["status"] == 0
    with EmbeddingCache(tmp_path / "e.sqlite") as cache:
        assert cache.count() == 60 * 50


# -- the same, from a fresh interpreter ------------------------------------------------------------------------

def test_a_fresh_cli_process_killed_mid_write_leaves_old_or_new_files(tmp_path):
    write_jsonl(tmp_path / "in.jsonl", labeled_traces(1000))
    args = ["convert", "in.jsonl", "-o", "out/traces.jsonl"]
    (tmp_path / "out").mkdir()
    start = time.monotonic()
    assert subprocess.run(cli_command(*args), cwd=tmp_path, capture_output=True, timeout=300).returncode == 0
    duration = time.monotonic() - start
    new = _snapshot(tmp_path / "out")
    startup = 0.6 * duration  # imports come first
    proc = subprocess.Popen(cli_command(*args), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=random.Random(1).uniform(startup, duration))
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL, to the process this test started
        proc.wait(timeout=30)
    _assert_old_or_new(_snapshot(tmp_path / "out"), new, new)
    rerun = subprocess.run(cli_command(*args), cwd=tmp_path, capture_output=True, timeout=300)
    assert rerun.returncode == 0 and _snapshot(tmp_path / "out") == new
