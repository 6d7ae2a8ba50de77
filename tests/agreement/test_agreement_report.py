"""The agreement report: self-contained HTML with embedded figures, CSV tables, plots that return Axes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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


@pytest.fixture(scope="module")
def result():
    human, j1, j2 = _sets()
    return compare_annotations(human, j1, j2, tiebreaker="j1", n_boot=50, seed=0)


def test_plots_return_axes(result):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from seekbench.report._agreement_plots import plot_confusion_matrix, plot_kappa_cost

    ax = plot_confusion_matrix(result.confusion[("j1", "grounding")])
    assert ax.get_ylabel() == "human" and ax.get_xlabel() == "j1"
    assert sorted(t.get_text() for t in ax.texts) == sorted(str(v) for v in
                                                            result.confusion[("j1", "grounding")].to_numpy().ravel())
    ax2 = plot_kappa_cost(result.summary, result.costs)
    assert ax2.get_xlabel() == "cost per trace (USD)"
    assert any("Pareto" in t.get_text() for t in ax2.get_legend().get_texts())
    plt.close("all")


def test_write_agreement_report(tmp_path, result):
    from seekbench.report._agreement_report import write_agreement_report

    files = write_agreement_report(result, tmp_path / "out")
    page = files.html.read_text()
    assert page.startswith("<!doctype html>") and "<script" not in page
    assert page.count("data:image/png;base64,") == len(files.figures) == 2  # grounding confusion, kappa vs cost
    assert "Majority panel" in page and "What each judge cost" in page
    table = pd.read_csv(tmp_path / "out" / "tables" / "agreement.csv")
    assert set(table["rater"]) == {"j1", "j2", "panel:majority"}
    conf = pd.read_csv(tmp_path / "out" / "tables" / "agreement_confusion.csv")
    j1 = conf[(conf["rater"] == "j1") & (conf["field"] == "grounding")]
    assert j1["n"].sum() == 48
