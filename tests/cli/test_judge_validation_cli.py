"""``judge list`` and ``agree`` show each judge's validation record (kappa per field), or say it has none."""

from __future__ import annotations

import json

from seekbench._resources import judges_dir
from seekbench.data import sample_traces_path


def _kappas(name: str, features: str | None = None) -> dict:
    rec = json.loads((judges_dir() / "validation" / f"{name}.json").read_text())
    res = next((r for r in rec["results"] if r["features"] == features), rec["results"][0])
    return {(r["field"], r["step_kind"]): r["kappa"] for r in res["rows"]}


def test_judge_list_shows_kappa_per_field(cli, monkeypatch):
    monkeypatch.delenv("SEEKBENCH_JUDGES_PATH", raising=False)
    res = cli("judge", "list")
    assert res.code == 0
    lines = res.out.splitlines()
    rules = lines[[i for i, line in enumerate(lines) if line.startswith("rules ")][0] + 1]
    k = _kappas("rules")
    assert rules.strip() == (
        f"kappa type {k['reasoning_type', 'reasoning']:.2f} ground {k['grounding', 'reasoning']:.2f} "
        f"search {k['search_type', 'search']:.2f} clar {k['clarity', 'search_result']:.2f} "
        f"suff {k['sufficiency', 'search_result']:.2f} (in-sample, 190 traces)"
    )
    mini = lines[[i for i, line in enumerate(lines) if line.startswith("gpt-4.1-mini ")][0] + 1]
    assert mini.strip() == "no validation record"
    rows = {r["name"]: r for r in json.loads(cli("judge", "list", "--json").out)}
    assert rows["learned"]["validation"]["method"] == "cross-validated"
    assert rows["gpt-5"]["validation"] is None


def test_agree_text_names_the_raters_judge_record(cli, tmp_path):
    labels = tmp_path / "rules.jsonl"
    assert cli("annotate", sample_traces_path(), "--judge", "rules", "-o", labels).code == 0
    res = cli("agree", sample_traces_path(), "--reference", "inline", "--rater", labels, "--n-boot", "20")
    assert res.code == 0, res
    tail = res.out[res.out.index("judge validation records"):]
    assert "  rules: kappa type" in tail and "(in-sample, 190 traces)" in tail
    assert "note: judge 'rules': Cohen's kappa with human labels below 0.4 on reasoning_type (reasoning)" in tail
    js = json.loads(cli("agree", sample_traces_path(), "--reference", "inline", "--rater", labels, "--n-boot", "20",
                        "--json").out)
    assert "judge validation" not in json.dumps(js)  # the JSON output (and its goldens) are unchanged
