"""Exit 3 keeps its promise for ``annotate`` (issue 24): whatever was labeled, and an unscored record with its
reason for what was not, is in a valid output; a re-run against a healthy server asks only for what is missing.

Before the fix a run stopped by an unreachable endpoint or by the budget wrote nothing for the traces it had
not started (no output file at all when it stopped at the first trace). Each test runs the real annotator
against the real bundled server (or a closed port) and counts the server's requests.
"""

from __future__ import annotations

from annotate_support import make_trace, read_jsonl, write_traces

from seekbench.annotate import annotate
from seekbench.testing import OpenAIServer, PolicyError, default_policy, extract_trace_id


def _chat(srv) -> int:
    return sum(r["path"] == "/v1/chat/completions" for r in srv.requests)


def _by_trace(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["trace_id"], []).append(r)
    return out


def _reasons(rows: list[dict]) -> set[str]:
    """The kinds of ``unscored_reason`` (the prefix before the first colon) in some records."""
    return {r["unscored_reason"].split(":", 1)[0] for r in rows if r["value"] is None}


def _valid(cli, path) -> None:
    r = cli("validate", "--annotations", path)
    assert r.code == 0, r


def test_dead_endpoint_writes_every_trace_unscored_then_a_rerun_labels_them(cli, tmp_path, dead_url):
    traces = [make_trace(f"t{n}", n) for n in (4, 7, 10)]
    data, out, cache = write_traces(tmp_path / "t.jsonl", traces), tmp_path / "l.jsonl", tmp_path / "c.sqlite"
    r = cli("annotate", data, "--judge", "local", "--base-url", dead_url, "-o", out, "--cache", cache, "--no-progress")
    assert r.code == 3, r
    _valid(cli, out)
    rows = _by_trace(read_jsonl(out))
    assert sorted(rows) == ["t10", "t4", "t7"]  # every trace asked for is in the output
    for tid, recs in rows.items():
        unscored = [x for x in recs if x["value"] is None]
        assert unscored, tid
        # the reason is the endpoint's, in full; the rule labels (InitialQuery) are kept beside it
        assert all(
            x["unscored_reason"].startswith("not_sent: the run stopped: cannot connect after 2 attempts")
            for x in unscored
        )
        assert dead_url in unscored[0]["unscored_reason"]
        assert any(x["provenance"]["kind"] == "rule" and x["value"] is not None for x in recs)
    with OpenAIServer() as srv:
        r = cli(
            "annotate",
            data,
            "--judge",
            "local",
            "--base-url",
            srv.base_url,
            "-o",
            out,
            "--cache",
            cache,
            "--no-progress",
            "--json",
        )
        assert r.code == 0, r
        assert _chat(srv) == 3  # one request per trace: not_sent records are not "done"
    labels = read_jsonl(out)
    assert all(x["value"] is not None for x in labels)
    assert sorted(_by_trace(labels)) == ["t10", "t4", "t7"]  # the unscored blocks were replaced, not kept
    _valid(cli, out)


def test_failed_requests_are_recorded_and_only_they_are_asked_again(judge_cfg, small_traces, tmp_path):
    broken = {"t7", "t16"}
    healthy = {"on": False}

    def policy(request):
        if not healthy["on"] and extract_trace_id(request) in broken:
            raise PolicyError("the test refuses this trace", status=400)
        return default_policy(request)

    out, cache = tmp_path / "l.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer(policy=policy) as srv:
        s = annotate(small_traces, judge_cfg, out, cache=cache, base_url=srv.base_url, concurrency=2)
        assert not s.complete and s.failed == 2 and s.labeled == 4
        rows = _by_trace(read_jsonl(out))
        assert len(rows) == len(small_traces)
        for tid in broken:
            assert _reasons(rows[tid]) == {"request_failed"}
            assert "HTTP 400: the test refuses this trace" in next(
                x["unscored_reason"] for x in rows[tid] if x["value"] is None
            )
        assert all(x["value"] is not None for t in rows if t not in broken for x in rows[t])
        healthy["on"] = True
        before = _chat(srv)
        s = annotate(small_traces, judge_cfg, out, cache=cache, base_url=srv.base_url, concurrency=2)
        assert s.complete and s.already_done == 4 and s.labeled == 2
        assert _chat(srv) - before == 2  # the two failed traces, nothing else
    assert all(x["value"] is not None for x in read_jsonl(out))


def test_an_always_failing_server_leaves_every_trace_unscored_with_the_status(judge_cfg, small_traces, tmp_path):
    out, cache = tmp_path / "l.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer(faults="500:1") as srv:
        s = annotate(small_traces[:3], judge_cfg, out, cache=cache, base_url=srv.base_url)
    assert not s.complete and s.failed == 3 and "HTTP 500" in (s.first_error or "")
    rows = _by_trace(read_jsonl(out))
    assert len(rows) == 3 and all(_reasons(recs) == {"request_failed"} for recs in rows.values())
    with OpenAIServer() as srv:
        s = annotate(small_traces[:3], judge_cfg, out, cache=cache, base_url=srv.base_url)
        assert s.complete and s.labeled == 3 and _chat(srv) == 3


def test_invalid_answers_stay_unscored_and_are_not_asked_again(judge_cfg, small_traces, tmp_path):
    """An answer still invalid after the repairs is final (the cache would give the same answer): the
    record says so, the run is complete (exit 0), and a re-run sends nothing."""
    out, cache = tmp_path / "l.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer(faults="malformed:1") as srv:
        s = annotate(small_traces[:2], judge_cfg, out, cache=cache, base_url=srv.base_url)
        assert s.complete and s.unscored == 2
        assert all(_reasons(recs) == {"invalid_output"} for recs in _by_trace(read_jsonl(out)).values())
        before = _chat(srv)
        s = annotate(small_traces[:2], judge_cfg, out, cache=cache, base_url=srv.base_url)
        assert s.already_done == 2 and _chat(srv) == before


def test_a_run_stopped_by_the_budget_records_the_rest_and_resumes_without_paying_twice(
    judge_cfg, small_traces, tmp_path, cli
):
    # $1000 per million tokens each way: a request's worst-case bound is about $1.2-5, its cost $1.2-1.8, so a
    # $10 budget pays for the first traces (concurrency 1, in input order) and stops before the others.
    cfg = judge_cfg.with_overrides(price_input_per_mtok=1000.0, price_output_per_mtok=1000.0)
    out, cache = tmp_path / "l.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer() as srv:
        s = annotate(small_traces, cfg, out, cache=cache, base_url=srv.base_url, budget_usd=10.0, concurrency=1)
        paid = _chat(srv)
        assert s.stopped_by_budget and not s.complete and s.labeled >= 1 and s.not_started >= 1
        assert s.labeled + s.not_started == len(small_traces) and paid == s.labeled
        rows = _by_trace(read_jsonl(out))
        assert len(rows) == len(small_traces)
        stopped = [t for t, recs in rows.items() if _reasons(recs)]
        assert len(stopped) == s.not_started
        assert all(_reasons(rows[t]) == {"not_sent"} for t in stopped)
        assert "the budget of $10.0000 would be exceeded" in rows[stopped[0]][-1]["unscored_reason"]
        _valid(cli, out)
        s = annotate(small_traces, cfg, out, cache=cache, base_url=srv.base_url, concurrency=1)
        assert s.complete and s.already_done == len(small_traces) - len(stopped)
        assert _chat(srv) - paid == len(stopped)  # only the traces that were not sent
    assert all(x["value"] is not None for x in read_jsonl(out))
