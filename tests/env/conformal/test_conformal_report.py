"""The conformal report section, figures, and the layering of the computing modules."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from _conformal_helpers import env_trace

from seekbench.env.conformal import completeness_anova, evaluate_conformal, evaluate_stopping, summarize_stopping


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    rows = []
    for d in range(20):
        for k in range(3):
            c = rng.random()
            for name, noise in (("good", 0.05), ("llm:bad/one", 0.3)):
                rows.append((f"d{d}", f"d{d}#{k}", c, name, float(np.clip(c + rng.normal(0, noise), 0, 1)), None))
    df = pd.DataFrame(rows, columns=["doc_id", "state_id", "true_completeness", "estimator", "c_hat", "reason"])
    res = evaluate_conformal(df, n_splits=2, n_seeds=2)
    traces = [env_trace(f"{a}{b}{d}", a, b, f"doc{d}", [0.2, 0.5, 0.6 + 0.05 * d + 0.1 * (b == "oracle")],
                        [0.3, 0.8, 0.9]) for a in ("good", "other") for b in ("deduplicated", "oracle")
              for d in range(3)]
    res.stopping = evaluate_stopping(traces, {"good": res.q_hat("good"), "other": res.q_hat("llm:bad/one")},
                                     delta=0.4)
    res.stopping_summary = summarize_stopping(res.stopping)
    res.anova = completeness_anova(traces)
    return res


def test_conformal_section_pieces(result):
    from seekbench.report._conformal_section import conformal_section

    html, md, figures, tables = conformal_section(result)
    assert html.startswith("<section id='conformal'>") and html.endswith("</section>")
    for needle in ("Stopping rule on episodes", "Variance decomposition", "Coverage by true completeness"):
        assert needle in html and needle in md
    assert "figures/conformal_scatter_llm_bad_one.png" in md
    assert set(figures) == {"conformal_coverage_bins", "conformal_scatter_good", "conformal_nonconformity_good",
                            "conformal_scatter_llm_bad_one", "conformal_nonconformity_llm_bad_one"}
    assert all(v.startswith(b"\x89PNG") for v in figures.values())
    assert {"conformal_summary", "conformal_bins", "conformal_splits", "conformal_stopping_summary",
            "completeness_anova"} <= set(tables)
    assert all(isinstance(t, pd.DataFrame) for t in tables.values())
    assert "llm:bad/one" in html


def test_plots_take_and_return_axes(result):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from seekbench.report._conformal_plots import plot_conformal_scatter, plot_coverage_by_bin, plot_nonconformity_hist

    fig, axes = plt.subplots(1, 3)
    ref = result.reference[result.reference["estimator"] == "good"]
    assert plot_conformal_scatter(ref, 0.1, ax=axes[0]) is axes[0]
    assert plot_nonconformity_hist(result.reference_scores["good"], 0.1, ax=axes[1], alpha=0.1) is axes[1]
    assert plot_coverage_by_bin(result.bins, 0.9, ax=axes[2]) is axes[2]
    assert axes[1].lines[0].get_xdata()[0] == 0.1  # the q_hat line
    plt.close(fig)
    ax = plot_conformal_scatter(ref.drop(columns=["covered"]), 0.2)
    assert ax.figure is not None
    plt.close(ax.figure)


def test_to_dict_is_json_ready(result):
    import json

    d = result.to_dict()
    json.dumps(d, allow_nan=False)
    assert {r["estimator"] for r in d["summary"]} == {"good", "llm:bad/one"}


def test_for_agents(result):
    t = result.for_agents(["good", "bad/one", "nobody"]).set_index("agent")
    assert t.loc["good", "estimator"] == "good" and t.loc["bad/one", "estimator"] == "llm:bad/one"
    assert t.loc["good", "q_hat_full"] == result.q_hat("good")
    assert t.loc["nobody", "estimator"] is None and np.isnan(t.loc["nobody", "coverage"])


def test_computing_does_not_import_plotting_cli_or_report():
    code = ("import sys, seekbench.env.conformal as m; "
            "print(','.join(x for x in ('matplotlib', 'seekbench.report', 'seekbench.cli', 'seekbench.annotate') "
            "if x in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_public_api():
    import seekbench.env.conformal as m

    assert m.__all__
    for name in m.__all__:
        assert hasattr(m, name) and not name.startswith("_")
