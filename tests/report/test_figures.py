"""The report's figures, measured on the matplotlib Figure: legends outside the data and each agent once, the ERF
drawn to turn 8, agent names whole, the ideal calibration line visible, no empty axes, the Pareto staircase drawn."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from seekbench.data import sample_traces_path
from seekbench.metrics import EvidenceRecoveryFitter
from seekbench.report._agreement_plots import plot_kappa_cost
from seekbench.report._completeness_plots import plot_completeness_curves, plot_query_diversity
from seekbench.report._conformal_plots import plot_conformal_scatter, plot_coverage_by_bin, plot_nonconformity_hist
from seekbench.report._figures import (
    NO_CALIBRATION,
    calibration_is_empty,
    figure_html,
    plot_calibration,
    plot_erf_curves,
    plot_evidence_prevalence,
    plot_rqi_heatmap,
    process_figures,
    wrap_name,
)

LONG = "SearchR1-nq_hotpotqa_train-qwen2.5-7b-em-ppo-v0.3"
AGENTS = ["fewshot-Qwen2.5-7B-Instruct", LONG, "looper"]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _bbox(artist):
    fig = artist.figure
    fig.canvas.draw()
    return artist.get_window_extent(fig.canvas.get_renderer())


def assert_legend_outside(ax):
    legend = ax.get_legend()
    assert legend is not None, "no legend"
    inter = _bbox(legend).intersection(_bbox(legend), ax.get_window_extent())
    assert inter is None or inter.width * inter.height < 1.0, "the legend covers the data area"


def assert_not_empty(ax):
    assert ax.lines or ax.patches or ax.collections or ax.images, "empty axes"


def _fitters(ends: dict[str, int]) -> dict:
    out = {}
    for name, last in ends.items():
        events = pd.DataFrame({"duration": list(range(1, last + 1)),
                               "event": ["recovered", "stopped"] * (last // 2) + ["recovered"] * (last % 2)})
        out[name] = EvidenceRecoveryFitter().fit_events(events, label=name)
    return out


def test_wrap_name_keeps_the_whole_name():
    for name in [*AGENTS, "a" * 50, ""]:
        assert wrap_name(name).replace("\n", "") == name
    assert max(len(line) for line in wrap_name(LONG).splitlines()) <= 21


def test_erf_legend_outside_each_agent_once_and_drawn_to_turn_8():
    # Every fit ends at turn 5 or earlier, yet the table reads ERF(8): the figure must reach 8.
    fitters = _fitters({AGENTS[0]: 5, LONG: 3})
    ax = plot_erf_curves(fitters)
    assert_legend_outside(ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(labels) == 2 and all("CI" not in label for label in labels)  # each agent once, bands unnamed
    assert [label.replace("\n", "").split(" (n=")[0] for label in labels] == [AGENTS[0], LONG]  # names whole
    assert ax.get_xlim()[1] >= 8
    for line in ax.lines:
        assert line.get_xdata()[-1] >= 8  # each curve itself is drawn on to the horizon
    # A fit longer than 8 turns is drawn to its own end.
    assert plot_erf_curves(_fitters({"a": 11})).lines[0].get_xdata()[-1] == 11


def test_calibration_ideal_line_visible_and_legend_outside():
    table = pd.DataFrame({AGENTS[0]: [0.1, 0.4, 0.8], LONG: [0.0, 0.2, 0.3]}, index=range(3))
    ax = plot_calibration(table)
    assert_legend_outside(ax)
    ideal = [c for c in ax.collections if c.get_linestyle() and c.get_zorder() > max(p.get_zorder() for p in ax.patches)]
    assert ideal, "the ideal-policy line is drawn over the bars"
    assert ax.get_ylim()[0] < 0 < 1 < ax.get_ylim()[1]  # its segments at 0 and 1 are not on the frame
    labels = [t.get_text().replace("\n", "") for t in ax.get_legend().get_texts()]
    assert AGENTS[0] in labels and LONG in labels


def test_no_calibration_figure_when_nothing_answered():
    never = pd.DataFrame({"a": [0.0, 0.0, np.nan], "b": [0.0, 0.0, 0.0]}, index=range(3))
    assert calibration_is_empty(never) and calibration_is_empty(pd.DataFrame())
    assert not calibration_is_empty(pd.DataFrame({"a": [0.0, 0.0, 0.5]}))
    page = figure_html({}, "calibration", "calibration chart", "caption", note=NO_CALIBRATION)
    assert page.startswith("<p class='note'>") and "<img" not in page


def test_process_figures_of_the_sample():
    from seekbench.analysis import analyze
    from seekbench.traces import build_tables, read_traces

    traces = read_traces(sample_traces_path()).traces
    a = analyze(*build_tables(traces), trace_dicts=traces, n_boot=0, explorer=False)
    figures = process_figures(a.process)
    assert set(figures) == {"erf", "erf_km", "rqi_heatmap", "calibration", "prevalence"}
    assert all(v.startswith(b"\x89PNG") for v in figures.values())


def test_heatmap_and_prevalence_show_names_whole():
    rqi = pd.DataFrame(np.full((3, 3), 0.5), columns=AGENTS, index=["A", "B", "C"])
    ax = plot_rqi_heatmap(rqi)
    assert [t.get_text().replace("\n", "") for t in ax.get_xticklabels()] == AGENTS
    prev = pd.DataFrame({0: [0.5, 0.2, 0.1], 1: [0.3, 0.3, 0.3], 2: [0.2, 0.5, 0.6]}, index=AGENTS)
    ax = plot_evidence_prevalence(prev)
    assert [t.get_text().replace("\n", "") for t in ax.get_yticklabels()] == AGENTS
    assert_legend_outside(ax)
    assert_not_empty(ax)


def test_completeness_and_conformal_legends_outside():
    curves = pd.DataFrame({"agent": [LONG] * 3 + ["b"] * 3, "belief": "oracle", "step": [0, 1, 2] * 2,
                           "mean": [0, .3, .5, 0, .2, .4], "lower": [0, .2, .4, 0, .1, .3],
                           "upper": [0, .4, .6, 0, .3, .5]})
    for ax in (plot_completeness_curves(curves),
               plot_query_diversity(curves.rename(columns={"mean": "diversity"}))):
        assert_legend_outside(ax)
        assert_not_empty(ax)
        assert any(LONG in t.get_text().replace("\n", "") for t in ax.get_legend().get_texts())
    data = pd.DataFrame({"true_completeness": np.linspace(0, 1, 20), "c_hat": np.linspace(0.1, 0.9, 20)})
    for ax in (plot_conformal_scatter(data, 0.15), plot_nonconformity_hist(np.linspace(0, 0.4, 30), 0.3, alpha=0.1)):
        assert_legend_outside(ax)
        assert_not_empty(ax)
    bins = pd.DataFrame({"estimator": ["m", "m"], "bin": ["0-0.5", "0.5-1"], "coverage": [0.9, 0.8]})
    assert_legend_outside(plot_coverage_by_bin(bins, 0.9))


def test_kappa_cost_draws_real_axes_and_the_pareto_staircase():
    # Hand example: latency 1, 2, 4 s with kappa 0.5, 0.7, 0.6: the 4-second judge is dominated by the 2-second
    # one (slower and worse); a judge with no latency is not drawn at a made-up 0 but named under the axis.
    points = pd.DataFrame({"rater": ["fast", "mid", "slow", "rules"], "cost_per_trace": np.nan,
                           "latency_s_per_trace": [1.0, 2.0, 4.0, np.nan], "tokens_per_trace": np.nan,
                           "score": [0.5, 0.7, 0.6, 0.4], "lower": [0.4, 0.6, 0.5, 0.3],
                           "upper": [0.6, 0.8, 0.7, 0.5], "known": [True, True, True, False],
                           "on_front": [True, True, False, False]})
    ax = plot_kappa_cost(points, axis="latency_s_per_trace")
    assert ax.get_xlabel().startswith("model time per trace (s)") and "not drawn" in ax.get_xlabel()
    assert "rules" in ax.get_xlabel()
    assert ax.get_xlim()[0] <= 0 < 4 < ax.get_xlim()[1]
    stair = [line for line in ax.lines if line.get_color() == "#cb181d" and len(line.get_xdata()) >= 3]
    assert stair, "the Pareto staircase is drawn"
    xs = stair[0].get_xdata()
    assert list(xs[:2]) == [1.0, 2.0] and xs[-1] > 4  # through the front, on to the right edge
    assert_legend_outside(ax)
    names = {t.get_text() for t in ax.texts}
    assert {"fast", "mid", "slow"} <= names and "rules" not in names


#: Names that matplotlib's mathtext would parse (and fail on) unless escaped; `_` first hides a legend entry.
MATH_NAMES = [r"$\x$", "$$", r"\frac{", "_^{}", r"a $b$ \$c"]


def _shown(fig) -> str:
    """Everything the drawn figure says, as the reader sees it: no Text is mathtext, ``\\$`` shows as ``$``."""
    from matplotlib.cbook import is_math_text
    from matplotlib.text import Text

    fig.canvas.draw()  # raised ValueError inside mathtext before the names were escaped
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    assert not [s for s in texts if is_math_text(s)]
    return " | ".join(s.replace("\\$", "$").replace("\u200b", "").replace("\n", "") for s in texts)


def test_names_are_drawn_as_written():
    from seekbench.report._agreement_plots import plot_confusion_matrix

    names = MATH_NAMES[:4]
    axes = [
        plot_erf_curves(_fitters(dict.fromkeys(names, 4))),
        plot_rqi_heatmap(pd.DataFrame(np.full((2, 4), 0.5), columns=names, index=["$A$", "B"])),
        plot_calibration(pd.DataFrame(np.full((3, 4), 0.5), columns=names, index=range(3))),
        plot_evidence_prevalence(pd.DataFrame({0: 0.2, 1: 0.3, 2: 0.5}, index=names)),
        plot_completeness_curves(pd.DataFrame({"agent": names, "belief": "oracle", "step": 0, "mean": 0.5})),
        plot_query_diversity(pd.DataFrame({"agent": names, "belief": "$o$", "step": 1, "diversity": 0.5})),
        plot_coverage_by_bin(pd.DataFrame({"estimator": names, "bin": "$0$-1", "coverage": 0.9}), 0.9),
        plot_confusion_matrix(pd.DataFrame([[1, 2], [3, 4]], index=pd.Index(names[:2], name=names[2]),
                                           columns=pd.Index(names[2:], name=names[3]))),
        plot_kappa_cost(pd.DataFrame({"rater": names, "cost_per_trace": [1.0, 2.0, 3.0, np.nan], "score": 0.5,
                                      "lower": 0.4, "upper": 0.6, "on_front": True}), field="$f$"),
    ]
    for ax in axes:
        shown = _shown(ax.figure)
        for name in names:
            assert name in shown, (name, shown)
    assert "$A$" in _shown(axes[1].figure) and "$o$" in _shown(axes[5].figure) and "$f$" in _shown(axes[8].figure)
    legend = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert len(legend) == 4  # "_^{}" is not left out of the legend


def test_a_fitters_own_label_is_drawn_as_written():
    fitter = _fitters({MATH_NAMES[4]: 3})[MATH_NAMES[4]]
    ax = fitter.plot()
    assert [t.get_text() for t in ax.legend().get_texts()] == [r"a \$b\$ \\$c"]  # each $ escaped once
    assert MATH_NAMES[4] in _shown(ax.figure)
