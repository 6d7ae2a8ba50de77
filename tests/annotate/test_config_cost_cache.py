"""Judge files, prices and token bounds, backoff, and the SQLite cache."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys

import pytest

from seekbench import UserInputError
from seekbench.annotate import (
    CachedCompletion,
    JudgeCache,
    JudgeConfig,
    Prices,
    PromptTemplate,
    cost_usd,
    list_judges,
    load_judge_config,
    prompt_token_bound,
    render_prompt,
    rule_labels,
)
from seekbench.llm._provider import Backoff, retry_after_s
from seekbench.testing._protocol import prompt_tokens


def test_shipped_judges_load():
    mini = load_judge_config("gpt-4.1-mini")
    assert isinstance(mini, JudgeConfig) and mini.published and mini.model == "gpt-4.1-mini"
    assert mini.decoding() == {"max_completion_tokens": 4096, "temperature": 0.0, "seed": 20250901}
    assert (mini.price_input_per_mtok, mini.price_output_per_mtok) == (0.40, 1.60)
    gpt5 = load_judge_config("gpt-5")
    assert "temperature" not in gpt5.decoding() and gpt5.decoding()["reasoning_effort"] == "low"
    local = load_judge_config("local")
    assert local.base_url == "http://127.0.0.1:8000/v1" and local.response_format == "auto"
    assert "max_tokens" in local.decoding()
    names = {j.name for j in list_judges() if j.kind == "openai"}
    assert {"gpt-4.1-mini", "gpt-4.1", "gpt-5", "local"} <= names


def test_base_url_from_environment(monkeypatch):
    cfg = load_judge_config("gpt-4.1-mini")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert cfg.resolved_base_url() is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert cfg.resolved_base_url() == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("text, message", [
    ('kind = "openai"\nname = "x"\nmodel = "m"\nprompt = "p.md"\nprompt_version = "v"\n'
     'price_input_per_mtok = 1\nprice_output_per_mtok = 1\ncolour = "red"\n', "unknown key 'colour'"),
    ('kind = "magic"\n', "kind is 'magic'"),
    ('kind = "openai"\nname = "x"\n', "missing required key 'model'"),
    ('kind = "openai"\nname = "x"\nmodel = "m"\nprompt = "p.md"\nprompt_version = "v"\n'
     'price_input_per_mtok = 1\nprice_output_per_mtok = 1\nresponse_format = "xml"\n', "response_format"),
    ('kind = "openai"\nname = "x"\nmodel = "m"\nprompt = "nope.md"\nprompt_version = "v"\n'
     'price_input_per_mtok = 1\nprice_output_per_mtok = 1\n', "prompt template 'nope.md' not found"),
    ("kind = \n", "invalid TOML"),
])
def test_bad_judge_files(tmp_path, text, message):
    (tmp_path / "p.md").write_text("=== SYSTEM ===\ns\n=== USER ===\n{{TRACE_ID}}{{QUESTION_BLOCK}}{{STEPS_BLOCK}}\n")
    path = tmp_path / "j.toml"
    path.write_text(text)
    with pytest.raises(UserInputError, match=message):
        load_judge_config(path)


def test_cost_is_usage_times_prices():
    p = Prices(0.40, 1.60, 0.5)
    # 2,648 prompt and 223 completion tokens: (2648 * 0.40 + 223 * 1.60) / 1e6 = 0.0014160
    assert cost_usd(2648, 223, p) == pytest.approx(0.001416, rel=1e-12)
    assert cost_usd(2648, 223, p, batch=True) == pytest.approx(0.000708, rel=1e-12)


def test_prompt_bound_is_above_the_server_count(shared_traces):
    cfg = load_judge_config("gpt-4.1-mini")
    template = PromptTemplate.load(cfg.prompt_path, version=cfg.prompt_version)
    for tr in shared_traces:
        messages = render_prompt(tr, rule_labels(tr), template).messages
        assert prompt_tokens({"messages": messages}) <= prompt_token_bound(messages)


def test_backoff_is_exponential_with_jitter_and_honours_retry_after():
    b = Backoff(base_s=1.0, max_s=8.0)
    rng = random.Random(0)
    for attempt in range(1, 8):
        d = b.delay(attempt, None, rng)
        assert 0 <= d <= min(8.0, 2 ** (attempt - 1))
    assert b.delay(1, 5.0, rng) >= 5.0
    assert retry_after_s({"retry-after": "3"}) == 3.0
    assert retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert retry_after_s({}) is None


def _entry(key, **kw):
    base = dict(key=key, judge="j", model="m", prompt_version="v", trace_id="t", created="2025-01-01T00:00:00Z",
                via_batch=False, raw="{}", content="{}", finish_reason="stop", prompt_tokens=10,
                completion_tokens=5, cost_usd=0.001, latency_s=0.1)
    return CachedCompletion(**{**base, **kw})


def test_cache_round_trip_wal_stats_clear(tmp_path):
    path = tmp_path / "c.sqlite"
    with JudgeCache(path) as c:
        c.put(_entry("k1"))
        c.put(_entry("k1", content="other"))  # first write wins: a paid answer is never replaced
        c.put(_entry("k2", judge="other", trace_id="u"))
        c.set_parsed("k1", valid=True, labels={"0:grounding": "Grounded"}, error=None)
        assert c.get("k1").content == "{}" and c.get("k1").valid is True and "k2" in c
        assert c.get("missing") is None
        st = c.stats()
        assert st["entries"] == 2 and st["cost_usd"] == pytest.approx(0.002) and len(st["judges"]) == 2
        assert c.clear(judge="other") == 1 and c.stats()["entries"] == 1
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_public_api_and_layering():
    import seekbench.annotate as annotate_pkg

    for name in annotate_pkg.__all__:
        assert getattr(annotate_pkg, name) is not None
    code = ("import sys, seekbench.annotate; "
            "bad = [m for m in sys.modules if m.startswith(('seekbench.metrics', 'seekbench.report', "
            "'seekbench.agreement', 'seekbench.cli'))]; print(bad); sys.exit(1 if bad else 0)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
