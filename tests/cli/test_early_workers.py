"""`seekbench metrics` starts its workers' fork server before building its parser, and stops it when it ends.

The server imports pandas and the metrics on another core while the command imports the same for its
parser. It is started only when the command line asks for local workers on a large input, and no
process is left behind however the command ends: done, a usage error, a user error found before the
workers started or by them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from seekbench.cli import _scale

BIG = _scale.EARLY_BYTES


@pytest.fixture
def started(monkeypatch):
    """The calls start_workers_early makes to start the server (none started for real), on 2 cores."""
    calls: list[int] = []

    def start() -> int:
        calls.append(1)
        return 4242

    monkeypatch.setattr(_scale, "start_fork_server", start)
    monkeypatch.setattr(_scale, "default_jobs", lambda: 2)
    monkeypatch.setattr(_scale, "idle_core", lambda: True)
    return calls


@pytest.fixture
def big(tmp_path):
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as fh:  # sparse: BIG bytes on no disk
        fh.truncate(BIG)
    return str(path)


@pytest.mark.parametrize(
    ("extra", "early"),
    [
        ([], True),
        (["--json", "--n-boot", "50"], True),
        (["--jobs", "2"], True),
        (["--jobs=3", "--engine", "local"], True),
        (["--jobs", "1"], False),
        (["--jobs=1"], False),
        (["--job", "1"], False),  # abbreviated, as argparse allows
        (["--engine", "ray"], False),  # local workers only if the groups need them, started then
        (["--labels", "set.jsonl"], False),  # read whole, in the command's process
        (["--help"], False),
        (["-h"], False),
        (["--he"], False),
        (["--jobs", "x"], False),  # the command's parser says what is wrong; nothing to start
        (["--jobs"], False),
    ],
)  # fmt: skip
def test_the_server_starts_early_only_when_the_command_line_asks_for_local_workers(started, big, extra, early):
    pid = _scale.start_workers_early(["metrics", big, *extra])
    assert (pid == 4242) is early and len(started) == int(early)


def test_small_or_unnamed_inputs_and_one_core_start_nothing(started, big, tmp_path, monkeypatch):
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    # the sample (no file), a file under one JSONL fragment, a folder (counted as nothing), a missing file
    for argv in (["metrics"], ["metrics", str(small)], ["metrics", str(tmp_path)], ["metrics", "gone.jsonl"]):
        assert _scale.start_workers_early(argv) is None, argv
    monkeypatch.setattr(_scale, "default_jobs", lambda: 1)
    assert _scale.start_workers_early(["metrics", big]) is None
    assert not started
    # two files of half a fragment each are one fragment's worth together
    halves = []
    for name in ("a.jsonl", "b.jsonl"):
        with open(tmp_path / name, "wb") as fh:
            fh.truncate(BIG // 2)
        halves.append(str(tmp_path / name))
    monkeypatch.setattr(_scale, "default_jobs", lambda: 2)
    assert _scale.start_workers_early(["metrics", *halves]) == 4242


def test_busy_cores_start_nothing(started, big, monkeypatch):
    # the server's imports would take the command's own share of the CPU
    monkeypatch.setattr(_scale, "idle_core", lambda: False)
    assert _scale.start_workers_early(["metrics", big]) is None and not started


def test_the_threshold_is_one_jsonl_fragment():
    from seekbench.traces import _fragments

    assert _scale.EARLY_BYTES == _fragments.JSONL_BYTES


def test_main_stops_the_server_it_started_however_the_command_ends(monkeypatch, cli, tmp_path):
    from seekbench import _workers

    stopped: list[int] = []
    monkeypatch.setattr(_workers, "stop_fork_server", stopped.append)
    monkeypatch.setattr(_scale, "start_workers_early", lambda argv: 4242)
    assert cli("metrics", tmp_path / "gone.jsonl").code == 2  # a user error: one line, exit 2
    assert cli("metrics", "--n-boot", "x").code == 2  # a usage error (argparse exits)
    assert stopped == [4242, 4242]
    monkeypatch.setattr(_scale, "start_workers_early", lambda argv: None)  # none started: none stopped
    assert cli("metrics", tmp_path / "gone.jsonl").code == 2
    assert stopped == [4242, 4242]


# Run in a process of its own that adopts every orphan (a child subreaper), with the thresholds lowered
# so the sample's traces are several fragments and start the server early; prints the exit code,
# whether the server was started early, and the processes of this one still there after main returned
# (the resource tracker aside: multiprocessing keeps one per process, it ends with it).
HARNESS = """
import ctypes, json, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
from seekbench.cli import _scale
from seekbench.traces import _fragments
_scale.EARLY_BYTES, _fragments.JSONL_BYTES = 0, 40_000
_scale.idle_core = lambda: True  # whatever else runs on the machine
real, early = _scale.start_fork_server, []
_scale.start_fork_server = lambda: early.append(real()) or early[-1]
from seekbench.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\\0", b" ").decode()
    except (FileNotFoundError, ProcessLookupError):
        continue
    if int(fields[1]) == os.getpid() and "resource_tracker" not in cmd:
        left.append(f"{pid} {fields[0]} {cmd[:120]}")
print(json.dumps({"code": code, "early": early, "left": left}))
"""


def _harness(*argv) -> dict:
    proc = subprocess.run([sys.executable, "-c", HARNESS, *map(str, argv)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "err": proc.stderr}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from seekbench.data import sample_traces_path
    from seekbench.traces import read_traces

    sample = read_traces(sample_traces_path()).traces
    path = tmp_path_factory.mktemp("early") / "c.jsonl"
    traces = [{**t, "trace_id": f"{t['trace_id']}-{k}"} for k in range(2) for t in sample]
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))  # a few 40 kB fragments
    return path


def test_a_finished_command_leaves_no_process(corpus):
    res = _harness("metrics", corpus, "--json", "--n-boot", "20", "--jobs", "2")
    assert res["code"] == 0 and res["early"] and res["early"][0] is not None, res
    assert res["left"] == [], res


def test_a_user_error_found_by_the_workers_exits_2_with_one_line_and_leaves_no_process(corpus, tmp_path):
    lines = corpus.read_text().splitlines()
    lines[-3] = "{broken"  # in the last fragment: found by a worker, after the others were read
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    res = _harness("metrics", bad, "--json", "--n-boot", "20", "--jobs", "2")
    assert res["code"] == 2 and res["early"][0] is not None, res
    assert res["err"].strip().count("\n") == 0 and "malformed JSON" in res["err"], res
    assert res["left"] == [], res


@pytest.mark.parametrize("argv", [["metrics", "gone.jsonl", "--jobs", "2"], ["metrics", "--n-boot", "x"]])
def test_an_error_before_any_worker_leaves_no_process(corpus, argv):
    # the server is started (the corpus is named, so the command line asks for workers), then the error
    res = _harness(*argv, corpus)
    assert res["code"] == 2 and res["early"][0] is not None, res
    assert res["left"] == [], res
