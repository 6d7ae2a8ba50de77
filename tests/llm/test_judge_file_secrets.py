"""A judge file cannot quietly send a secret elsewhere, and credentials in a URL are never printed or stored."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hostile_http import HostileServer

from seekbench._errors import SeekbenchWarning, UserInputError
from seekbench.data import sample_traces_path
from seekbench.llm import load_judge_config, mask_credentials
from seekbench.llm._config import PACKAGE_JUDGES_DIR

ROOT = Path(__file__).resolve().parents[2]


def _shadow(folder: Path, name: str, **changes: str) -> Path:
    """``folder/judges/NAME.toml``: the shipped file with some keys replaced (prompts by absolute path)."""
    lines = []
    for line in (PACKAGE_JUDGES_DIR / f"{name}.toml").read_text(encoding="utf-8").splitlines():
        key = line.split("=")[0].strip()
        if key in changes or key == "max_attempts":
            continue
        if key == "prompt":
            line = f'prompt = "{(PACKAGE_JUDGES_DIR / line.split("=", 1)[1].strip().strip(chr(34))).as_posix()}"'
        lines.append(line)
    lines += [f'{k} = "{v}"' for k, v in changes.items()]
    (folder / "judges").mkdir(exist_ok=True)
    path = folder / "judges" / f"{name}.toml"
    path.write_text("\n".join(lines) + "\nmax_attempts = 1\n", encoding="utf-8")
    return path


def _seekbench(cwd: Path, *args, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "seekbench", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=120)


def test_a_working_folder_judge_may_not_send_any_variable_as_the_key(tmp_path):
    with HostileServer("ok") as srv:
        _shadow(tmp_path, "gpt-4.1-mini", base_url=srv.base_url, api_key_env="AWS_SECRET_ACCESS_KEY")
        out = _seekbench(tmp_path, "annotate", sample_traces_path(), "-o", "o.jsonl", "--cache", "c.sqlite",
                         "--no-progress", AWS_SECRET_ACCESS_KEY="aws-very-secret")
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "api_key_env is 'AWS_SECRET_ACCESS_KEY'" in out.stderr and "_API_KEY or _TOKEN" in out.stderr
    assert srv.requests == 0 and "aws-very-secret" not in out.stderr


def test_a_judge_named_by_its_path_may_read_any_variable(tmp_path):
    path = _shadow(tmp_path, "gpt-4.1-mini", api_key_env="MY_CORP_SECRET")
    with pytest.warns(SeekbenchWarning, match="not the shipped file"):  # it shadows the shipped gpt-4.1-mini
        assert load_judge_config(path).api_key_env == "MY_CORP_SECRET"
    with pytest.raises(UserInputError, match="name the judge by its path"):
        os.chdir(tmp_path)  # found by name in ./judges
        try:
            load_judge_config("gpt-4.1-mini")
        finally:
            os.chdir(ROOT)


def test_a_shadowing_judge_is_named_with_its_host_and_key_variable(tmp_path):
    with HostileServer("ok") as srv:
        path = _shadow(tmp_path, "gpt-4.1-mini", base_url=srv.base_url)
        out = _seekbench(tmp_path, "annotate", sample_traces_path(), "-o", "o.jsonl", "--cache", "c.sqlite",
                         "--no-progress", "--limit", "1", OPENAI_API_KEY="sk-test-x")
    host = srv.base_url.split("//")[1].split("/")[0]
    notes = [line for line in out.stderr.splitlines() if "not the shipped file" in line]
    assert len(notes) == 1, out.stderr
    assert str(path.relative_to(tmp_path)) in notes[0] or str(path) in notes[0]
    assert host in notes[0] and "$OPENAI_API_KEY" in notes[0]


def test_the_shipped_judges_give_no_notice():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeekbenchWarning)
        load_judge_config("gpt-4.1-mini")
        load_judge_config("local")


def test_credentials_in_the_base_url_are_masked_everywhere(tmp_path):
    url = "http://alice:hunter2xyz@127.0.0.1:9/v1"  # nothing listens on port 9
    out = _seekbench(tmp_path, "annotate", sample_traces_path(), "--judge", "local", "--base-url", url,
                     "-o", "o.jsonl", "--cache", "c.sqlite", "--no-progress", "--limit", "3")
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr and "127.0.0.1:9" in out.stderr
    written = (tmp_path / "o.jsonl").read_text(encoding="utf-8") if (tmp_path / "o.jsonl").exists() else ""
    for text in (out.stderr, out.stdout, written):
        assert "hunter2xyz" not in text


@pytest.mark.parametrize(
    ("text", "base", "expected"),
    [
        ("POST https://u:p@h/v1/x", None, "POST https://***@h/v1/x"),
        ("see http://token@h:8/v1 and http://h/v1", None, "see http://***@h:8/v1 and http://h/v1"),
        ("server said: bad password pw%40x", "http://u:pw%40x@h/v1", "server said: bad password ***"),
        ("server said: bad password pw@x", "http://u:pw%40x@h/v1", "server said: bad password ***"),
        ("no url here", "http://h/v1", "no url here"),
    ],
)
def test_mask_credentials(text, base, expected):
    assert mask_credentials(text, base) == expected
