"""Whatever a server answers, a judge run ends in exit 0, 2 or 3 with one clear error, never a traceback.

Each case is a real HTTP server on 127.0.0.1 (tests/llm/hostile_http.py) and a real
``seekbench`` process; the judge files are the shipped ones with test timings.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_http import HostileServer

from seekbench.data import sample_traces_path
from seekbench.llm import MAX_RETRY_AFTER_S
from seekbench.llm._config import PACKAGE_JUDGES_DIR

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-SECRET1234567890"
TIMINGS = 'max_attempts = 2\nbackoff_base_s = 0.01\nbackoff_max_s = 0.02\ntimeout_s = 2\nretry_budget_s = 30\n'


def _judge(tmp_path: Path, shipped: str) -> Path:
    """The shipped judge file with short test timings (named by its path, as a user's own file is)."""
    lines = []
    for line in (PACKAGE_JUDGES_DIR / f"{shipped}.toml").read_text(encoding="utf-8").splitlines():
        key = line.split("=")[0].strip()
        if key in ("max_attempts", "timeout_s", "max_repairs"):
            continue
        if key in ("prompt", "false_premise_prompt"):
            rel = line.split("=", 1)[1].strip().strip('"')
            line = f'{key} = "{(PACKAGE_JUDGES_DIR / rel).as_posix()}"'
        lines.append(line)
    path = tmp_path / f"{shipped}-test.toml"
    path.write_text("\n".join(lines) + "\nmax_repairs = 0\n" + TIMINGS, encoding="utf-8")
    return path


def _run(*args: str | Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SEEKBENCH_LOCAL_API_KEY": KEY}
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "seekbench", *map(str, args)], capture_output=True, text=True,
                         env=env, timeout=240)
    return out, time.monotonic() - t0


def _annotate(tmp_path: Path, srv: HostileServer, *extra: str):
    return _run("annotate", sample_traces_path(), "--judge", _judge(tmp_path, "local"), "-o", tmp_path / "o.jsonl",
                "--cache", tmp_path / "c.sqlite", "--base-url", srv.base_url, "--no-progress", "--limit", "12",
                *extra)


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("html", "not a chat completion: a text/html body"),
        ("truncated", "not a chat completion: a JSON body cut short or malformed"),
        ("bad_shape", "not a chat completion: no choices list"),
        ("not_object", "not a chat completion: a JSON list, not an object"),
        ("empty_choices", "empty answer: the answer has no choices"),
        ("null_content", "empty answer: the message content is null"),
    ],
)
def test_a_200_that_is_not_a_completion_fails_the_item_and_stops_the_run(tmp_path, mode, said):
    with HostileServer(mode) as srv:
        out, _ = _annotate(tmp_path, srv)
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr
    assert said in out.stderr and f"POST {srv.base_url}/chat/completions" in out.stderr
    # the circuit breaker: 5 items in a row failed the same way (2 attempts each), then nothing more was sent
    assert "5 requests in a row failed the same way" in out.stderr
    assert srv.requests == 10
    records = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()]
    judged = [r for r in records if r["provenance"]["kind"] == "judge"]
    assert all(r["value"] is None and said in r["unscored_reason"] for r in judged)


def test_an_answer_judge_on_an_html_proxy_page(tmp_path):
    with HostileServer("html") as srv:
        out, _ = _run("judge-answers", sample_traces_path(), "--judge", _judge(tmp_path, "answer-local"),
                      "-o", tmp_path / "o.jsonl", "--cache", tmp_path / "c.sqlite", "--base-url", srv.base_url,
                      "--no-progress", "--overwrite", "all")
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr
    assert "not a chat completion: a text/html body" in out.stderr


@pytest.mark.parametrize("mode", ["drip", "hang"])
def test_a_request_has_a_deadline_however_the_server_trickles(tmp_path, mode):
    # timeout_s = 2 bounds the whole request: a byte every 0.4 s (the client's per-read timeout never
    # fires) or no answer at all; 5 items x 2 attempts x 2 s is the most it can take before the breaker
    with HostileServer(mode) as srv:
        out, elapsed = _annotate(tmp_path, srv)
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr and "timed out" in out.stderr
    assert srv.requests == 10
    assert elapsed < 120  # a bound on a hang, not a speed claim: without the deadline this runs for hours


def test_retry_after_longer_than_the_retry_budget_gives_up_at_once(tmp_path):
    # Retry-After: 86400 is capped at MAX_RETRY_AFTER_S (120 s), which is more than retry_budget_s = 30:
    # the item fails after its first attempt instead of sleeping, and says which setting decided
    assert MAX_RETRY_AFTER_S > 30
    with HostileServer("retry_after_day") as srv:
        out, elapsed = _annotate(tmp_path, srv)
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr
    assert "retry_budget_s = 30 s" in out.stderr and "HTTP 429: slow down" in out.stderr
    assert srv.requests == 5
    assert elapsed < 120


def test_a_key_echoed_json_escaped_is_stored_nowhere(tmp_path):
    with HostileServer("echo_key_escaped") as srv:
        out, _ = _annotate(tmp_path, srv, "--limit", "2")
    assert srv.auth and all(a == f"Bearer {KEY}" for a in srv.auth)  # the key was sent
    assert "Traceback" not in out.stderr
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        dump = "\n".join(db.iterdump())
    for text in (dump, (tmp_path / "o.jsonl").read_text(encoding="utf-8"), out.stderr, out.stdout):
        assert KEY not in text and escaped not in text and "SECRET1234567890" not in text
    assert "quotes the key: ***" in dump  # stored, scrubbed: the rest of the answer is kept
