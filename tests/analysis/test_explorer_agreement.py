"""The explorer's agreement table is ``compare_annotations``'s, and each rater's disagreement links list
that rater's disagreements only (sample data; the shared 190 traces against ``seekbench agree --json``)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from seekbench._resources import sample_path
from seekbench.agreement import RULE_RATER, compare_annotations
from seekbench.analysis import explorer_data
from seekbench.labels import AnnotationSet, load_annotations
from seekbench.traces import build_tables, read_traces

ROW_NUMBERS = ("n_compared", "raw_agreement", "kappa", "kappa_lower", "kappa_upper", "ac1", "ac1_lower", "ac1_upper")


def _renamed(labels: AnnotationSet, name: str, change=None) -> AnnotationSet:
    """A copy of ``labels`` as rater ``name``; ``change(records)`` edits the copy's records in place."""
    r = labels.records.copy()
    r["rater"] = name
    if change is not None:
        change(r)
    return AnnotationSet.from_records(r.to_dict("records"), name=name)


@pytest.fixture(scope="module")
def sample():
    traces = read_traces(sample_path("traces")).traces
    human = load_annotations(sample_path("human"))
    second = load_annotations(sample_path("second"))
    # "echo" copies the reference except on two steps of one trace that "second" agrees with the reference on.
    comp = compare_annotations(human, second, traces=traces, n_boot=0)
    agreed = set(comp.disagreements["trace_id"])
    ref = human.records
    tid = next(t for t in ref["trace_id"].astype(str).unique() if t not in agreed)
    r = ref[(ref["trace_id"].astype(str) == tid) & (ref["field"] == "grounding")]
    steps = [int(s) for s in r["step"][:2]]

    def flip(recs: pd.DataFrame) -> None:
        for s in steps:
            at = (recs["trace_id"].astype(str) == tid) & (recs["step"] == s) & (recs["field"] == "grounding")
            recs.loc[at, "value"] = recs.loc[at, "value"].map({"Grounded": "NotGrounded"}).fillna("Grounded")

    echo = _renamed(human, "echo", flip)
    steps_df, traces_df = build_tables(traces)
    agreement = compare_annotations(human, second, echo, traces=traces, n_boot=50, seed=3)
    data = explorer_data(traces, steps_df, traces_df, reference=human, raters=[second, echo], agreement=agreement)
    return data, agreement, tid, second.raters[0]


def _rows(data) -> dict:
    return {(r["rater"], r["field"], r["step_kind"]): r for r in data.meta["agreement"]["rows"]}


def test_rows_are_the_agreement_summary(sample):
    data, agreement, _, _ = sample
    rows = data.meta["agreement"]["rows"]
    summary = agreement.summary.to_dict("records")
    assert [(r["rater"], r["field"], r["step_kind"]) for r in rows] == [
        (s["rater"], s["field"], s["step_kind"]) for s in summary
    ]
    for r, s in zip(rows, summary, strict=True):
        for k in ROW_NUMBERS:
            assert r[k] == s[k] or (r[k] is None and math.isnan(s[k])), (r["rater"], r["field"], k)
        # The links count the off-diagonal cells of the same confusion matrix.
        if r["n_compared"]:
            assert r["n_disagree"] == round(r["n_compared"] * (1 - r["raw_agreement"]))
    assert data.meta["agreement"]["n_boot"] == 50 and data.meta["agreement"]["seed"] == 3
    json.dumps(data.meta, allow_nan=False)  # NaN is None: the page's data is strict JSON


def test_each_raters_links_list_its_own_disagreements(sample):
    data, _, tid, second = sample
    pos = data.index["id"].index(tid)
    rows = _rows(data)
    # echo disagrees on that trace only (two grounding labels); the second annotator agrees there, elsewhere not.
    echo_rows = {k: r for k, r in rows.items() if k[0] == "echo"}
    assert {p for r in echo_rows.values() for p in r["traces"]} == {pos}
    assert sum(r["n_disagree"] for k, r in echo_rows.items() if k[1] != "all (pooled)") == 2
    assert all(pos not in r["traces"] for k, r in rows.items() if k[0] == second)
    assert any(r["traces"] for k, r in rows.items() if k[0] == second)
    # The trace's detail names the rater of each disagreement: echo's two, none of the second annotator's.
    detail = next(d for d in data.details() if d["id"] == tid)
    raters = [d["rater"] for d in detail["dis"]]
    assert raters.count("echo") == 2 and second not in raters
    assert data.index["dis"][pos] == len(detail["dis"])


def test_rule_derived_labels_are_rows_of_their_own():
    traces = read_traces(sample_path("traces")).traces
    human = load_annotations(sample_path("human"))
    h = human.records
    search = h[(h["field"] == "search_type")]
    first = search.groupby("trace_id").head(1)  # each trace's first query: the rule would say InitialQuery
    keys = set(zip(first["trace_id"], first["step"], strict=True))

    def as_rule(recs: pd.DataFrame) -> None:
        at = [
            (t, s) in keys and f == "search_type"
            for t, s, f in zip(recs["trace_id"], recs["step"], recs["field"], strict=True)
        ]
        recs.loc[at, "provenance"] = pd.Series(
            [{"kind": "rule", "rule": "initial"}] * sum(at), index=recs.index[at], dtype=object
        )
        recs.loc[at, "value"] = "RefinedQuery"  # every rule label off: each is a rule-derived disagreement

    judge = _renamed(human, "ruley", as_rule)
    steps_df, traces_df = build_tables(traces)
    data = explorer_data(traces, steps_df, traces_df, reference=human, raters=[judge])
    rows = _rows(data)
    rule = rows[(RULE_RATER, "search_type", "search")]
    own = rows[("ruley", "search_type", "search")]
    assert rule["n_compared"] == len(first) == rule["n_disagree"]
    assert own["n_disagree"] == 0 and own["n_rule_derived"] == len(first)
    assert len(rule["traces"]) == first["trace_id"].nunique()
    detail = next(data.details())
    (d,) = [d for d in detail["dis"] if d["field"] == "search_type"]
    assert d["rater"] == RULE_RATER and d["explanation"] == "rule initial"
