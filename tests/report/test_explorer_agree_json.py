"""The explorer's agreement table on the 190 human-labeled traces is ``seekbench agree --json``'s: the same
rows per (rater, field, step kind), rule-derived labels apart, with the same n, agreement, kappa and AC1."""

from __future__ import annotations

import json
import math

import pytest

ROW_NUMBERS = (
    "n_compared",
    "n_excluded",
    "n_rule_derived",
    "n_traces",
    "raw_agreement",
    "kappa",
    "kappa_lower",
    "kappa_upper",
    "ac1",
    "ac1_lower",
    "ac1_upper",
)


def read_index(path) -> dict:
    """The explorer's index script, ``SEEKBENCH_DATA("index",0,{...});``, as its data."""
    text = path.read_text(encoding="utf-8")
    prefix = 'SEEKBENCH_DATA("index",0,'
    assert text.startswith(prefix) and text.endswith(");\n")
    return json.loads(text[len(prefix) : -3])


@pytest.mark.slow
@pytest.mark.shared_data
def test_explorer_shows_agrees_numbers_on_the_190_traces(cli, shared_data, tmp_path):
    rules = tmp_path / "rules.jsonl"
    assert cli("annotate", shared_data, "--judge", "rules", "-o", rules).code == 0
    judged = ("--reference", "inline", "--rater", rules, "--n-boot", "200", "--seed", "7")
    r = cli("agree", shared_data, *judged, "--json")
    assert r.code == 0, r
    agree = json.loads(r.out)
    assert cli("report", shared_data, *judged, "-o", tmp_path / "report").code == 0
    meta = read_index(tmp_path / "report" / "explorer-data" / "index.js")["meta"]

    rows = meta["agreement"]["rows"]
    key = ("rater", "field", "step_kind")
    assert [tuple(x[k] for k in key) for x in rows] == [tuple(s[k] for k in key) for s in agree["summary"]]
    for x, s in zip(rows, agree["summary"], strict=True):
        for k in ROW_NUMBERS:
            want = s[k]
            assert x[k] == want or (x[k] is None and (want is None or math.isnan(want))), (x["rater"], x["field"], k)
        if x["n_compared"]:  # each disagreement link counts the off-diagonal items of that stratum
            assert x["n_disagree"] == round(x["n_compared"] * (1 - x["raw_agreement"]))
            assert 0 < len(x["traces"]) <= x["n_disagree"] or x["n_disagree"] == 0
    assert meta["agreement"]["reference"] == agree["reference"]
    assert (meta["agreement"]["n_boot"], meta["agreement"]["seed"]) == (200, 7)

    # The findings of issue 26: grounding is two strata (630 reasoning, 252 search steps; it was one row of
    # 882 at 83.4%), and the judge's search_type row leaves out the 297 rule-derived labels, scored apart.
    by = {(x["rater"], x["field"], x["step_kind"]): x for x in rows}
    assert by[("rules", "grounding", "reasoning")]["n_compared"] == 630
    assert by[("rules", "grounding", "search")]["n_compared"] == 252
    assert round(by[("rules", "grounding", "reasoning")]["raw_agreement"], 3) == 0.770
    assert by[("rules", "search_type", "search")]["n_rule_derived"] == 297
    assert by[("rule-derived", "search_type", "search")]["n_compared"] == 297
    assert not any(x["field"] == "grounding" and x["step_kind"] not in ("reasoning", "search") for x in rows)
