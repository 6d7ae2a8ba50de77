"""``judge train`` and ``judge evaluate`` through ``register_cli`` on a fresh parser, and via ``seekbench judge``."""

from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest

from seekbench import UserInputError
from seekbench.annotate.offline import LearnedModel
from seekbench.cli._judge_offline import register_cli
from seekbench.data import sample_traces_path
from seekbench.labels import AnnotationSet
from seekbench.traces import write_jsonl

SAMPLE = str(sample_traces_path())


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="judge")
    sub = parser.add_subparsers(dest="judge_command", required=True)
    register_cli(sub)
    args = parser.parse_args([str(a) for a in argv])
    return args.run(args)


def test_train_writes_json_model_and_card(tmp_path, capsys):
    out = tmp_path / "model.json"
    assert _run("train", "--human", SAMPLE, "-o", out, "--seed", "2", "--folds", "2") == 0
    model = LearnedModel.load(out)
    assert model.card["seed"] == 2 and model.card["cv"]["n_splits"] == 2
    card = (tmp_path / "model.card.md").read_text()
    assert model.card["training_data"]["sha256"] in card and "| reasoning_type |" in card
    text = capsys.readouterr().out
    assert "trained 6 classifiers on 48 traces" in text and "kappa=" in text


def test_train_from_label_set_equals_inline(tmp_path, sample_traces):
    """--labels SET on traces without inline labels trains the same model as the inline labels."""
    bare = [{**t, "steps": [{k: v for k, v in s.items() if k != "labels"} for s in t["steps"]]}
            for t in sample_traces]
    for t in bare:
        t.pop("inline_labels", None)
    write_jsonl(tmp_path / "bare.jsonl", bare)
    AnnotationSet.from_traces(sample_traces).save(tmp_path / "human.jsonl")
    assert _run("train", "--human", tmp_path / "bare.jsonl", "--labels", tmp_path / "human.jsonl",
                "-o", tmp_path / "a.json", "--folds", "2") == 0
    assert _run("train", "--human", SAMPLE, "-o", tmp_path / "b.json", "--folds", "2") == 0
    assert LearnedModel.load(tmp_path / "a.json").sha256 == LearnedModel.load(tmp_path / "b.json").sha256


def test_evaluate_table_and_json(tmp_path, capsys):
    assert _run("evaluate", SAMPLE, "--folds", "2") == 0
    table = capsys.readouterr().out
    assert "rules" in table and "learned (2-fold grouped CV)" in table
    for row in ("reasoning_type", "grounding (reasoning)", "search_type", "clarity", "sufficiency"):
        assert row in table
    assert _run("evaluate", SAMPLE, "--folds", "2", "--json") == 0
    body = json.loads(capsys.readouterr().out)
    assert body["n_traces"] == 48 and body["n_questions"] == 12 and body["folds"] == 2
    rules, learned = body["judges"]["rules"], body["judges"]["learned (2-fold grouped CV)"]
    assert rules["reasoning_type"]["n"] > 0 and -1 <= rules["reasoning_type"]["kappa"] <= 1
    assert len(learned["clarity"]["fold_kappas"]) == 2


def test_evaluate_saved_model(tmp_path, capsys):
    assert _run("train", "--human", SAMPLE, "-o", tmp_path / "m.json", "--folds", "2") == 0
    capsys.readouterr()
    assert _run("evaluate", SAMPLE, "--folds", "2", "--model", tmp_path / "m.json", "--json") == 0
    assert "learned (m.json)" in json.loads(capsys.readouterr().out)["judges"]


def test_user_errors(tmp_path):
    with pytest.raises(UserInputError, match="file not found"):
        _run("evaluate", tmp_path / "missing.jsonl")
    one = AnnotationSet.from_traces(json.loads(line) for line in open(SAMPLE, encoding="utf-8")).records
    other = one.assign(rater="someone-else")
    AnnotationSet(pd.concat([one, other], ignore_index=True), name="x").save(tmp_path / "two.jsonl")
    with pytest.raises(UserInputError, match="choose one with --rater"):
        _run("train", "--human", SAMPLE, "--labels", tmp_path / "two.jsonl", "-o", tmp_path / "m.json")
    with pytest.raises(SystemExit):
        _run("train", "--human", SAMPLE)  # -o is required


def test_seekbench_judge_group_hooks_in(tmp_path, capsys):
    """The ``judge`` group of the CLI (seekbench/cli/_judge.py) registers the offline commands."""
    judge_cli = pytest.importorskip("seekbench.cli._judge")
    parser = argparse.ArgumentParser(prog="seekbench")
    judge_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["judge", "train", "--human", SAMPLE, "-o", str(tmp_path / "m.json"), "--folds", "2"])
    assert args.run(args) == 0
    assert (tmp_path / "m.json").exists()
