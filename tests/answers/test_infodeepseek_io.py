"""Importing InfoDeepSeek result and score files (the released code's formats) into canonical traces."""

from __future__ import annotations

import math
import warnings

import pytest
from answers_support import PAGES, record, score_file, write

from seekbench import UndefinedMetricWarning, UserInputError
from seekbench.answers import is_infodeepseek_file, read_infodeepseek
from seekbench.metrics._evidence_set import evidence_set_metrics
from seekbench.traces import validate_trace


def test_score_file_mapping(tmp_path):
    path = score_file(tmp_path)
    assert is_infodeepseek_file(path)
    imp = read_infodeepseek(path)
    assert (imp.kind, imp.agent, imp.lang, imp.judge) == ("score", "deepseek-chat+ddg", "en", "deepseek-chat")
    t0, t1, t2, t3 = imp.traces
    for t in imp.traces:
        validate_trace(t)
    assert t0["trace_id"] == "deepseek-chat+ddg:en:0" and t0["question_id"] == "infodeepseek:en:0"
    assert t0["question"] == "Question 0?" and t0["gold_answers"] == ["Answer 0."]
    assert t0["final_answer"] == "Response 0" and t0["steps"] == [{"index": 0, "kind": "answer", "text": "Response 0"}]
    assert t0["correct"] == {"value": True, "source": "source_data",
                             "detail": {"field": "response_score", "judge": "deepseek-chat"}}
    es = t0["metadata"]["evidence_set"]
    assert es["evidence"] == PAGES and es["sources"] == ["https://a", "https://b"]
    assert es["judgments"] == {"1": False, "2": True} and es["answers"] == {"1": "a1", "2": "a2"}
    assert es["no_retrieval_correct"] is True and es["no_retrieval_answer"] == "Palau, 1994"
    assert es["attributes"]["multi_hop"] is True and es["attributes"]["domain"] == ["history"]
    assert "sources" not in es["attributes"] and t1["metadata"]["false_premise"] is True
    assert t2["correct"]["value"] is None and t2["correct"]["detail"]["pending"] is True
    assert t2["metadata"]["evidence_set"]["judgments"] == {"1": None, "2": True}
    assert t2["metadata"]["evidence_set"]["no_retrieval_correct"] is None  # no offline answer at all
    assert t3["metadata"]["evidence_set"]["evidence"] == []
    assert list(imp.table["trace_id"]) == [t["trace_id"] for t in imp.traces]


def test_metrics_on_the_imported_score_file(tmp_path):
    imp = read_infodeepseek(score_file(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        r = evidence_set_metrics(imp.table, n=5, b=1)
    # ACC: 0 T, 1 F, 3 F (2 pending) -> 1/3.
    assert r.accuracy == pytest.approx(1 / 3) and r.counts["pending_acc"] == 1
    # IA@1: 0 F, 1 F, 2 pending, 3 F (no pages) -> 0/3; IA@2..5: 0 T, 1 F, 2 T, 3 F -> 2/4.
    assert list(r.ia) == [0.0, 0.5, 0.5, 0.5, 0.5] and r.counts["pending_ia"][1] == 1
    assert r.eeu == pytest.approx(0.5 / (1 / 3))
    # IC: 0 -> 2/2; 1 -> (5+1)/2; 2 -> J(2) correct -> 2/2; 3 -> (5+1)/2 -> (1 + 3 + 1 + 3) / 4 = 2.
    assert r.ic == 2.0
    # Interference base: 0 and 1 (offline correct); 1 is wrong with retrieval -> 1/2.
    # (Question 3's offline answer was judged False; question 2 had none.)
    assert r.interference_rate == 0.5 and r.counts["n_interference"] == 2


def test_result_file_without_scores(tmp_path):
    path = write(tmp_path / "toy_result_zh_gpt-4o_5_5_wotool_False_google_lang_aware.jsonl", [record(7)])
    imp = read_infodeepseek(path)
    assert (imp.kind, imp.agent, imp.lang, imp.judge) == ("result", "gpt-4o+google+lang_aware", "zh", None)
    t = imp.traces[0]
    assert t["question"] == "问题7" and "correct" not in t
    assert "judgments" not in t["metadata"]["evidence_set"]
    assert t["metadata"]["evidence_set"]["answers"] == {"1": "a1", "2": "a2"}


def test_language_and_errors(tmp_path):
    path = write(tmp_path / "run.jsonl", [record(1)])
    with pytest.raises(UserInputError, match="--lang"):
        read_infodeepseek(path)
    assert read_infodeepseek(path, lang="en", agent="me").traces[0]["trace_id"] == "me:en:1"
    bad = record(2)
    bad["response_score"] = "yes"
    path = write(tmp_path / "x_result_en_m_5_5_wotool_True_ddg_j_score.jsonl", [record(1), bad])
    with pytest.raises(UserInputError, match="judgment must be true, false or null"):
        read_infodeepseek(path)
    imp = read_infodeepseek(path, skip_invalid=True)
    assert len(imp.traces) == 1 and len(imp.skipped) == 1 and imp.skipped[0].line == 2
    assert not is_infodeepseek_file(write(tmp_path / "other.jsonl", [{"trace_id": "t"}]))


def test_judge_answers_fills_the_evidence_set_of_a_result_file(tmp_path):
    from seekbench.answers import judge_answers

    r = record(1, answers={"1": "Answer 1", "2": "something else"}, offline="answer 1.")
    imp = read_infodeepseek(write(tmp_path / "a_result_en_m_5_5_wotool_True_ddg.jsonl", [r]))
    res = judge_answers(imp.traces)  # EM
    es = res.traces[0]["metadata"]["evidence_set"]
    assert es["judgments"] == {"1": True, "2": False} and es["no_retrieval_correct"] is True
    assert res.traces[0]["correct"]["value"] is False  # "Response 1" vs "Answer 1."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        m = evidence_set_metrics(res.traces, n=2)
    assert m.accuracy == 0.0 and math.isnan(m.eeu) and list(m.ia) == [1.0, 0.0] and m.interference_rate == 1.0
