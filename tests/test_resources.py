"""The resource locator finds every shipped file, and user judge files win over shipped ones."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import seekbench
from seekbench import _resources
from seekbench.annotate import find_judge_file, judge_dirs, list_judges, load_judge_config

PACKAGE = Path(seekbench.__file__).resolve().parent


def test_everything_lives_inside_the_package():
    for path in (
        _resources.schema_path("trace"),
        _resources.judges_dir(),
        _resources.prompt_path("answer_v1"),
        _resources.sample_path("traces"),
        _resources.sample_path("second"),
    ):
        assert path.exists(), path
        assert PACKAGE in path.resolve().parents, path


@pytest.mark.parametrize("name", ["trace", "annotation", "judge_output", "corpus", "judge_validation"])
def test_every_schema_is_json(name):
    with open(_resources.schema_path(name), encoding="utf-8") as fh:
        assert json.load(fh)["$schema"].startswith("https://json-schema.org/")


def test_every_shipped_judge_loads_and_its_files_exist():
    shipped = sorted(_resources.judges_dir().glob("*.toml"))
    assert {p.stem for p in shipped} >= {"rules", "learned", "local", "gpt-4.1-mini"}
    for p in shipped:
        cfg = load_judge_config(p)
        if isinstance(cfg, dict):  # offline judge: its model file, when named, ships too
            if "model_path" in cfg:
                assert (p.parent / cfg["model_path"]).is_file()
        else:
            assert cfg.prompt_path.is_file() and PACKAGE in cfg.prompt_path.parents


def test_package_data_globs_cover_every_shipped_file():
    # A file the locator can reach but pyproject.toml does not ship would be missing from the wheel.
    with open(PACKAGE.parent / "pyproject.toml", "rb") as fh:
        globs = tomllib.load(fh)["tool"]["setuptools"]["package-data"]["seekbench"]
    for sub in ("schemas", "judges", "data"):
        for f in (PACKAGE / sub).rglob("*"):
            if f.is_file() and f.suffix != ".py" and "__pycache__" not in f.parts:
                rel = f.relative_to(PACKAGE)
                assert any(rel.match(g) for g in globs), f"{rel} is not package data"


def test_the_learned_models_data_license_ships_with_it():
    # The model is trained on the SeekBench release (Apache-2.0): its license text and attribution ship
    # beside it in the package, and NOTICE goes into the wheel's dist-info (license-files).
    models = PACKAGE / "judges" / "models"
    assert "Apache License" in (models / "learned-seekbench190.LICENSE.txt").read_text()
    notice = (models / "learned-seekbench190.NOTICE.txt").read_text()
    assert notice == (PACKAGE.parent / "NOTICE").read_text()
    assert "github.com/SHAO-Jiaqi757/SeekBench" in notice and "Apache License, Version 2.0" in notice
    with open(PACKAGE.parent / "pyproject.toml", "rb") as fh:
        assert "NOTICE" in tomllib.load(fh)["project"]["license-files"]


def test_unknown_sample_is_a_value_error():
    with pytest.raises(ValueError, match="unknown sample 'nope'"):
        _resources.sample_path("nope")


def _user_rules(d: Path, description: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "rules.toml").write_text(f'name = "rules"\nkind = "rules"\nversion = "9"\ndescription = "{description}"\n')
    return d / "rules.toml"


def test_user_judges_take_precedence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEEKBENCH_JUDGES_PATH", raising=False)
    assert find_judge_file("rules") == _resources.judges_dir() / "rules.toml"
    cwd_file = _user_rules(tmp_path / "judges", "cwd")
    assert find_judge_file("rules").resolve() == cwd_file.resolve()
    env_file = _user_rules(tmp_path / "mine", "env")
    monkeypatch.setenv("SEEKBENCH_JUDGES_PATH", str(tmp_path / "mine"))
    assert find_judge_file("rules").resolve() == env_file.resolve()
    assert judge_dirs()[-1] == _resources.judges_dir()
    listed = {j.name: j for j in list_judges()}
    assert listed["rules"].path.resolve() == env_file.resolve() and "learned" in listed  # shipped ones still seen


def test_the_shipped_learned_judge_loads_its_shipped_model(recwarn):
    from seekbench.annotate.offline import load_offline_judge

    judge = load_offline_judge(load_judge_config("learned"))
    # No "training on the sample in memory" fallback: the model file was found in the package.
    assert not [w for w in recwarn if "training on the embedded sample" in str(w.message)]
    assert judge.name == "learned"
