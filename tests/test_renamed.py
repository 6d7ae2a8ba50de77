"""Renamed keywords, keys and attributes (issue 26): each old name still works for one release and warns."""

import warnings

import pytest

from seekbench._errors import UserInputError
from seekbench.analysis import analyze
from seekbench.data import sample_traces_path
from seekbench.metrics import answer_calibration, summarize, summarize_statistics, trace_statistics
from seekbench.traces import build_tables, read_traces


@pytest.fixture(scope="module")
def sample():
    traces = read_traces(sample_traces_path()).traces
    return traces, *build_tables(traces)


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def test_horizon_is_overcautious_window(sample):
    _, steps, table = sample
    new = _quiet(summarize, steps, table, n_boot=0, overcautious_window=1)
    with pytest.warns(FutureWarning, match=r"summarize\(horizon=...\) is renamed overcautious_window"):
        old = summarize(steps, table, n_boot=0, horizon=1)
    assert old.options["overcautious_window"] == 1 and "horizon" not in old.options
    assert [g["overcautious"] for g in old.groups] == [g["overcautious"] for g in new.groups]
    stats = _quiet(trace_statistics, steps, table)
    with pytest.warns(FutureWarning, match="summarize_statistics"):
        assert summarize_statistics(stats, n_boot=0, horizon=1).options["overcautious_window"] == 1
    with pytest.warns(FutureWarning, match="answer_calibration"):
        cal = answer_calibration(steps, table, horizon=1, n_boot=0)
    assert cal.options["overcautious_window"] == 1


def test_both_spellings_is_a_user_error(sample):
    _, steps, table = sample
    with pytest.warns(FutureWarning), pytest.raises(UserInputError, match="overcautious_window only"):
        summarize(steps, table, n_boot=0, horizon=1, overcautious_window=2)


def test_analyze_takes_the_old_keyword(sample):
    traces, steps, table = sample
    with pytest.warns(FutureWarning, match=r"analyze\(horizon=...\)"):
        a = analyze(steps, table, trace_dicts=traces, n_boot=0, horizon=1)
    assert a.process.summary.options["overcautious_window"] == 1


def test_median_recovery_time_is_median_recovery_turn():
    import pandas as pd

    from seekbench.metrics import EvidenceRecoveryFitter

    ev = pd.DataFrame({"duration": [1, 2, 2, 3], "event": ["recovered", "stopped", "recovered", "cut_off"]})
    f = EvidenceRecoveryFitter().fit_events(ev)
    assert f.median_recovery_turn_ == 2.0 and f.summary.iloc[0]["median_recovery_turn"] == 2.0
    assert "median_recovery_time" not in f.summary.columns
    with pytest.warns(FutureWarning, match="renamed median_recovery_turn_"):
        assert f.median_recovery_time_ == 2.0


def test_ce_fields_have_the_summary_names(sample):
    _, steps, table = sample
    cal = _quiet(answer_calibration, steps, table, n_boot=0)
    assert "answer_rate" in cal.answer_table.columns and "p_answer" not in cal.answer_table.columns
    g = _quiet(summarize, steps, table, n_boot=0).groups[0]
    first = _quiet(answer_calibration, steps, table[table["agent"] == g["agent"]], n_boot=0)
    assert g["n_reached_e2"] == first.n_reached_e2
    with pytest.warns(FutureWarning, match="renamed overcautious_given_e2"):
        assert cal.overcautious_given_evidence == cal.overcautious_given_e2
    with pytest.warns(FutureWarning, match="renamed n_reached_e2"):
        assert cal.n_reached_evidence == cal.n_reached_e2


def test_agreement_and_comparison_take_the_old_keyword(sample):
    from seekbench.agreement import compare_annotations, metric_sensitivity
    from seekbench.analysis import compare_agents
    from seekbench.labels import AnnotationSet

    human = AnnotationSet.from_records(
        [
            {
                "trace_id": "a",
                "step": 0,
                "field": "grounding",
                "value": "Grounded",
                "rater": "h",
                "provenance": {"kind": "human"},
            }
        ]
    )
    for fn in (compare_annotations, metric_sensitivity):
        with pytest.warns(FutureWarning, match=rf"{fn.__name__}\(horizon=...\)"):
            _quiet_but_future(fn, [] if fn is metric_sensitivity else human, human, human, n_boot=0, horizon=3)
    _, steps, table = sample
    summary = _quiet(summarize, steps, table, n_boot=0)
    with pytest.warns(FutureWarning, match=r"compare_agents\(horizon=...\)"):
        res = _quiet_but_future(compare_agents, steps, table, summary, n_boot=0, horizon=3)
    assert res.options["overcautious_window"] == 3


def _quiet_but_future(fn, *a, **kw):
    """Call ``fn``, ignoring every warning but the FutureWarning the test looks for; errors after the
    keyword was resolved (e.g. an empty input) do not matter here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", FutureWarning)
        try:
            return fn(*a, **kw)
        except UserInputError:
            return None
