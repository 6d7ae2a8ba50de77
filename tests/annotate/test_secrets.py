"""The API key never appears in the output, the cache, the request log, the printed text or error messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from annotate_support import runner_cmd, write_traces

from seekbench import UserInputError
from seekbench.annotate import annotate
from seekbench.llm import redact
from seekbench.testing import OpenAIServer

SECRET = "sk-seekbench-test-9f8e7d6c5b4a39281706"
REPO = Path(__file__).resolve().parents[2]
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


# -- every artifact of every command, including failures ---------------------------------------------------------

def _fragments(secret: str) -> list[bytes]:
    """The key and pieces of it that would identify it (without the public ``sk-`` prefix)."""
    return [secret.encode(), secret[3:].encode(), secret[8:22].encode()]


def _assert_clean(blob: bytes, where: str) -> None:
    for frag in _fragments(SECRET):
        assert frag not in blob, f"the API key (or a piece of it) is in {where}"


def _leaky_policy(request):
    """An endpoint that echoes the key back: in error bodies at 400/401/500, and in an answer's content."""
    from seekbench.testing import PolicyError, default_policy, extract_trace_id

    tid = extract_trace_id(request) or ""
    if tid == "t4":
        raise PolicyError(f"bad request from key {SECRET}", status=400)
    if tid == "t7":
        raise PolicyError(f"upstream failed for {SECRET}", status=500)
    answer = default_policy(request)
    return answer if tid != "t10" else answer[:-1] + f', "echo": "{SECRET}"' + "}"


def test_the_key_is_in_no_artifact_of_any_command(tmp_path, judge_cfg, small_traces):
    """Set a recognisable key, run every command that could see it (annotate online and batch, with faults and
    an endpoint that echoes the key; cache stats; convert; report; validate; judge list), make them fail every
    way they can (a refused key, the key echoed in errors, an unreachable endpoint, unwritable outputs, a trace
    that crashes the pipeline with a traceback), then search every byte they wrote or printed."""
    work = tmp_path / "work"
    work.mkdir()
    data = write_traces(work / "t.jsonl", small_traces)
    judge = tmp_path / "j.toml"
    judge.write_text(judge_cfg.path.read_text().replace("SEEKBENCH_LOCAL_API_KEY", KEY_ENV).replace(
        'prompt = "prompts/', f'prompt = "{judge_cfg.prompt_path.parent}/').replace("max_attempts = 8",
                                                                                  "max_attempts = 2")
        .replace("timeout_s = 300", "timeout_s = 5\nbackoff_base_s = 0.01\nbackoff_max_s = 0.05\n"
                 "poll_interval_s = 0"))
    env = {**__import__("os").environ, KEY_ENV: SECRET, "OPENAI_API_KEY": SECRET, "OPENAI_LOG": "debug",
           "SEEKBENCH_CACHE": str(work / "default-cache.sqlite")}
    printed: list[tuple[str, bytes]] = []

    def run(*args, expect=None):
        proc = subprocess.run(runner_cmd(*args), capture_output=True, env=env, timeout=180, cwd=work)
        printed.append((" ".join(map(str, args[:2])), proc.stdout + proc.stderr))
        if expect is not None:
            assert proc.returncode in (expect if isinstance(expect, tuple) else (expect,)), \
                proc.stderr.decode()[-2000:]
        return proc

    common = ("--judge", judge, "--no-progress")
    with OpenAIServer(api_key=SECRET, request_log=work / "requests.jsonl", policy=_leaky_policy,
                      faults="429:0.2,500:0.1,malformed:0.2,inject:0.1") as srv:
        run("annotate", data, *common, "--base-url", srv.base_url, "-o", work / "a.jsonl", "--cache",
            work / "c.sqlite", "--json", expect=(0, 3))  # 3: a trace whose two attempts both drew a fault
        run("annotate", data, *common, "--base-url", srv.base_url, "-o", work / "b.jsonl", "--cache",
            work / "c2.sqlite", "--batch", expect=(0, 3))
        run("annotate", data, *common, "--base-url", srv.base_url, "-o", work / "d.jsonl", expect=(0, 3))
    with OpenAIServer(api_key="sk-a-different-key-000000000000", policy=_leaky_policy) as srv:
        run("annotate", data, *common, "--base-url", srv.base_url, "-o", work / "e.jsonl", "--cache",
            work / "c3.sqlite", expect=2)  # 401: the key is refused
    run("annotate", data, *common, "--base-url", "http://127.0.0.1:9/v1", "-o", work / "f.jsonl", "--cache",
        work / "c4.sqlite", expect=3)  # nothing listens there: the run stops at once, done with failures
    (work / "a-file").write_text("x")
    run("annotate", data, *common, "-o", work / "a-file" / "o.jsonl", "--cache", work / "c5.sqlite", expect=2)
    run("annotate", data, *common, "-o", work / "g.jsonl", "--cache", work / "a-file" / "c.sqlite", expect=2)
    crash = write_traces(work / "crash.jsonl", [{**small_traces[0], "question": "broken \ud800"}])
    run("annotate", crash, *common, "--base-url", "http://127.0.0.1:9/v1", "-o", work / "h.jsonl")
    for args in (("cache", "stats", "--cache", work / "c.sqlite"), ("cache", "stats", "--json", "--cache",
                 work / "c2.sqlite"), ("cache", "clear", "--cache", work / "c.sqlite"), ("judge", "list"),
                 ("validate", data), ("convert", data, "-o", work / "conv.jsonl"),
                 ("report", data, "--labels", work / "a.jsonl", "-o", work / "report", "--n-boot", "20"),
                 ("convert", crash, "-o", work / "crash-out.jsonl")):
        run(*args)
    with OpenAIServer(api_key=SECRET) as srv:  # a crash mid-run, after the provider holds the key
        boom = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import seekbench.annotate._job as job; "
                "job.parse_judge_output = lambda *a, **k: 1 / 0; from seekbench.cli import main; "
                "sys.exit(main(sys.argv[1:]))")
        proc = subprocess.run([sys.executable, "-c", boom, str(REPO), "annotate", data, *common, "--base-url",
                               srv.base_url, "-o", work / "i.jsonl", "--cache", work / "c6.sqlite"],
                              capture_output=True, env=env, timeout=180, cwd=work)
    printed.append(("annotate (crashing)", proc.stdout + proc.stderr))
    assert b"Traceback" in proc.stderr and b"ZeroDivisionError" in proc.stderr
    files = [p for p in sorted(work.rglob("*")) if p.is_file()]
    assert {"a.jsonl", "b.jsonl", "c.sqlite", "requests.jsonl", "conv.jsonl"} <= {p.name for p in files}
    for p in files:
        _assert_clean(p.read_bytes(), str(p))
    for what, out in printed:
        _assert_clean(out, f"the output of seekbench {what}")


def test_a_judge_file_cannot_hold_a_key(tmp_path, judge_cfg):
    """Keys come only from the environment: a key written into a judge file is refused, without echoing it."""
    from seekbench.annotate import load_judge_config

    judge = tmp_path / "j.toml"
    judge.write_text(judge_cfg.path.read_text().replace(
        'prompt = "prompts/', f'prompt = "{judge_cfg.prompt_path.parent}/') + f'\napi_key = "{SECRET}"\n')
    with pytest.raises(UserInputError, match="unknown key 'api_key'") as info:
        load_judge_config(judge)
    assert SECRET not in info.value.one_line() and SECRET[3:20] not in info.value.one_line()
