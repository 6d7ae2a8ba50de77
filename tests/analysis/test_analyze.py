"""``analyze``: one frozen result holding every number the report shows, equal to the public estimators'."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import seekbench
from seekbench import analysis
from seekbench.analysis import Analysis, agent_self_conformal, analyze, kappa_cost_table, self_estimate_states
from seekbench.env.conformal import evaluate_conformal
from seekbench.data import sample_traces_path
from seekbench.labels import AnnotationSet, load_annotations
from seekbench.metrics import EvidenceRecoveryFitter, audit_flag_rates, summarize, trace_audit, worst_traces
from seekbench.traces import build_tables, read_traces

PACKAGE = Path(seekbench.__file__).parent
SECOND = sample_traces_path().with_name("sample_second_annotator.jsonl")


@pytest.fixture(scope="module")
def sample():
    traces = read_traces(sample_traces_path()).traces
    steps, table = build_tables(traces)
    return traces, steps, table


@pytest.fixture(scope="module")
def result(sample):
    traces, steps, table = sample
    return analyze(steps, table, trace_dicts=traces, inputs={"files": "sample"}, n_boot=30, seed=3,
                   audit_options={"ungrounded_threshold": 0.5}, worst_n=2)


def test_result_is_frozen_with_provenance(result):
    assert isinstance(result, Analysis)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.n_traces = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.process.by = ("dataset",)  # type: ignore[misc]
    p = result.provenance
    assert p.seekbench_version == seekbench.__version__ and p.analysis_version == analysis.ANALYSIS_VERSION
    assert p.options["n_boot"] == 30 and p.options["seed"] == 3
    assert p.audit_options == {"ungrounded_threshold": 0.5} and p.inputs["files"] == "sample"
    assert p.inputs["labeled_steps"].endswith("labelable steps labeled")
    assert result.n_traces == 48 and result.n_steps == sum(len(t["steps"]) for t in read_traces(
        sample_traces_path()).traces)
    # No episodes, estimates or raters here: those parts are absent, never empty stand-ins.
    assert result.completeness is None and result.conformal is None and result.agreement is None
    assert result.explorer is not None and len(result.explorer) == 48


def test_numbers_are_the_public_estimators(sample, result):
    traces, steps, table = sample
    ref = summarize(steps, table, by=("agent",), n_boot=30, seed=3)
    pd.testing.assert_frame_equal(result.process.metrics_table, ref.to_frame())
    audit = trace_audit(steps, table, ungrounded_threshold=0.5)
    pd.testing.assert_frame_equal(result.audit.table, audit)
    pd.testing.assert_frame_equal(result.audit.rates, audit_flag_rates(audit))
    pd.testing.assert_frame_equal(result.audit.worst, worst_traces(audit, 2))
    assert result.audit.options["ungrounded_threshold"] == 0.5 and result.audit.options["min_reasoning_labeled"] == 3
    assert result.audit.n_flagged == int((audit["flags"] != "").sum())
    for agent, fitter in result.process.erf_fitters.items():
        ids = table.loc[table["agent"] == agent, "trace_id"]
        own = EvidenceRecoveryFitter().fit(steps[steps["trace_id"].isin(ids)], table[table["trace_id"].isin(ids)])
        pd.testing.assert_frame_equal(fitter.curve_, own.curve_)
    # Calibration: P(answer | E) per agent; each column is a probability or NaN (state never visited).
    cal = result.process.calibration.to_numpy(dtype=float)
    assert np.all(np.isnan(cal) | ((cal >= 0) & (cal <= 1)))
    assert np.allclose(result.process.prevalence.sum(axis=1), 1.0)


def test_agreement_part_and_its_pareto_front(sample):
    traces, steps, table = sample
    ref = AnnotationSet.from_traces(traces)
    judge = load_annotations(SECOND)
    a = analyze(steps, table, trace_dicts=traces, reference=ref, raters=[judge], explorer=False, n_boot=20)
    assert a.explorer is None and a.agreement is not None
    res = a.agreement.result
    assert set(res.raters) >= set(judge.raters)
    pts = a.agreement.kappa_cost
    assert list(pts.columns) == ["rater", "cost_per_trace", "latency_s_per_trace", "tokens_per_trace", "score",
                                 "lower", "upper", "known", "on_front"]
    # The sample's second annotator is a person: no cost, time or tokens, so no axis to plot on.
    assert a.agreement.cost_axis is None and not pts["known"].any()
    # Hand example of the front: costs 1, 2, 3 with kappa 0.6, 0.5, 0.8; the 2-cost judge is dominated
    # (dearer and worse than the first), an unknown cost is never on the front.
    summary = pd.DataFrame({"rater": list("abcd"), "field": "all (pooled)", "kappa": [0.6, 0.5, 0.8, 0.9],
                            "kappa_lower": 0.0, "kappa_upper": 1.0})
    costs = pd.DataFrame({"rater": list("abcd"), "cost_per_trace": [1.0, 2.0, 3.0, np.nan]})
    t = kappa_cost_table(summary, costs)
    assert t["on_front"].tolist() == [True, False, True, False] and t["known"].tolist() == [True, True, True, False]
    with pytest.raises(ValueError, match="reference"):
        analyze(steps, table, trace_dicts=traces, raters=[judge], explorer=False, n_boot=0)


def test_report_renders_the_result_and_computes_nothing(tmp_path, result):
    from seekbench.report import write_report

    # Change a number in the result: the written table shows it, so the report did not recompute it.
    process = dataclasses.replace(result.process,
                                  metrics_table=result.process.metrics_table.assign(rqi=0.123456))
    write_report(dataclasses.replace(result, process=process), tmp_path)
    assert set(pd.read_csv(tmp_path / "tables" / "metrics.csv")["rqi"]) == {0.123456}
    assert (tmp_path / "explorer.html").exists()


def _imports(path: Path) -> set[str]:
    """Absolute names of the seekbench modules ``path`` imports (relative imports resolved)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    pkg = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = list(pkg[: len(pkg) - node.level + 1]) if node.level else []
            mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return {n for n in names if n.startswith("seekbench")}


