"""The API key never appears in the output, the cache, the request log, the printed text or error messages."""

from __future__ import annotations

import subprocess

import pytest
from annotate_support import runner_cmd, write_traces

from seekbench import UserInputError
from seekbench.annotate import annotate
from seekbench.annotate._provider import redact
from seekbench.testing import OpenAIServer

SECRET = "sk-seekbench-test-9f8e7d6c5b4a39281706"
KEY_ENV = "SEEKBENCH_TEST_SECRET_KEY"


def _all_bytes(root):
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_api_key_is_never_written_or_printed(tmp_path, judge_cfg, small_traces, monkeypatch, capfd):
    monkeypatch.setenv(KEY_ENV, SECRET)
    cfg = judge_cfg.with_overrides(api_key_env=KEY_ENV)
    work = tmp_path / "work"
    work.mkdir()
    with OpenAIServer(api_key=SECRET, request_log=work / "requests.jsonl", faults="429:0.3,malformed:0.3") as srv:
        s1 = annotate(small_traces, cfg, work / "o.jsonl", cache=work / "c.sqlite", base_url=srv.base_url,
                      progress=True)
        s2 = annotate(small_traces, cfg, work / "b.jsonl", cache=work / "c2.sqlite", base_url=srv.base_url,
                      batch=True)
        data = write_traces(tmp_path / "t.jsonl", small_traces)
        env = {KEY_ENV: SECRET}
        judge = tmp_path / "j.toml"
        judge.write_text(cfg.path.read_text().replace("SEEKBENCH_LOCAL_API_KEY", KEY_ENV).replace(
            'prompt = "prompts/', f'prompt = "{cfg.prompt_path.parent}/'))
        cli = subprocess.run(runner_cmd("annotate", data, "--judge", judge, "--base-url", srv.base_url, "-o",
                                        work / "cli.jsonl", "--cache", work / "c3.sqlite", "--json"),
                             capture_output=True, env={**__import__("os").environ, **env}, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert s1.requests > 0 and s2.requests > 0
    printed = capfd.readouterr()
    blobs = [_all_bytes(work), cli.stdout, cli.stderr, printed.out.encode(), printed.err.encode(),
             repr(s1.to_dict()).encode(), repr(cfg).encode()]
    for blob in blobs:
        assert SECRET.encode() not in blob
        assert SECRET[3:20].encode() not in blob


def test_wrong_key_error_names_the_variable_not_the_key(tmp_path, judge_cfg, small_traces, monkeypatch):
    wrong = "sk-wrong-key-0123456789abcdef"
    monkeypatch.setenv(KEY_ENV, wrong)
    cfg = judge_cfg.with_overrides(api_key_env=KEY_ENV)
    with OpenAIServer(api_key=SECRET) as srv, pytest.raises(UserInputError) as info:
        annotate(small_traces, cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
    message = info.value.one_line()
    assert KEY_ENV in message and wrong not in message and SECRET not in message


def test_missing_key_for_a_remote_endpoint_is_a_user_error(tmp_path, small_traces, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UserInputError, match="OPENAI_API_KEY"):
        annotate(small_traces, "gpt-4.1-mini", tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite")


def test_redact_masks_key_fragments():
    text = f"Incorrect API key provided: sk-abc1***********xyz9. Key {SECRET} rejected"
    out = redact(text, SECRET)
    assert SECRET not in out and "abc1" not in out and "sk-***" in out
