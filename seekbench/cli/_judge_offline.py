"""``seekbench judge train`` and ``seekbench judge evaluate``: the offline judges' commands.

``seekbench.cli._judge`` creates the ``judge`` group and calls
:func:`register_cli` with its subparsers. The commands are thin: read the
traces and the reference labels, call the Python API, print.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..analysis import (
    agreement_summary,
    agreement_table,
    cross_validate_learned,
    evaluate_judge,
    format_number,
    model_card_markdown,
    train_learned_model,
)
from ..annotate.offline import LearnedJudge, LearnedModel, RulesJudge, human_labels, question_groups
from ..traces import read_traces
from ._options import (
    add_command,
    add_format_option,
    add_json,
    add_label_options,
    add_output,
    add_seed,
    add_skip_invalid,
)

TRAIN_HELP = "train the learned offline judge on human-labeled traces"

TRAIN_DESCRIPTION = (
    "Fit one logistic regression per label field on human step labels (TF-IDF of the step text "
    "plus lexical overlap scores; for the grounding of reasoning steps, averaged with boosted "
    "trees on those scores), report grouped cross-validation (folds never share a "
    "question or a trace), and save the model as JSON with a model card (MODEL.card.md)."
)

EVALUATE_HELP = "agreement of the offline judges with human labels"

EVALUATE_DESCRIPTION = (
    "Per-field agreement (n, accuracy, Cohen's kappa) with the human labels of FILE: the rules "
    "judge on every trace, and the learned judge under grouped cross-validation (trained "
    "only on folds that share no question and no trace with the test fold)."
)


def register_cli(judge_subparsers) -> None:
    """Add ``train`` and ``evaluate`` to the ``seekbench judge`` subcommands.

    Parameters
    ----------
    judge_subparsers : argparse._SubParsersAction
        What ``parser.add_subparsers()`` returned for the ``judge`` group.
    """
    tp = add_command(judge_subparsers, "train", help=TRAIN_HELP, description=TRAIN_DESCRIPTION)
    tp.add_argument(
        "--human",
        required=True,
        metavar="FILE",
        nargs="+",
        help="trace file(s) with human labels inline (or use --labels)",
    )
    add_output(tp, metavar="MODEL", help="model file to write (JSON); its model card beside it (MODEL.card.md)")
    _common(tp)
    tp.set_defaults(run=run_train)

    ep = add_command(judge_subparsers, "evaluate", help=EVALUATE_HELP, description=EVALUATE_DESCRIPTION)
    ep.add_argument("files", nargs="+", metavar="FILE", help="trace file(s) with human labels inline (or --labels)")
    ep.add_argument(
        "--model",
        metavar="MODEL",
        default=None,
        help="also score this saved learned model on FILE as it is (no retraining)",
    )
    add_json(ep, what="one JSON object instead of the table")
    _common(ep)
    ep.set_defaults(run=run_evaluate)


def _common(p: argparse.ArgumentParser) -> None:
    add_label_options(
        p,
        labels_help="annotation set holding the human labels (default: the labels inline in the traces)",
        rater_aliases=("--rater",),  # the old spelling here; --labels-rater as on metrics and report
    )
    add_seed(p, of="classifiers (their random_state) and of the folds")
    p.add_argument("--folds", type=int, default=5, help="grouped cross-validation folds (default 5)")
    add_format_option(p)
    add_skip_invalid(p, what="invalid trace records")


def _load(files: list[str], args: argparse.Namespace) -> tuple[list[dict], dict]:
    read = read_traces(files, format=args.format, skip_invalid=args.skip_invalid)
    if read.skipped:
        print(
            f"seekbench: skipped {read.n_skipped} invalid trace records; first: {read.skipped[0].one_line()}",
            file=sys.stderr,
        )
    records = None
    if args.labels:
        from ..labels import load_annotations

        records = load_annotations(args.labels).records
    return read.traces, human_labels(read.traces, records, rater=args.labels_rater)


def run_train(args: argparse.Namespace) -> int:
    traces, labels = _load(args.human, args)
    model = train_learned_model(traces, labels, seed=args.seed, n_splits=args.folds, source=args.human[0])
    out = Path(args.output)
    model.save(out)
    card = out.with_name(out.stem + ".card.md")
    from .._io import write_text

    write_text(card, model_card_markdown(model))
    print(
        f"trained {len(model.fields)} classifiers on {len(traces)} traces ({len(labels)} labels); "
        f"wrote {out} and {card}"
    )
    for key, reason in sorted(model.unsupported.items()):
        print(f"  not labeled: {key}: {reason}")
    cv = model.card.get("cv") or {}
    for row, r in (cv.get("per_field") or {}).items():
        acc, kappa = format_number(r["accuracy"]), format_number(r["kappa"])
        print(f"  {row:<28} n={r['n']:<5} accuracy={acc}  kappa={kappa}")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    traces, labels = _load(args.files, args)
    rules = evaluate_judge(RulesJudge(), traces, labels)
    cv = cross_validate_learned(traces, labels, n_splits=args.folds, seed=args.seed)
    cv_name = f"learned ({len(cv.folds)}-fold grouped CV)"
    columns = {"rules": rules, cv_name: cv.table}
    if args.model:
        model = LearnedModel.load(args.model)
        recs = LearnedJudge(model).label_traces(traces, rater="learned")
        columns[f"learned ({Path(args.model).name})"] = agreement_table(traces, recs, labels)
    meta = {
        "files": [str(f) for f in args.files],
        "n_traces": len(traces),
        "n_questions": len(set(question_groups(traces))),
        "reference": args.labels or "inline labels",
        "folds": len(cv.folds),
        "seed": args.seed,
    }
    if args.json:
        body = {name: agreement_summary(t) for name, t in columns.items()}
        body[cv_name] = cv.summary()  # with each row's per-fold kappas
        json.dump({**meta, "judges": body}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print(f"offline judges vs {meta['reference']}: {meta['n_traces']} traces, {meta['n_questions']} questions")
    print(_table(columns))
    print(
        "kappa: Cohen's kappa on steps both sides labeled (n); unsc.: human-labeled steps the judge left "
        "unscored; rule-derived: the InitialQuery/RepeatQuery labels set by rule, not by the judge."
    )
    for name, t in columns.items():  # every n/a with its reason
        for r in t[t["note"] != ""].itertuples():
            print(f"n/a: {name}, {r.row}: {r.note}")
    return 0


def _table(columns: dict) -> str:
    names = list(columns)
    first = columns[names[0]]
    head1 = f"{'field':<28}" + "".join(f"  {n[:30]:<30}" for n in names)
    head2 = f"{'':<28}" + "".join(f"  {'n':>5} {'acc':>6} {'kappa':>7} {'unsc.':>6}   " for _ in names)
    lines = [head1, head2]
    for i, row in enumerate(first["row"]):
        cells = []
        for n in names:
            r = columns[n].iloc[i]
            acc, kappa = format_number(r["accuracy"]), format_number(r["kappa"])
            cells.append(f"  {int(r['n']):>5} {acc:>6} {kappa:>7} {int(r['n_unscored']):>6}   ")
        lines.append(f"{row:<28}" + "".join(cells))
    return "\n".join(line.rstrip() for line in lines)
