#!/usr/bin/env python3
"""Labeling rules for the learned judge's grounding of reasoning steps: threshold against per-trace counts.

Issue 30 asks the out-of-fold labels to give RQI per agent within 0.05 of the humans'. The shipped
rule labels a step Grounded when its probability clears a prior-matched threshold, so an agent
whose steps sit just below it loses RQI and one whose steps sit just above gains it. This script
compares, on the training script's outer folds (5-fold GroupKFold by question, seed 0) with every
choice made inside the training folds:

- ``a``: the shipped prior-matched threshold (inner 5-fold grouped CV on the training fold);
- ``b``: per-trace classify-and-count: the trace gets ``k = floor(sum p + 1/2)`` Grounded steps,
  the ``k`` most probable (ties: earlier step first), ``p`` the model's probability of Grounded;
- ``c``: ``b`` with ``p`` calibrated by a map fitted on the inner out-of-fold probabilities of the
  training fold (isotonic, or Platt: a logistic regression on the logit);
- ``d``: the threshold's labels, but each trace's count of Grounded steps clamped to
  ``[floor(sum p), ceil(sum p)]`` of the calibrated ``p`` (most probable steps added, least
  probable removed);
- ``e``: a 0.5 threshold on the Platt-calibrated probability.

It also prints, per agent, the mean calibrated probability minus the humans' RQI ("soft"): what
any count rule on those probabilities can at best reach, since a count rule reproduces each
trace's summed probability up to rounding.

Usage (from the repository root; a minute or two per feature set)::

    PYTHONPATH=$PWD python scripts/bench/learned_count_variants.py --data ../shared/data/seekbench_human_190.jsonl
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

POSITIVE = "Grounded"


def isotonic_map(p: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Isotonic calibration fitted on ``(p, y)`` as two arrays, applied by linear interpolation (clipped ends)."""
    from sklearn.isotonic import IsotonicRegression

    fit = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(p, y)
    xs, ys = fit.X_thresholds_, fit.y_thresholds_
    return lambda q: np.interp(q, xs, ys)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def platt_map(p: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Platt calibration: ``sigmoid(a * logit(p) + b)``, ``a, b`` from an unpenalised logistic fit on ``(p, y)``."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=1000).fit(_logit(p).reshape(-1, 1), y)
    a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
    return lambda q: 1.0 / (1.0 + np.exp(-(a * _logit(q) + b)))


def count_labels(
    ids: list[tuple[str, int]], p: np.ndarray, *, rank: np.ndarray | None = None, base: np.ndarray | None = None
) -> np.ndarray:
    """Per-trace counts: True (Grounded) for the ``k`` highest-``rank`` steps of each trace.

    Parameters
    ----------
    ids : list of (trace_id, step)
        The steps, in trace and step order.
    p : ndarray
        Probability of Grounded per step; ``S`` is its sum over a trace.
    rank : ndarray, optional
        What orders a trace's steps (default ``p``); ties go to the earlier step.
    base : ndarray of bool, optional
        Labels of another rule: then ``k`` is their count clamped to ``[floor(S), ceil(S)]``;
        without it ``k = floor(S + 1/2)``.
    """
    p = np.asarray(p, dtype=float)
    rank = p if rank is None else np.asarray(rank, dtype=float)
    by_trace: dict[str, list[int]] = defaultdict(list)
    for i, (tid, _) in enumerate(ids):
        by_trace[tid].append(i)
    out = np.zeros(len(p), dtype=bool)
    for idx_list in by_trace.values():
        idx = np.asarray(idx_list)
        s = float(p[idx].sum())
        if base is None:
            k = math.floor(s + 0.5)
        else:
            k = int(np.clip(int(np.sum(base[idx])), math.floor(s), math.ceil(s)))
        order = idx[np.lexsort((np.arange(len(idx)), -rank[idx]))]  # highest first, then earlier step
        out[order[:k]] = True
    return out


def fold_probabilities(traces: list[dict], labels: dict, views: list, features: str, *, seed: int = 0) -> list[dict]:
    """Per outer fold: inner out-of-fold P(Grounded) and labels of the training steps, and P(Grounded) of test steps.

    The same folds, step order and inner split as the training script (:func:`grouped_folds`,
    :func:`seekbench.annotate.offline._fit.prior_matched_threshold`); test steps are all
    non-empty reasoning steps of the test traces, labeled by the humans or not, as the judge sees them.
    """
    from sklearn.model_selection import GroupKFold

    from seekbench.analysis._judge_eval import grouped_folds
    from seekbench.annotate.offline import question_groups
    from seekbench.annotate.offline._learned import fit_field_model, view_inputs

    groups = question_groups(traces)
    out = []
    for train_idx, test_idx in grouped_folds(traces):
        steps = [
            (v, labels[(v.trace_id, v.step, "grounding")], groups[i])
            for i in train_idx
            for v in views[i]
            if v.kind == "reasoning" and not v.is_empty and (v.trace_id, v.step, "grounding") in labels
        ]
        tv, ty, tg = [s[0] for s in steps], np.asarray([s[1] for s in steps]), [s[2] for s in steps]

        def fit(idx: np.ndarray, tv: list = tv, ty: np.ndarray = ty):
            return fit_field_model(
                "reasoning", "grounding", [tv[i] for i in idx], list(ty[idx]), seed=seed, features=features
            )

        def grounded(m, vs: list) -> np.ndarray:
            texts, scores = view_inputs(vs, m.score_names)
            q = m.proba(texts, scores)
            return q if m.classes[1] == POSITIVE else 1.0 - q

        inner = np.zeros(len(steps))
        for itr, ite in GroupKFold(n_splits=5).split(np.zeros(len(steps)), groups=tg):
            inner[ite] = grounded(fit(itr), [tv[i] for i in ite])
        model = fit(np.arange(len(steps)))
        test = [v for i in test_idx for v in views[i] if v.kind == "reasoning" and not v.is_empty]
        out.append(
            {
                "inner_p": inner,
                "inner_y": ty == POSITIVE,
                "inner_cls": model.classes,
                "ids": [(str(v.trace_id), v.step) for v in test],
                "p": grounded(model, test),
            }
        )
    return out


def threshold_labels(fold: dict) -> np.ndarray:
    """The shipped rule: the prior-matched threshold on the inner probabilities of the model's ``classes[1]``."""
    pos = fold["inner_cls"][1]
    q_inner = fold["inner_p"] if pos == POSITIVE else 1.0 - fold["inner_p"]
    q_test = fold["p"] if pos == POSITIVE else 1.0 - fold["p"]
    share = float(np.mean(fold["inner_y"] if pos == POSITIVE else ~fold["inner_y"]))
    cut = float(np.clip(np.quantile(q_inner, 1.0 - share), 1e-6, 1.0 - 1e-6))
    hit = q_test >= cut
    return hit if pos == POSITIVE else ~hit


def calibrated(fold: dict, how: str | None) -> np.ndarray:
    """Test P(Grounded), raw (``how`` None) or through a map fitted on the fold's inner out-of-fold probabilities."""
    if how is None:
        return fold["p"]
    make = isotonic_map if how == "isotonic" else platt_map
    return make(fold["inner_p"], fold["inner_y"].astype(int))(fold["p"])


VARIANTS: dict[str, Callable[[dict], np.ndarray]] = {
    "a: prior-matched threshold (shipped)": threshold_labels,
    "b: per-trace count, k = round(sum p), raw p": lambda f: count_labels(f["ids"], f["p"]),
    "c: per-trace count, isotonic p": lambda f: count_labels(f["ids"], calibrated(f, "isotonic"), rank=f["p"]),
    "c: per-trace count, Platt p": lambda f: count_labels(f["ids"], calibrated(f, "platt")),
    "d: threshold, count clamped to [floor, ceil] of sum isotonic p": lambda f: count_labels(
        f["ids"], calibrated(f, "isotonic"), rank=f["p"], base=threshold_labels(f)
    ),
    "d: threshold, count clamped to [floor, ceil] of sum Platt p": lambda f: count_labels(
        f["ids"], calibrated(f, "platt"), base=threshold_labels(f)
    ),
    "e: threshold 0.5 on Platt p": lambda f: calibrated(f, "platt") >= 0.5,
}


def evaluate(ids: list[tuple[str, int]], judged: np.ndarray, labels: dict, agent: dict[str, str]) -> tuple[float, dict]:
    """Cohen's kappa over the human-labeled steps, and per agent (human RQI, judge RQI) over those steps.

    ``judged`` may be probabilities (then the judge "RQI" is the mean probability; kappa is not meaningful).
    """
    from sklearn.metrics import cohen_kappa_score

    h_by, j_by = defaultdict(list), defaultdict(list)
    hs, js = [], []
    for (tid, step), j in zip(ids, judged, strict=True):
        h = labels.get((tid, step, "grounding"))
        if h is None:
            continue
        h_by[tid].append(h == POSITIVE)
        j_by[tid].append(float(j))
        hs.append(h == POSITIVE)
        js.append(float(j) >= 0.5)
    kappa = float(cohen_kappa_score(hs, js))
    rqi = {}
    for a in sorted(set(agent.values())):
        ts = [t for t in h_by if agent[t] == a]
        rqi[a] = (float(np.mean([np.mean(h_by[t]) for t in ts])), float(np.mean([np.mean(j_by[t]) for t in ts])))
    return kappa, rqi


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, required=True, help="labeled trace file (the 190 human-labeled traces)")
    p.add_argument("--no-embed", action="store_true", help="the lexical feature set only")
    p.add_argument("--seed", type=int, default=0, help="classifiers' random_state (default 0)")
    args = p.parse_args(argv)
    from seekbench.annotate.offline import add_embedding_scores, human_labels, minilm_encoder, trace_views
    from seekbench.traces import read_traces

    traces = sorted(read_traces(args.data).traces, key=lambda t: str(t["trace_id"]))
    labels = human_labels(traces)
    agent = {str(t["trace_id"]): str(t.get("agent")) for t in traces}
    views = trace_views(traces)
    feature_sets = ["lexical"]
    if not args.no_embed:
        enc = minilm_encoder()
        if enc is None:
            raise SystemExit("the local-embed extra is not installed (or pass --no-embed)")
        add_embedding_scores(views, enc)
        feature_sets.append("lexical+minilm")
    for features in feature_sets:
        folds = fold_probabilities(traces, labels, views, features, seed=args.seed)
        ids = [i for f in folds for i in f["ids"]]
        agents = None
        print(f"\n{features}\n| variant | kappa | max abs RQI diff | per-agent RQI diff |\n|---|---:|---:|---|")
        for name, rule in VARIANTS.items():
            k, rqi = evaluate(ids, np.concatenate([rule(f) for f in folds]), labels, agent)
            agents = agents or list(rqi)
            diffs = [j - h for h, j in rqi.values()]
            print(f"| {name} | {k:.3f} | {max(map(abs, diffs)):.3f} | {' '.join(f'{d:+.3f}' for d in diffs)} |")
        for how in (None, "isotonic", "platt"):
            _, rqi = evaluate(ids, np.concatenate([calibrated(f, how) for f in folds]), labels, agent)
            diffs = [j - h for h, j in rqi.values()]
            print(
                f"| soft: mean {how or 'raw'} p (no labels) | | {max(map(abs, diffs)):.3f} | "
                f"{' '.join(f'{d:+.3f}' for d in diffs)} |"
            )
        print(f"agents: {', '.join(agents or [])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
