#!/usr/bin/env python3
"""RQI per agent from the learned judge's out-of-fold labels against the humans' (issue 30's Done-when).

RQI (``/work/shared/spec/metrics.md`` section 3): per trace, the share of its labeled
reasoning steps that are Grounded; per agent, the mean over its traces with at least one.
The learned judge's figures come from pooled out-of-fold labels of the training script's
grouped cross-validation, so every trace is labeled by a model that never saw its question.

Without ``--data`` the figures are read from the shipped validation record
(``seekbench/judges/validation/learned.json``, written by ``scripts/train_learned_judge.py``).
With ``--data`` the cross-validation is rerun (a few minutes) and, per agent, the bootstrap
standard error of the judge-minus-humans difference over the agent's traces is printed too:
with 34 to 40 traces per agent it is 0.036 to 0.060, so a difference below 0.05 for all five
agents is partly luck even for a judge whose errors do not depend on the agent.

With ``--fold-seeds N`` the cross-validation is also rerun with N other assignments of the
questions to the 5 folds (seeds 1..N, questions shuffled, then dealt round-robin), and the mean
difference per agent and the largest difference of each assignment are printed: how much the
shipped figure owes to one way of splitting 190 traces.

Usage (from the repository root)::

    PYTHONPATH=$PWD python scripts/bench/learned_rqi.py
    PYTHONPATH=$PWD python scripts/bench/learned_rqi.py --data ../shared/data/seekbench_human_190.jsonl
    PYTHONPATH=$PWD python scripts/bench/learned_rqi.py --data ../shared/data/seekbench_human_190.jsonl \
        --no-embed --fold-seeds 6
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

RECORD = REPO / "seekbench" / "judges" / "validation" / "learned.json"


def from_record(path: Path) -> dict[str, list[tuple[str, float, float, float | None]]]:
    """Feature set -> [(agent, human RQI, judge RQI, None)] from a validation record."""
    rec = json.loads(path.read_text(encoding="utf-8"))
    return {
        str(res["features"]): [(r["agent"], r["reference"], r["judge"], None) for r in res["rqi"]]
        for res in rec["results"]
    }


def per_trace_rqi(labels: dict, steps: set) -> dict[str, float]:
    """Trace id -> share of Grounded among its reasoning steps in ``steps`` that ``labels`` label."""
    by_trace: dict[str, list[bool]] = defaultdict(list)
    for tid, step in sorted(steps):
        value = labels.get((tid, step, "grounding"))
        if value is not None:
            by_trace[tid].append(value == "Grounded")
    return {t: float(np.mean(v)) for t, v in by_trace.items()}


def shuffled_folds(traces: list[dict], seed: int, n_splits: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """Folds by question, as the training script's, with the questions dealt to folds in a seeded random order."""
    from seekbench.annotate.offline import question_groups

    groups = question_groups(traces)
    order = sorted(set(groups))
    perm = np.random.default_rng(seed).permutation(len(order))
    fold_of = {order[i]: k % n_splits for k, i in enumerate(perm)}
    test = np.array([fold_of[g] for g in groups])
    return [(np.where(test != k)[0], np.where(test == k)[0]) for k in range(n_splits)]


def load(data: Path, *, embed: bool) -> tuple[list[dict], dict, list, list]:
    """The traces sorted by id, their human labels, their step views, and the encoders to score with.

    The encoders are None (lexical) and, with ``embed``, MiniLM, whose scores are computed here once
    and kept in the views for every cross-validation run.
    """
    from seekbench.annotate.offline import add_embedding_scores, human_labels, minilm_encoder, trace_views
    from seekbench.traces import read_traces

    traces = sorted(read_traces(data).traces, key=lambda t: str(t["trace_id"]))
    views = trace_views(traces)
    encoders: list = [None]
    if embed:
        enc = minilm_encoder()
        if enc is None:
            raise SystemExit("the local-embed extra is not installed (or pass --no-embed)")
        add_embedding_scores(views, enc)
        encoders.append(enc)
    return traces, human_labels(traces), views, encoders


