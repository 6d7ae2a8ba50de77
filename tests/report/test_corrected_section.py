"""The report's judge-corrected section: three columns per agent and metric, the sampling note, no internals."""

from __future__ import annotations

import re

import pandas as pd

from seekbench.metrics import corrected_metrics, labeled_selection
from seekbench.report._corrected_section import corrected_html, corrected_markdown, shown_table


def _result():
    ids = [str(i) for i in range(10)]
    judge = pd.DataFrame(
        {
            "trace_id": ids,
            "agent": ["a"] * 6 + ["b<x>"] * 4,
            "question_id": ids,
            "rqi": [1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 0.2, 0.4, 0.6, 1.0],
            "cut_off": 0.0,
        }
    )
    human = judge.iloc[[0, 1, 2, 6]].assign(rqi=[0.5, 0.5, 1.0, 0.0])
    res = corrected_metrics(judge, human, n_boot=100)
    res.options["labeled_selection"] = labeled_selection(judge, set(human["trace_id"]))
    res.options["sampling_note"] = "the guarantee assumes a random sample of these traces"
    res.options.update(reference="human.jsonl", judge_labels="judge.jsonl", accuracy="left out")
    return res


def test_three_columns_and_the_n_of_the_human_labeled_traces():
    table = shown_table(_result())
    assert list(table.columns) == [
        "agent",
        "metric",
        "judge only [95% CI]",
        "human only [95% CI]",
        "human n",
        "corrected [95% CI]",
        "lambda",
    ]
    assert table["human n"].tolist() == [3, 1]
    assert table.loc[1, "corrected [95% CI]"] == "n/a"  # one labeled trace of b: undefined, said why


def test_markdown_and_html_say_how_the_traces_were_chosen_without_internals():
    res = _result()
    md, page = corrected_markdown(res), corrected_html(res)
    # the labeled traces are the first 3 of a's and one of b's: not the first n of the file, but b<x>
    # is under-sampled too little for the chi-square to say so: the general caveat is shown
    assert "3 of 6" in md and "1 of 4" in md and "random sample" in md
    assert "at least 2 needed" in md
    assert "b&lt;x&gt;" in page and "<x>" not in page.replace("b&lt;x&gt;", "")
    for text in (md, page):
        assert not re.search(r"\bnan\b|\bNone\b|-0\.00", text, flags=re.IGNORECASE)


def test_method_note_names_the_interval_used():
    res = _result()
    assert res.options["interval"] == "auto"
    assert "Wilson interval at the estimate's effective sample size" in corrected_markdown(res)
    ids = [str(i) for i in range(4)]
    judge = pd.DataFrame({"trace_id": ids, "agent": "a", "question_id": ids, "rqi": [1.0, 0.5, 0.0, 1.0]})
    judge["cut_off"] = 0.0
    res_t = corrected_metrics(judge, judge.iloc[:2], interval="t", n_boot=0)
    res_t.options["labeled_selection"] = labeled_selection(judge, {"0", "1"})
    md = corrected_markdown(res_t)
    assert "Student t (Wilson for a rate without spread)" in md and "effective sample size" not in md
