"""Exit 3 keeps its promise for ``judge-answers`` (issue 24): the output holds every decision made and, for an
answer whose request failed or was not sent, an undecided ``correct`` that says why; the same command run
again against a healthy server decides those and pays for nothing twice.

Before the fix a pending answer was simply not written: its trace came out as it went in, with no reason.
"""

from __future__ import annotations

import json

from answers_support import candidate_of, make_trace

from seekbench.testing import OpenAIServer, PolicyError


def _chat(srv) -> int:
    return sum(r["path"] == "/v1/chat/completions" for r in srv.requests)


def _read(path) -> dict[str, dict]:
    return {t["trace_id"]: t for t in map(json.loads, path.read_text().splitlines())}


def _traces(tmp_path):
    ts = [make_trace(f"t{i}", f"ans{i}") for i in range(1, 5)]
    # a human decision: kept when its re-judgment fails (--overwrite all), never turned into "undecided"
    ts[3]["correct"] = {"value": True, "source": "human"}
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in ts))
    return path


def test_failed_answers_are_written_pending_with_the_reason_and_a_rerun_decides_only_them(cli, tmp_path):
    state = {"healthy": False}

    def policy(request):
        if not state["healthy"] and candidate_of(request) in ("ans2", "ans4"):
            raise PolicyError("the test refuses this answer", status=400)
        return "Yes"

    data, out, cache = _traces(tmp_path), tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    args = (
        "judge-answers",
        data,
        "--judge",
        "answer-local",
        "--overwrite",
        "all",
        "-o",
        out,
        "--cache",
        cache,
        "--no-progress",
    )
    with OpenAIServer(policy=policy) as srv:
        r = cli(*args, "--base-url", srv.base_url)
        assert r.code == 3, r
        assert cli("validate", out).code == 0
        got = _read(out)
        assert got["t1"]["correct"]["value"] is True and got["t3"]["correct"]["value"] is True
        failed = got["t2"]["correct"]
        assert failed["value"] is None and failed["detail"]["pending"] is True
        assert "request_failed: HTTP 400: the test refuses this answer" in failed["detail"]["unscored_reason"]
        assert got["t4"]["correct"] == {"value": True, "source": "human"}  # the old decision stands
        paid = _chat(srv)
        state["healthy"] = True
        r = cli(*args, "--base-url", srv.base_url)
        assert r.code == 0, r
        assert _chat(srv) - paid == 2  # t2 and t4; t1 and t3 come from the cache
    got = _read(out)
    assert all(t["correct"]["value"] is True and t["correct"]["source"] == "judge" for t in got.values())
    assert "pending" not in got["t2"]["correct"]["detail"]


def test_a_dead_endpoint_writes_every_undecided_answer_with_the_reason(cli, tmp_path, dead_url):
    data, out, cache = _traces(tmp_path), tmp_path / "o.jsonl", tmp_path / "c.sqlite"
    args = ("judge-answers", data, "--judge", "answer-local", "-o", out, "--cache", cache, "--no-progress")
    r = cli(*args, "--base-url", dead_url)
    assert r.code == 3, r
    got = _read(out)
    for tid in ("t1", "t2", "t3"):
        reason = got[tid]["correct"]["detail"]["unscored_reason"]
        assert got[tid]["correct"]["value"] is None and got[tid]["correct"]["detail"]["pending"] is True
        assert "cannot connect after 2 attempts" in reason or "not sent: the endpoint cannot be reached" in reason
    assert got["t4"]["correct"] == {"value": True, "source": "human"}  # --overwrite machine keeps it
    with OpenAIServer(policy=lambda request: "No") as srv:
        r = cli(*args, "--base-url", srv.base_url)
        assert r.code == 0 and _chat(srv) == 3, r
    assert [_read(out)[t]["correct"]["value"] for t in ("t1", "t2", "t3")] == [False, False, False]