@pytest.mark.parametrize("path", sorted((PACKAGE / "report").glob("*.py")), ids=lambda p: p.name)
def test_report_imports_no_computing_package(path):
    computing = ("seekbench.metrics", "seekbench.agreement", "seekbench.env", "seekbench.annotate",
                 "seekbench.answers")
    bad = sorted(n for n in _imports(path) if n.startswith(computing))
    assert not bad, f"{path.name} imports {bad}"


def test_the_import_scan_sees_imports():
    # The scan above must be able to fail: it finds analysis' own imports of the computing packages.
    found = set().union(*(_imports(p) for p in (PACKAGE / "analysis").glob("*.py")))
    assert {"seekbench.metrics", "seekbench.agreement", "seekbench.env"} <= found


def test_layers_and_public_api():
    code = ("import sys, seekbench.analysis; print(','.join(m for m in ('seekbench.report', 'seekbench.cli', "
            "'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
    assert analysis.__all__
    for name in analysis.__all__:
        assert hasattr(analysis, name) and not name.startswith("_")


def test_episodes_add_completeness_and_estimates_conformal():
    from seekbench.env import default_corpus, make_agent, make_embedder, run_episodes

    docs = default_corpus().documents[:3]
    eps = run_episodes(docs, [make_agent("keyphrase"), make_agent("sentence")], ["deduplicated", "oracle"],
                       embedder=make_embedder("tfidf"), max_steps=3)
    steps, table = build_tables(eps)
    rng = np.random.default_rng(0)
    rows = [{"doc_id": f"d{d}", "state_id": f"d{d}#{k}", "true_completeness": c, "estimator": "keyphrase",
             "c_hat": float(np.clip(c + rng.normal(0, 0.05), 0, 1)), "reason": None}
            for d in range(20) for k, c in enumerate(rng.random(3))]
    with pytest.warns(Warning):  # unlabeled episodes: RQI, CE and ERF are undefined, and say so
        a = analyze(steps, table, trace_dicts=eps, estimates=pd.DataFrame(rows), alpha=0.2, explorer=False,
                    n_boot=0)
    assert a.conformal is not None and a.conformal.options["alpha"] == 0.2
    c = a.completeness
    assert c is not None and len(c.episodes) == 12 and c.n_documents == 3
    by = c.by_agent.set_index("agent")
    assert set(c.conformal_columns) >= {"coverage", "q_hat", "self_estimates"}
    # Each agent's q_hat and coverage calibrate its own per-step self-estimates (the scripted agents give one
    # per environment step: 3 steps x 6 episodes), not the synthetic estimator that happens to share its name.
    states = self_estimate_states(eps)
    for agent in ("keyphrase", "sentence"):
        own = states[states["estimator"] == agent]
        assert by.loc[agent, "self_estimates"] == len(own) == 18
        ref = evaluate_conformal(own, alpha=0.2).summary.iloc[0]
        assert by.loc[agent, "q_hat"] == pytest.approx(ref["q_hat"])
        assert by.loc[agent, "coverage"] == pytest.approx(ref["ref_coverage"])
        assert by.loc[agent, "coverage_ci_lower"] <= by.loc[agent, "coverage"] <= by.loc[agent, "coverage_ci_upper"]
    assert by["rqi"].isna().all()  # unlabeled steps: RQI undefined, never 0


def test_kappa_cost_axis_is_the_first_recorded_one():
    from seekbench.analysis._agreement import kappa_cost_axis

    summary = pd.DataFrame({"rater": ["a", "b"], "field": "all (pooled)", "kappa": [0.6, 0.7],
                            "kappa_lower": 0.5, "kappa_upper": 0.8})
    # Costs recorded as 0 (a local model) and latency known: cost would be a fake range, latency is real.
    costs = pd.DataFrame({"rater": ["a", "b"], "cost_per_trace": [0.0, 0.0], "latency_s_per_trace": [2.0, 1.0],
                          "tokens_per_trace": [900.0, 400.0]})
    t = kappa_cost_table(summary, costs)
    assert kappa_cost_axis(t) == "latency_s_per_trace"
    # b is faster (1 s < 2 s) and better (0.7 > 0.6): it alone is on the front.
    assert t["on_front"].tolist() == [False, True] and t["known"].all()
    t = kappa_cost_table(summary, costs.assign(cost_per_trace=[0.01, np.nan]))
    assert kappa_cost_axis(t) == "cost_per_trace" and t["known"].tolist() == [True, False]
    nothing = kappa_cost_table(summary, pd.DataFrame({"rater": ["a", "b"], "cost_per_trace": [np.nan, 0.0]}))
    assert kappa_cost_axis(nothing) is None and not nothing["on_front"].any()


def test_agent_self_conformal_hand_example():
    # Agent a estimates every state 0.1 too high: all scores are 0.1, so q_hat = 0.1 (any rank), every test state
    # is covered, and the interval [c, c + 0.2] lies inside [0, 1] (c <= 0.7), so its width is 0.2.
    # Agent b searched a single document: no split by document is possible, its numbers are n/a with the reason.
    def episode(agent, doc, cs, offset):
        return {"trace_id": f"{agent}{doc}", "agent": agent, "env": {"document_id": doc},
                "steps": [{"index": i, "kind": "search", "completeness": c, "self_estimate": c + offset}
                          for i, c in enumerate(cs)]}

    eps = [episode("a", f"d{d}", [0.0, 0.2, 0.4, 0.6], 0.1) for d in range(6)] + [episode("b", "d0", [0.0, 0.5], 0.2)]
    eps.append({"trace_id": "plain", "agent": "c", "steps": [{"index": 0, "kind": "search", "self_estimate": 0.5}]})
    t = agent_self_conformal(eps, alpha=0.1).set_index("agent")
    assert list(t.index) == ["a", "b"]  # c is not a seeking episode (no env)
    assert t.loc["a", "self_estimates"] == 24 and t.loc["a", "q_hat"] == pytest.approx(0.1)
    assert t.loc["a", "coverage"] == 1.0 and t.loc["a", "width"] == pytest.approx(0.2)
    assert t.loc["a", "coverage_ci_upper"] == 1.0 and t.loc["a", "conformal_note"] == ""
    assert pd.isna(t.loc["b", "q_hat"]) and "2 documents" in t.loc["b", "conformal_note"]
