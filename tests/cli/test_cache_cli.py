"""``seekbench cache clear --judge``: the count it refuses to delete is the count it deletes."""

from __future__ import annotations

from seekbench.llm import CachedCompletion, JudgeCache


def _entry(key: str, judge: str, prompt_version: str) -> CachedCompletion:
    return CachedCompletion(
        key=key,
        judge=judge,
        model="m",
        prompt_version=prompt_version,
        trace_id="t",
        created="2025-01-01T00:00:00Z",
        via_batch=False,
        raw="{}",
        content="{}",
        finish_reason="stop",
        prompt_tokens=10,
        completion_tokens=5,
        cost_usd=0.001,
        latency_s=0.1,
    )


def test_clear_one_judge_counts_every_prompt_version(cli, tmp_path):
    # One judge asked with three prompts (answer_v1, coverage_v1, completeness_estimate_v1 in real use):
    # two rows of answers, one of coverage, one of estimates, and another judge's row that stays.
    cache = tmp_path / "c.sqlite"
    with JudgeCache(cache) as c:
        for key, version in (("k1", "answer_v1"), ("k2", "answer_v1"), ("k3", "coverage_v1"), ("k4", "estimate_v1")):
            c.put(_entry(key, "answer-local", version))
        c.put(_entry("k5", "local", "step_labels_v1"))
    r = cli("cache", "clear", "--cache", cache, "--judge", "answer-local")
    assert r.code == 2 and "refusing to delete 4 cached completions" in r.err, r
    r = cli("cache", "clear", "--cache", cache, "--judge", "answer-local", "--yes")
    assert r.code == 0 and r.out.startswith("deleted 4 cached completions"), r
    with JudgeCache(cache) as c:
        assert c.stats()["entries"] == 1
