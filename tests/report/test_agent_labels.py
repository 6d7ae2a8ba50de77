"""Short agent labels: derived, overridable, unambiguous; shown in figures and page tables, CSVs keep full names."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from seekbench._errors import UserInputError
from seekbench.report import parse_label_options, plot_comparison, short_labels
from seekbench.report._agent_labels import relabeled

#: The five agents of the SeekBench release's human-labeled traces.
RELEASE = ["fewshot-Qwen2.5-7B-Instruct", "ReSearch-Qwen-7B-Instruct", "Qwen2.5-7B-Instruct",
           "SearchR1-nq_hotpotqa_train-qwen2.5-7b-em-ppo-v0.3", "DeepResearcher-7b"]


def test_release_names_by_hand():
    # No word is shared by all five at either end. Past 24 characters, filler words go from the right
    # (Instruct; nq, hotpotqa, train, em), then model families (qwen2.5); first words, sizes (7b), methods
    # (ppo) and version tags (v0.3) stay. Names of 24 characters or fewer are kept whole.
    assert short_labels(RELEASE) == {
        "fewshot-Qwen2.5-7B-Instruct": "fewshot-Qwen2.5-7B",
        "ReSearch-Qwen-7B-Instruct": "ReSearch-Qwen-7B",
        "Qwen2.5-7B-Instruct": "Qwen2.5-7B-Instruct",
        "SearchR1-nq_hotpotqa_train-qwen2.5-7b-em-ppo-v0.3": "SearchR1-7b-ppo-v0.3",
        "DeepResearcher-7b": "DeepResearcher-7b",
    }


def test_common_prefix_and_suffix_removed_but_never_to_a_stub():
    names = ["acme/search-agent-alpha-run-2026-11-30-seed1", "acme/search-agent-beta-run-2026-11-30-seed1"]
    # common words: acme, search, agent (prefix) and run, 2026, 11, 30, seed1 (suffix)
    assert short_labels(names) == {names[0]: "alpha", names[1]: "beta"}
    # "a" and "b" would be stubs (under 3 characters): the last prefix word comes back
    stubs = ["org/model-a-run-2024-01-01-seed1", "org/model-b-run-2024-01-01-seed1"]
    assert list(short_labels(stubs).values()) == ["model-a", "model-b"]


def test_short_names_are_kept_whole_and_order_is_kept():
    names = ["looper", "careful-planner", "eager-answerer"]
    assert list(short_labels(names).items()) == [(n, n) for n in names]


def test_labels_that_would_collide_fall_back_to_full_names():
    a, b = "team-x-nq_train-qwen2.5-7b-instruct-final", "team-x-hotpotqa_train-qwen2.5-7b-instruct-final"
    labels = short_labels([a, b, "team-x-other"])
    assert len(set(labels.values())) == 3
    assert labels[a] != labels[b]


def test_every_label_fits_and_is_unique_on_long_random_names():
    names = [f"lab-{w}-experiment-{i}-llama3.1-70b-grpo-step{i * 100}-dataset_mix_{i}" for i, w in
             enumerate(["red", "green", "blue", "amber", "teal"])]
    labels = short_labels(names)
    assert all(len(v) <= 24 for v in labels.values()), labels
    assert len(set(labels.values())) == len(names)


def test_overrides_win_and_are_checked():
    labels = short_labels(RELEASE, overrides={"DeepResearcher-7b": "DR"})
    assert labels["DeepResearcher-7b"] == "DR" and labels["Qwen2.5-7B-Instruct"] == "Qwen2.5-7B-Instruct"
    with pytest.raises(UserInputError, match="'gpt-9' is not an agent"):
        short_labels(RELEASE, overrides={"gpt-9": "G"})
    with pytest.raises(UserInputError, match="would both be shown as 'Qwen2.5-7B-Instruct'"):
        short_labels(RELEASE, overrides={"DeepResearcher-7b": "Qwen2.5-7B-Instruct"})


def test_parse_label_options():
    assert parse_label_options(["a-b=AB", "x=y=z"]) == {"a-b": "AB", "x=y": "z"}
    for bad in ("no-equals", "=short", "full="):
        with pytest.raises(UserInputError, match="FULL=SHORT"):
            parse_label_options([bad])


@pytest.fixture(scope="module")
def sample_analysis():
    from seekbench.analysis import analyze
    from seekbench.data import sample_traces_path
    from seekbench.traces import build_tables, read_traces

    traces = read_traces(sample_traces_path()).traces
    return analyze(*build_tables(traces), trace_dicts=traces, n_boot=50, explorer=False)


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]


def test_relabeled_renames_every_agent_for_the_page_and_leaves_the_original(sample_analysis):
    labels = {"careful-planner": "CP", "eager-answerer": "EA", "looper": "LO", "synthesizer": "SY"}
    view = relabeled(sample_analysis, labels)
    assert view.comparison.agents == ("CP", "EA", "LO", "SY")
    assert set(view.process.metrics_table["agent"]) == {"CP", "EA", "LO", "SY"}
    assert set(view.process.erf_fitters) == {"CP", "EA", "LO", "SY"}
    assert set(view.audit.table["agent"]) == {"CP", "EA", "LO", "SY"}
    assert all("careful-planner" not in s for s in view.comparison.metrics["sentence"])
    assert any("CP" in s for s in view.comparison.metrics["sentence"])
    assert sample_analysis.comparison.agents[0] == "careful-planner"  # the original is unchanged
    fig = plot_comparison(view.comparison)
    ticks = sorted(fig.axes[0].get_yticklabels(), key=lambda t: -t.get_position()[1])
    assert [t.get_text() for t in ticks] == ["CP", "EA", "LO", "SY"]  # top to bottom in the report's order
    assert not any(name in text for text in _texts(fig) for name in labels)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_comparison_figure_marks_each_verdict(sample_analysis):
    from seekbench.report._comparison_figure import VERDICT_STYLE, verdict_of

    c = sample_analysis.comparison
    rows = c.against_baseline()
    verdicts = {verdict_of(r) for _, r in rows[rows["agent"] != rows["baseline"]].iterrows()}
    assert verdicts <= set(VERDICT_STYLE) and len(verdicts) >= 2
    fig = plot_comparison(c)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 8  # one panel per headline metric
    assert any("higher is better" in ax.get_xlabel() for ax in fig.axes)
    assert any("lower is better" in ax.get_xlabel() for ax in fig.axes)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_report_label_option_and_best_baseline(cli, tmp_path):
    out = tmp_path / "r"
    res = cli("report", "-o", out, "--n-boot", "50", "--label", "careful-planner=CP", "--baseline", "best")
    assert res.code == 0, res
    agents = list(csv.DictReader((out / "tables" / "agents.csv").open()))
    assert [(r["agent"], r["label"]) for r in agents][0] == ("careful-planner", "CP")
    html = (out / "report.html").read_text()
    assert "<b>CP</b> = careful-planner" in html and "Differences against each metric&#x27;s best agent" in html
    t = pd.read_csv(out / "tables" / "comparison.csv")
    assert "careful-planner" in set(t["agent"]) and "CP" not in set(t["agent"])  # CSVs keep full names
    s = pd.read_csv(out / "tables" / "comparison_summary.csv").set_index("metric")
    for metric, rows in t.groupby("metric"):
        best = s.loc[metric, "best"].split(", ")[0]
        assert set(rows["baseline"]) == {best} == {s.loc[metric, "baseline"]}, metric
        own = rows[rows["agent"] == best]
        assert own["difference"].tolist() == [0.0]


def test_report_label_for_an_unknown_agent_is_a_user_error(cli, tmp_path):
    res = cli("report", "-o", tmp_path / "r", "--n-boot", "20", "--label", "gpt-9=G")
    assert res.code == 2 and "'gpt-9' is not an agent" in res.err and "Traceback" not in res.err
    assert not (tmp_path / "r" / "report.html").exists()
