"""Judge validation records: where they live, the schema, the compact line and the notices."""

from __future__ import annotations

import copy
import json

import pytest

from seekbench import UserInputError
from seekbench._resources import judges_dir
from seekbench.llm import compact_kappas, load_validation, read_record, record_lines, record_notices, validation_path


def _row(field, kind, kappa, n=100):
    return {"field": field, "step_kind": kind, "n": n, "raw_agreement": 0.8, "kappa": kappa,
            "kappa_ci": [None if kappa is None else kappa - 0.1, None if kappa is None else kappa + 0.1],
            "ac1": 0.5, "ac1_ci": [0.4, 0.6]}


RECORD = {
    "format": "seekbench.judge_validation", "format_version": 1, "judge": "toy", "judge_version": "1",
    "model": "toy@1", "method": "in-sample", "method_detail": "no training; measured on 3 traces.",
    "data": {"name": "invented", "n_traces": 3},
    "results": [{"features": None, "rows": [
        _row("reasoning_type", "reasoning", 0.55), _row("grounding", "reasoning", 0.3),
        _row("grounding", "search", None), _row("search_type", "search", 0.45),
        _row("clarity", "search_result", 0.2, n=0), _row("sufficiency", "search_result", 0.41)]}],
    "cost_per_trace_usd": 0.0,
}


def test_record_path_is_beside_the_judge_file():
    assert validation_path("a/b/gpt-4.1.toml").as_posix() == "a/b/validation/gpt-4.1.json"


def test_missing_record_is_none_and_a_bad_one_is_a_user_error(tmp_path):
    judge = tmp_path / "toy.toml"
    judge.write_text('kind = "rules"\n')
    assert load_validation(judge) is None
    (tmp_path / "validation").mkdir()
    bad = copy.deepcopy(RECORD)
    bad["method"] = "vibes"
    (tmp_path / "validation" / "toy.json").write_text(json.dumps(bad))
    with pytest.raises(UserInputError, match=r"toy.json.*\$\.method"):
        load_validation(judge)
    (tmp_path / "validation" / "toy.json").write_text(json.dumps(RECORD))
    assert load_validation(judge)["judge"] == "toy"


def test_compact_line_and_notices():
    line = compact_kappas(RECORD)
    # The five columns in ontology order; an undefined kappa is n/a; method and n at the end.
    assert line == "kappa type 0.55 ground 0.30 search 0.45 clar 0.20 suff 0.41 (in-sample, 3 traces)"
    assert compact_kappas(None) == "no validation record"
    (notice,) = record_notices("toy", RECORD)
    # Below 0.4: grounding (reasoning) 0.30; clarity's 0.20 has n = 0, so it says nothing; 0.41 is not below.
    assert notice == "judge 'toy': Cohen's kappa with human labels below 0.4 on grounding (reasoning) 0.30"
    (none,) = record_notices("gpt-x", None)
    assert none.startswith("judge 'gpt-x' has no validation record")
    lines = record_lines("toy", RECORD)
    assert "| grounding | reasoning | 100 | 0.30 (0.20, 0.40) | 0.50 (0.40, 0.60) |" in lines
    assert lines[-1] == f"- {notice}"


@pytest.mark.parametrize("name", ["rules", "learned"])
def test_shipped_records_follow_the_schema(name):
    record = read_record(judges_dir() / "validation" / f"{name}.json")
    assert record["judge"] == name and record["data"]["n_traces"] == 190
    assert record["method"] == {"rules": "in-sample", "learned": "cross-validated"}[name]
    assert record["cost_per_trace_usd"] == 0.0


def test_shipped_api_judges_have_no_record():
    for name in ("gpt-4.1-mini", "gpt-4.1", "gpt-5", "local"):
        assert load_validation(judges_dir() / f"{name}.toml") is None
