"""Does the plan reach its target? Simulated follow-ups on the 190 human-labeled SeekBench traces.

A lighter version of ``scripts/bench/judge_plan_sim.py``: pilots of 30 traces drawn at
random (seeded); the rules judge's grounding of reasoning steps; the plan for a 95% CI
half-width of 0.15 (0.05 needs more traces than the 190 hold); the planned number of
further traces drawn from the rest; the half-width recomputed on pilot + follow-up. At
least 90% of the follow-ups must reach the target.

Needs ../shared/data/seekbench_human_190.jsonl (read in place; skipped when absent, fails
under CI=true).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from seekbench import UndefinedMetricWarning
from seekbench.agreement import plan_annotation
from seekbench.annotate.offline import load_offline_judge
from seekbench.labels import AnnotationSet

pytestmark = pytest.mark.shared_data

TARGET = 0.15
PILOTS = 20
PILOT_SIZE = 30


def _subset(labels: AnnotationSet, ids: set) -> AnnotationSet:
    recs = labels.records
    return AnnotationSet(recs[recs["trace_id"].astype(str).isin(ids)].reset_index(drop=True), name=labels.name)


def _grounding_row(ref, rules, traces, seed, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        plan = plan_annotation(ref, rules, traces=traces, fields=["grounding"], target=target, n_boot=1000, seed=seed)
    k = plan.kappa
    return k[(k["field"] == "grounding") & (k["step_kind"] == "reasoning")].iloc[0]


def test_planned_follow_ups_reach_the_target(shared_traces):
    traces = shared_traces
    human = AnnotationSet.from_traces(traces)
    judge = load_offline_judge({"name": "rules", "kind": "rules", "version": "1"})
    rules = AnnotationSet.from_records(judge.label_traces(traces, rater="rules"), name="rules")
    ids = np.array(sorted(str(t["trace_id"]) for t in traces))
    rng = np.random.default_rng(20261205)
    outcomes = []
    for p in range(PILOTS):
        pilot = set(rng.choice(ids, PILOT_SIZE, replace=False))
        row = _grounding_row(_subset(human, pilot), rules, traces, p, TARGET)
        k = row["traces_needed"]
        assert np.isfinite(k) and 0 < k <= len(ids) - PILOT_SIZE, row  # the target is reachable in the data
        rest = np.array(sorted(set(ids) - pilot))
        final = pilot | set(rng.choice(rest, int(k), replace=False))
        after = _grounding_row(_subset(human, final), rules, traces, 1000 + p, 1.0)  # target 1: no projection
        outcomes.append(after["half_width"] <= TARGET)
    assert np.mean(outcomes) >= 0.9, outcomes
