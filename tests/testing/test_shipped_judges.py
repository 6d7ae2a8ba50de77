"""Every judge file shipped in judges/ runs end to end against the bundled mock server (real HTTP).

Before, the server understood only step-label prompts: every shipped answer judge got HTTP 400 for every
answer (issue 13). Each LLM judge here must finish with no failed request and no 4xx in the server's log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seekbench.annotate import annotate, list_judges, load_judge_config
from seekbench.llm._config import PACKAGE_JUDGES_DIR
from seekbench.answers import judge_answers
from seekbench.data import sample_traces_path
from seekbench.testing import OpenAIServer
from seekbench.traces import exact_match_score, normalize_answer, read_traces

SHIPPED = sorted(p.stem for p in Path(PACKAGE_JUDGES_DIR).glob("*.toml"))


def _traces(n: int = 6) -> list[dict]:
    return read_traces(str(sample_traces_path())).traces[:n]


def test_every_shipped_judge_file_is_listed_and_loads():
    listed = {j.name: j.kind for j in list_judges()}
    assert set(SHIPPED) <= set(listed)
    assert all(listed[name] != "invalid" for name in SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_judge_runs_against_the_bundled_server(name, tmp_path):
    cfg = load_judge_config(name)
    kind = cfg["kind"] if isinstance(cfg, dict) else cfg.kind
    traces = _traces()
    if isinstance(cfg, dict):  # offline judge (rules, learned): no server involved
        s = annotate(traces, name, tmp_path / "labels.jsonl", cache=tmp_path / "c.sqlite")
        assert s.complete and s.labeled + s.unscored == len(traces)
        return
    cfg = cfg.with_overrides(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=10.0)
    with OpenAIServer() as srv:
        if kind == "answer":
            res = judge_answers(traces, [cfg], overwrite="all", base_url=srv.base_url, cache=tmp_path / "c.sqlite")
            assert res.counts["pending"] == 0 and res.counts["unscored"] == 0
            assert res.counts["decided"] == len(traces) and res.first_error is None
            # The server says Yes when a normalised gold answer is the candidate or a run of its words
            # ("in 1863" holds "1863"), so it agrees with exact match wherever exact match says Yes.
            for t, out in zip(traces, res.traces):
                cand = f" {normalize_answer(t['final_answer'] or '')} "
                want = any(f" {normalize_answer(g)} " in cand for g in t["gold_answers"])
                assert out["correct"]["value"] == want
                assert want or not exact_match_score(t["final_answer"], t["gold_answers"])
        else:
            s = annotate(traces, cfg, tmp_path / "labels.jsonl", base_url=srv.base_url, cache=tmp_path / "c.sqlite")
            assert s.complete and s.failed == 0 and s.labeled == len(traces), s.format()
        log = [e for e in srv.requests if e["path"] != "/props"]  # llama.cpp's /props: absent here (404)
    assert log and all(e["status"] == 200 for e in log), [e["status"] for e in log]