def from_cv(loaded: tuple, *, n_boot: int, seed: int,
            folds: list | None = None) -> dict[str, list[tuple[str, float, float, float]]]:
    """Rerun the grouped CV on :func:`load`'s data (``folds``: another assignment); per feature set and
    agent: human RQI, OOF RQI, bootstrap SE of their difference."""
    from seekbench.analysis import cross_validate_learned

    traces, reference, views, encoders = loaded
    agent = {str(t["trace_id"]): str(t.get("agent")) for t in traces}
    reasoning = {(str(t["trace_id"]), s["index"]) for t in traces for s in t["steps"] if s["kind"] == "reasoning"}
    out = {}
    rng = np.random.default_rng(seed)
    for enc in encoders:
        cv = cross_validate_learned(traces, reference, encoder=enc, views=views, seed=seed, folds=folds)
        judged = {(r["trace_id"], r["step"], r["field"]): r["value"] for r in cv.records}
        # The steps both label, as the validation record compares them.
        both = {k for k in reasoning if (*k, "grounding") in reference and judged.get((*k, "grounding"))}
        h, j = per_trace_rqi(reference, both), per_trace_rqi(judged, both)
        rows = []
        for a in sorted(set(agent.values())):
            ids = sorted(t for t in h if agent[t] == a)
            d = np.array([j[t] - h[t] for t in ids])
            boot = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(n_boot)]
            human_rqi, judge_rqi = float(np.mean([h[t] for t in ids])), float(np.mean([j[t] for t in ids]))
            rows.append((a, human_rqi, judge_rqi, float(np.std(boot)) if boot else float("nan")))
        out["lexical" if enc is None else "lexical+minilm"] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--record", type=Path, default=RECORD, help="validation record to read (default: the shipped one)")
    p.add_argument("--data", type=Path, help="rerun the cross-validation on this labeled trace file instead")
    p.add_argument("--no-embed", action="store_true", help="with --data: the lexical feature set only")
    p.add_argument("--n-boot", type=int, default=2000, help="with --data: bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="folds' classifiers and the bootstrap (default 0)")
    p.add_argument("--tolerance", type=float, default=0.05, help="allowed |judge - human| per agent (default 0.05)")
    p.add_argument("--fold-seeds", type=int, default=0,
                   help="with --data: also rerun with this many other fold assignments (seeds 1..N) and summarise")
    args = p.parse_args(argv)
    loaded = load(args.data, embed=not args.no_embed) if args.data else None
    tables = from_cv(loaded, n_boot=args.n_boot, seed=args.seed) if loaded else from_record(args.record)
    ok = True
    for features, rows in tables.items():
        print(f"\n{features}\n| agent | human RQI | out-of-fold RQI | difference | bootstrap SE |")
        print("|---|---:|---:|---:|---:|")
        for a, h, j, se in rows:
            print(f"| {a} | {h:.3f} | {j:.3f} | {j - h:+.3f} | {'' if se is None else f'{se:.3f}'} |")
        worst = max(abs(j - h) for _, h, j, _ in rows)
        ok &= worst <= args.tolerance
        print(f"max |difference| {worst:.3f} ({'within' if worst <= args.tolerance else 'above'} {args.tolerance})")
    if loaded and args.fold_seeds:
        robustness(args, loaded, tables)
    return 0 if ok else 1


def robustness(args: argparse.Namespace, loaded: tuple, shipped: dict) -> None:
    """Per feature set: the mean difference per agent and each assignment's largest, over other fold assignments."""
    traces = loaded[0]
    runs = [shipped] + [
        from_cv(loaded, n_boot=0, seed=args.seed, folds=shuffled_folds(traces, s))
        for s in range(1, args.fold_seeds + 1)
    ]
    for features in shipped:
        diffs = np.array([[j - h for _, h, j, _ in run[features]] for run in runs])
        worst = np.abs(diffs).max(axis=1)
        print(f"\n{features}: {len(runs)} fold assignments (the script's, then seeds 1..{args.fold_seeds})")
        print("| agent | mean difference | smallest | largest |\n|---|---:|---:|---:|")
        for i, (a, *_) in enumerate(shipped[features]):
            print(f"| {a} | {diffs[:, i].mean():+.3f} | {diffs[:, i].min():+.3f} | {diffs[:, i].max():+.3f} |")
        within = int((worst <= args.tolerance).sum())
        print("largest |difference| per assignment: " + " ".join(f"{w:.3f}" for w in worst)
              + f"; mean {worst.mean():.3f}; within {args.tolerance}: {within} of {len(runs)}")


if __name__ == "__main__":
    sys.exit(main())
