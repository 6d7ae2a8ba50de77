"""``seekbench annotate``, ``seekbench cache stats|clear`` and ``seekbench judge list`` end to end."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from seekbench.testing import OpenAIServer

RUNNER = Path(__file__).resolve().parents[1] / "annotate" / "_runner.py"
TRACE = {"schema_version": "1.0", "trace_id": "t1", "agent": "a", "question": "Who?", "steps": [
    {"index": 0, "kind": "reasoning", "text": "I should search."},
    {"index": 1, "kind": "search", "query": "who"},
    {"index": 2, "kind": "search_result", "documents": [{"title": "A", "text": "B is who.", "rank": 1}]},
    {"index": 3, "kind": "search", "query": "who else"},
    {"index": 4, "kind": "search_result", "documents": []},
    {"index": 5, "kind": "answer", "text": "B"}]}


class Result:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    def __repr__(self):
        return f"Result({self.code}, out={self.out[-400:]!r}, err={self.err[-400:]!r})"


@pytest.fixture
def acli(capsys):
    """The seekbench CLI with the annotate commands (registered by ``_main.py``, or added by the runner)."""
    spec = importlib.util.spec_from_file_location("seekbench_annotate_runner", RUNNER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def run(*args):
        try:
            code = mod.main([str(a) for a in args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
        cap = capsys.readouterr()
        return Result(code, cap.out, cap.err)

    return run


@pytest.fixture
def traces_file(tmp_path):
    p = tmp_path / "traces.jsonl"
    p.write_text("".join(json.dumps({**TRACE, "trace_id": f"t{i}"}) + "\n" for i in range(5)))
    return p


def test_annotate_json_summary_and_output(acli, tmp_path, traces_file):
    out, cache = tmp_path / "labels.jsonl", tmp_path / "c.sqlite"
    with OpenAIServer() as srv:
        res = acli("annotate", traces_file, "--judge", "local", "--base-url", srv.base_url, "-o", out,
                   "--cache", cache, "--limit", 3, "--concurrency", 2, "--json", "--no-progress")
        assert res.code == 0, res
        summary = json.loads(res.out)
        assert summary["n_traces"] == 3 and summary["labeled"] == 3 and summary["requests"] == 3
        assert summary["rule_labels"] == 3 and summary["complete"] is True
        res = acli("annotate", traces_file, "--judge", "local", "--base-url", srv.base_url, "-o", out,
                   "--cache", cache, "--no-progress")
        assert res.code == 0 and "already done 3" in res.err and "labeled 2" in res.err
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["trace_id"] for r in recs][::9] == ["t0", "t1", "t2", "t3", "t4"]  # 9 records per trace
    assert acli("validate", "--annotations", out).code == 0


def test_cache_stats_and_clear(acli, tmp_path, traces_file):
    cache = tmp_path / "c.sqlite"
    with OpenAIServer() as srv:
        assert acli("annotate", traces_file, "--judge", "local", "--base-url", srv.base_url, "-o",
                    tmp_path / "o.jsonl", "--cache", cache, "--no-progress").code == 0
    res = acli("cache", "stats", "--cache", cache, "--json")
    stats = json.loads(res.out)
    assert stats["entries"] == 5 and stats["judges"][0]["judge"] == "local" and stats["judges"][0]["traces"] == 5
    assert "5 completions" in acli("cache", "stats", "--cache", cache).out
    res = acli("cache", "clear", "--cache", cache)
    assert res.code == 2 and "--yes" in res.err and len(res.err.strip().splitlines()) == 1
    assert acli("cache", "clear", "--cache", cache, "--yes").out.startswith("deleted 5")
    assert json.loads(acli("cache", "stats", "--cache", cache, "--json").out)["entries"] == 0
    assert "no judge cache" in acli("cache", "stats", "--cache", tmp_path / "none.sqlite").out


def test_judge_list(acli):
    res = acli("judge", "list", "--json")
    assert res.code == 0
    rows = {r["name"]: r for r in json.loads(res.out)}
    assert {"gpt-4.1-mini", "gpt-4.1", "gpt-5", "local"} <= set(rows)
    assert rows["gpt-4.1-mini"]["published_default"] is True
    assert rows["local"]["endpoint"] == "http://127.0.0.1:8000/v1"
    text = acli("judge", "list").out
    assert "gpt-4.1-mini" in text and "published default" in text


@pytest.mark.parametrize("args, needle", [
    (["--judge", "nosuchjudge"], "unknown judge 'nosuchjudge'"),
    (["--judge", "local", "--concurrency", "0"], "--concurrency must be >= 1"),
    (["--judge", "local", "--budget-usd", "-1"], "--budget-usd must be >= 0"),
    (["--judge", "gpt-4.1-mini"], "OPENAI_API_KEY"),
])
def test_user_errors_are_one_line(acli, tmp_path, traces_file, monkeypatch, args, needle):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    res = acli("annotate", traces_file, "-o", tmp_path / "o.jsonl", "--cache", tmp_path / "c.sqlite",
               "--no-progress", *args)
    assert res.code == 2, res
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in res.err


def test_bad_judge_file_is_a_user_error(acli, tmp_path, traces_file):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\nkind = "openai"\nmodel = "m"\ntemperature = "hot"\n')
    res = acli("annotate", traces_file, "--judge", bad, "-o", tmp_path / "o.jsonl", "--no-progress")
    assert res.code == 2 and "temperature" in res.err
