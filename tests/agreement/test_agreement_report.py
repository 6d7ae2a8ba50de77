"""The agreement report: self-contained HTML with embedded figures, CSV tables, plots that return Axes."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from seekbench import UndefinedMetricWarning
from seekbench.agreement import compare_annotations
from seekbench.labels import AnnotationSet


def _sets():
    rng = np.random.default_rng(0)
    human, j1, j2 = [], [], []
    for t in range(12):
        for s in range(4):
            v = "Grounded" if rng.random() < 0.5 else "NotGrounded"
            human.append((f"t{t}", s, v))
            j1.append((f"t{t}", s, v if rng.random() < 0.85 else ("Grounded" if v == "NotGrounded" else "NotGrounded")))
            j2.append((f"t{t}", s, v if rng.random() < 0.7 else ("Grounded" if v == "NotGrounded" else "NotGrounded")))

    def make(rows, rater, cost):
        prov = {"kind": "human"} if cost is None else {"kind": "judge", "cost_usd": cost, "latency_s": 1.0,
                                                      "input_tokens": 100, "output_tokens": 10}
        return AnnotationSet.from_records([{"trace_id": t, "step": s, "field": "grounding", "value": v,
                                            "unscored_reason": None, "rater": rater,
                                            "provenance": {**prov, "cache_key": f"{rater}{t}"}} for t, s, v in rows])

    return make(human, "human", None), make(j1, "j1", 0.01), make(j2, "j2", 0.002)


#: Steps 0-1 of every trace are reasoning steps, 2-3 search steps: two grounding strata.
TRACES = [{"trace_id": f"t{t}", "agent": "ab"[t % 2], "steps": [
    {"index": s, "kind": "reasoning" if s < 2 else "search", **({"query": "q"} if s >= 2 else {})}
    for s in range(4)]} for t in range(12)]


@pytest.fixture(scope="module")
def result():
    human, j1, j2 = _sets()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # sensitivity: no evidence labels here
        return compare_annotations(human, j1, j2, tiebreaker="j1", traces=TRACES, n_boot=50, seed=0)


def test_plots_return_axes(result):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from seekbench.report._agreement_plots import plot_confusion_matrix, plot_kappa_cost

    conf = result.confusion[("j1", "grounding", "reasoning")]
    ax = plot_confusion_matrix(conf)
    assert ax.get_ylabel() == "human" and ax.get_xlabel() == "j1"
    assert sorted(t.get_text() for t in ax.texts) == sorted(str(v) for v in conf.to_numpy().ravel())
    from seekbench.analysis import kappa_cost_table

    ax2 = plot_kappa_cost(kappa_cost_table(result.summary, result.costs))
    assert ax2.get_xlabel() == "cost per trace (USD)"
    assert any("Pareto" in t.get_text() for t in ax2.get_legend().get_texts())
    plt.close("all")


def test_write_agreement_report(tmp_path, result):
    from seekbench.analysis import agreement_analysis
    from seekbench.report._agreement_report import write_agreement_report

    files = write_agreement_report(agreement_analysis(result), tmp_path / "out")
    page = files.html.read_text()
    assert page.startswith("<!doctype html>") and "<script" not in page
    # Grounding of reasoning steps and of search steps: two confusion figures, then kappa vs cost.
    assert page.count("data:image/png;base64,") == len(files.figures) == 3
    assert "grounding (reasoning)" in page and "grounding (search)" in page and "all (pooled)" in page
    assert "Majority panel" in page and "What each judge cost" in page
    assert ">None<" not in page and ">nan<" not in page
    table = pd.read_csv(tmp_path / "out" / "tables" / "agreement.csv")
    assert set(table["rater"]) == {"j1", "j2", "panel:majority"}
    assert set(table["step_kind"]) == {"reasoning", "search", "all"}
    conf = pd.read_csv(tmp_path / "out" / "tables" / "agreement_confusion.csv")
    j1 = conf[(conf["rater"] == "j1") & (conf["field"] == "grounding")]
    assert j1["n"].sum() == 48 and j1.groupby("step_kind")["n"].sum().to_dict() == {"reasoning": 24, "search": 24}
