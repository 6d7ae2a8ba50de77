"""MetricOptions: checked once with one wording, carried whole, and equal to the single keywords."""

from __future__ import annotations

import dataclasses
import json
import typing
import warnings

import pytest
from _helpers import make_trace, tables
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UndefinedMetricWarning, UserInputError
from seekbench.agreement import compare_annotations, metric_sensitivity
from seekbench.labels import AnnotationSet
from seekbench.metrics import EvidenceRecoveryFitter, MetricOptions, answer_calibration, reasoning_quality, summarize

NAMES = [f.name for f in dataclasses.fields(MetricOptions)]
# The nine options and their allowed values, written out: a changed set must change this test too.
ALLOWED = {
    "evidence_mapping": ("sum", "sufficiency_first"),
    "evidence_scope": ("cumulative", "latest"),
    "ce_aggregate": ("trace", "pooled"),
    "ce_prevalence": ("global", "group"),
    "decision_points": ("turn", "step"),
    "recovery": ("evidence_or_correct", "evidence"),
    "erf_method": ("aalen_johansen", "km"),
    "time": ("turn", "step"),
    "rqi_aggregate": ("trace", "step"),
}
options_strategy = st.fixed_dictionaries({k: st.sampled_from(v) for k, v in ALLOWED.items()})


def test_the_nine_options_their_values_and_defaults():
    assert NAMES == list(ALLOWED)
    assert {n: MetricOptions.choices(n) for n in NAMES} == ALLOWED
    assert MetricOptions().as_dict() == {n: v[0] for n, v in ALLOWED.items()}  # the paper's definition first
    hints = typing.get_type_hints(MetricOptions)
    assert {n: typing.get_args(hints[n]) for n in NAMES} == ALLOWED  # the Literal is the one source


@pytest.mark.parametrize("name", list(ALLOWED))
def test_one_wording_for_a_bad_value_wherever_it_enters(name, tmp_path):
    expected = f"unknown {name} 'bogus'; choose one of: {', '.join(ALLOWED[name])}"
    with pytest.raises(UserInputError) as made:
        MetricOptions(**{name: "bogus"})
    with pytest.raises(UserInputError) as resolved:
        MetricOptions.resolve(MetricOptions(), **{name: "bogus"})
    with pytest.raises(UserInputError) as summarized:
        summarize(*tables([make_trace([("r", "G"), ("a",)])]), n_boot=0, **{name: "bogus"})
    assert str(made.value) == str(resolved.value) == str(summarized.value) == expected


def test_frozen_and_unknown_names_rejected():
    opts = MetricOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.time = "step"  # type: ignore[misc]
    with pytest.raises(UserInputError, match=r"unknown metric option\(s\) horizon; choose from: evidence_mapping"):
        MetricOptions.resolve(None, horizon=3)
    with pytest.raises(UserInputError, match="options must be a MetricOptions, got dict"):
        MetricOptions.resolve({"time": "step"})  # type: ignore[arg-type]
    with pytest.raises(UserInputError, match="unknown metric option"):
        MetricOptions.choices("method")


@given(options_strategy, options_strategy)
def test_resolve_puts_keywords_over_options(base, over):
    opts = MetricOptions.resolve(MetricOptions(**base), **over)
    assert opts == MetricOptions(**over)
    assert MetricOptions.resolve(MetricOptions(**base)) == MetricOptions(**base)  # nothing given: unchanged
    assert MetricOptions.resolve(MetricOptions(**base), **dict.fromkeys(over)) == MetricOptions(**base)  # None: unset
    assert MetricOptions(**base).evidence == {k: base[k] for k in ("evidence_mapping", "evidence_scope")}


# Two agents; x: T1 answers at E = 2 and is correct, T2 answers at E = 1 and is wrong, T3 never answers.
T1 = [("r", "G"), ("s",), ("o", "C", "I"), ("r", "N"), ("s",), ("o", "C", "S"), ("r", "G"), ("a",)]
T2 = [("r", "N"), ("r", "N"), ("s",), ("o", "U", "S"), ("r", "G"), ("r", "N"), ("a",)]
T3 = [("s",), ("o", "C", "S"), ("s",), ("o", "C", "S")]
T4 = [("r", "N"), ("s",), ("o", "C", "S"), ("r", "G"), ("a",)]
TRACES = [make_trace(T1, trace_id="t1", correct=True), make_trace(T2, trace_id="t2", correct=False),
          make_trace(T3, trace_id="t3"), make_trace(T4, trace_id="t4", agent="y", correct=True)]


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


@settings(deadline=None, max_examples=30)
@given(options_strategy)
def test_summarize_with_options_equals_summarize_with_keywords(chosen):
    steps, traces = tables(TRACES)
    by_options = _quiet(summarize, steps, traces, options=MetricOptions(**chosen), n_boot=0)
    by_keywords = _quiet(summarize, steps, traces, n_boot=0, **chosen)
    assert by_options.to_dict() == by_keywords.to_dict()
    assert list(by_options.options)[1:10] == NAMES and by_options.options["overcautious_window"] == 15


def test_summarize_options_reach_each_metric():
    """Each option changes what summarize reports exactly as the metric's own function does."""
    steps, traces = tables(TRACES)
    x = traces["agent"] == "x"
    sx, tx = steps[steps["trace_id"].isin(traces.loc[x, "trace_id"])], traces[x]
    opts = MetricOptions(rqi_aggregate="step", decision_points="step", erf_method="km", time="step",
                         evidence_scope="latest", recovery="evidence")
    g = _quiet(summarize, steps, traces, options=opts, n_boot=0).groups[0]
    rqi = reasoning_quality(sx, aggregate="step", evidence_scope="latest", n_boot=0)
    # RQI pooled over x's reasoning steps: 3 grounded of 7 labeled (T1: G N G, T2: N N G N; T3 none).
    assert g["rqi"] == rqi.value == pytest.approx(3 / 7)
    ce = _quiet(answer_calibration, sx, tx, decision_points="step", evidence_scope="latest", n_boot=0)
    assert g["ce"] == ce.ce
    erf = EvidenceRecoveryFitter(method="km", time="step", evidence_scope="latest", recovery="evidence").fit(sx, tx)
    assert g["recovered_by_8"] == erf.recovered_by(8)


def test_agreement_takes_options_and_keywords_alike():
    human = AnnotationSet.from_traces(TRACES)
    flipped = human.records["value"].replace({"Grounded": "NotGrounded", "NotGrounded": "Grounded"})
    judge = AnnotationSet(human.records.assign(rater="judge", value=flipped))
    opts = MetricOptions(erf_method="km", ce_aggregate="pooled")
    a = _quiet(compare_annotations, human, judge, traces=TRACES, n_boot=0, options=opts)
    b = _quiet(compare_annotations, human, judge, traces=TRACES, n_boot=0, erf_method="km", ce_aggregate="pooled")
    assert json.dumps(a.to_dict(), default=str) == json.dumps(b.to_dict(), default=str)  # NaN spelled alike
    assert {k: a.options[k] for k in NAMES} == opts.as_dict()
    s = _quiet(metric_sensitivity, TRACES, human, judge, n_boot=0, options=opts)
    assert s.table.equals(a.sensitivity.table) and s.options["erf_method"] == "km"
    with pytest.raises(UserInputError, match=r"metric options \(options\) need traces="):
        compare_annotations(human, judge, n_boot=0, options=opts)
    with pytest.raises(UserInputError, match=r"unknown metric option\(s\) method"):
        metric_sensitivity(TRACES, human, judge, n_boot=0, method="km")
