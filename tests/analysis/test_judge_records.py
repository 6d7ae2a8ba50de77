"""Which judges produced a label set, and the validation record shown for them."""

from __future__ import annotations

import json

from seekbench.analysis import judge_records
from seekbench.labels import AnnotationSet

RECORD = {
    "format": "seekbench.judge_validation", "format_version": 1, "judge": "toyjudge", "judge_version": "1",
    "model": "learned@1:abc", "method": "cross-validated", "method_detail": "5 folds by question.",
    "data": {"name": "invented", "n_traces": 4},
    "results": [
        {"features": "lexical", "rows": [{"field": "grounding", "step_kind": "reasoning", "n": 9, "kappa": 0.2,
                                           "kappa_ci": [0.1, 0.3], "ac1": 0.3, "ac1_ci": [0.2, 0.4]}]},
        {"features": "lexical+minilm", "rows": [{"field": "grounding", "step_kind": "reasoning", "n": 9,
                                                  "kappa": 0.6, "kappa_ci": [0.5, 0.7], "ac1": 0.7,
                                                  "ac1_ci": [0.6, 0.8]}]},
    ],
    "cost_per_trace_usd": 0.0,
}


def _labels(judge: str | None, model: str | None, kind: str = "judge") -> AnnotationSet:
    prov = {"kind": kind, "judge": judge, "model": model} if judge else {"kind": "human"}
    recs = [{"trace_id": "t1", "step": i, "field": "grounding", "value": "Grounded", "unscored_reason": None,
             "rater": judge or "ann", "provenance": prov} for i in range(3)]
    return AnnotationSet.from_records(recs)


def _judge_dir(tmp_path, monkeypatch):
    d = tmp_path / "judges"
    (d / "validation").mkdir(parents=True)
    (d / "toyjudge.toml").write_text('kind = "learned"\nmodel_path = "none.json"\n')
    (d / "validation" / "toyjudge.json").write_text(json.dumps(RECORD))
    monkeypatch.setenv("SEEKBENCH_JUDGES_PATH", str(d))


def test_human_and_rule_labels_name_no_judge():
    assert judge_records([_labels(None, None)]) == []
    assert judge_records([_labels("rules", None, kind="rule")]) == []


def test_the_record_of_the_feature_set_the_labels_used(tmp_path, monkeypatch):
    _judge_dir(tmp_path, monkeypatch)
    (plain,) = judge_records([_labels("toyjudge", "learned@1:abc")])
    (embed,) = judge_records([_labels("toyjudge", "learned@1:abc+minilm")])
    assert (plain.features, embed.features) == ("lexical", "lexical+minilm")
    # lexical: kappa 0.2 < 0.4, one notice; with MiniLM 0.6: none.
    assert plain.notices() == ["judge 'toyjudge': Cohen's kappa with human labels below 0.4 on grounding "
                               "(reasoning) 0.20"]
    assert embed.notices() == []
    assert any("0.60 (0.50, 0.70)" in line for line in embed.markdown())


def test_a_record_of_another_model_is_not_shown_as_theirs(tmp_path, monkeypatch):
    _judge_dir(tmp_path, monkeypatch)
    (jr,) = judge_records([_labels("toyjudge", "learned@1:zzz")])
    assert jr.record is None
    assert jr.notices() == ["judge 'toyjudge' has no validation record for these labels: the record measures "
                            "learned@1:abc, these labels come from learned@1:zzz"]


def test_unknown_judge_and_judge_without_record():
    (unknown,) = judge_records([_labels("nobody-knows", "m")])
    assert unknown.notices() == ["judge 'nobody-knows' has no validation record for these labels: no judge file "
                                 "named 'nobody-knows' is found here"]
    (api,) = judge_records([_labels("gpt-4.1-mini", "gpt-4.1-mini")])
    assert api.record is None and api.notices()[0].startswith("judge 'gpt-4.1-mini' has no validation record:")
