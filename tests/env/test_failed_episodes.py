"""Exit 3 keeps its promise for ``env run --agent llm:...`` (issue 24): every episode is written, an episode
whose agent ran without its model says why (``metadata.unscored_reason``), and the same command run again
against a healthy server completes (exit 0) and pays for no completion twice.

Before the fix a failed episode was written like any other, completeness and all, with nothing saying so.
"""

from __future__ import annotations

import json
import math

from seekbench.env import completeness_summary, episode_table
from seekbench.testing import OpenAIServer


def _chat(srv) -> int:
    return sum(r["path"] == "/v1/chat/completions" for r in srv.requests)


def _episodes(path) -> dict[str, dict]:
    return {t["trace_id"]: t for t in map(json.loads, path.read_text().splitlines())}


def test_failed_episodes_say_why_and_a_rerun_completes_them(cli, tmp_path, dead_url):
    out, cache = tmp_path / "e.jsonl", tmp_path / "c.sqlite"
    args = (
        "env",
        "run",
        "--corpus",
        "default",
        "--limit",
        "2",
        "--agent",
        "llm:some-model,keyphrase",
        "--steps",
        "2",
        "--cache",
        cache,
        "-o",
        out,
    )
    r = cli(*args, "--base-url", dead_url)
    assert r.code == 3, r
    got = _episodes(out)
    assert len(got) == 4
    failed = {t: e["metadata"]["unscored_reason"] for t, e in got.items() if "unscored_reason" in e["metadata"]}
    assert {got[t]["agent"] for t in failed} == {"llm:some-model"} and len(failed) == 2
    assert all(why.startswith("request_failed: cannot connect after 2 attempts") for why in failed.values())
    # read back, a failed episode measured nothing: undefined completeness, never 0 in a mean
    table = episode_table(got.values()).set_index("trace_id")
    assert table.loc[list(failed), "final_completeness"].isna().all()
    assert table.drop(index=list(failed))["final_completeness"].notna().all()
    summary = completeness_summary(got.values(), by=("agent",)).set_index("agent")
    assert math.isnan(summary.loc["llm:some-model", "completeness"])
    with OpenAIServer() as srv:
        r = cli(*args, "--base-url", srv.base_url)
        assert r.code == 0, r
        paid = _chat(srv)
        assert paid > 0
        assert not any("unscored_reason" in e["metadata"] for e in _episodes(out).values())
        r = cli(*args, "--base-url", srv.base_url)
        assert r.code == 0 and _chat(srv) == paid, r  # every completion of the finished episodes is cached
