"""``seekbench env synth-beliefs``: synthetic belief states from a corpus, optionally with completeness estimates.

The command writes the belief states (JSONL) and, with ``--estimator``, the estimates file that
``seekbench conformal`` reads. Baseline estimates are cross-fitted by document (each state's c_hat
from a model fitted on other documents only).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._errors import UserInputError
from ._options import (
    add_command,
    add_json,
    add_judge_option,
    add_llm_options,
    add_output,
    add_seed,
    check_at_least,
    llm_kwargs,
)
from ._output import finish

DESCRIPTION = """\
Draw synthetic belief states for conformal calibration (docs/conformal.md): for a document
with N passages, K = ceil(N / delta) states; state k hides r passages, r uniform in
[k*delta, min((k+1)*delta, N) - 1], and shows a uniformly random N - r of them; its true
completeness is (N - r) / N. With --estimator, also estimate each state's completeness
(mean and regression need no LLM; llm asks the judge endpoint of --judge) and write the
estimates file for `seekbench conformal`.

Example:
  seekbench env synth-beliefs corpus.jsonl -o beliefs.jsonl --estimator mean --estimator regression
  seekbench conformal beliefs.estimates.jsonl -o conformal/
"""

#: The LLM options of ``--estimator llm`` (seekbench.cli._options.LLM_OPTIONS), as keywords of the estimator.
LLM = ("base_url", "cache", "no_cache", "concurrency")


SYNTH_BELIEFS_HELP = "synthetic belief states (and completeness estimates)"


def register(env_subparsers) -> None:
    """Add ``synth-beliefs`` to the ``seekbench env`` subcommands."""
    p = add_command(env_subparsers, "synth-beliefs", help=SYNTH_BELIEFS_HELP, description=DESCRIPTION)
    p.add_argument("corpus", metavar="CORPUS", help="corpus JSONL (seekbench env build-corpus)")
    add_output(p, metavar="BELIEFS", help="belief-state JSONL to write")
    p.add_argument("--delta", type=int, default=10, help="interval width Delta (default 10)")
    add_seed(p, of="draws and of the baselines' cross-fitting folds")
    p.add_argument(
        "--estimator",
        action="append",
        choices=["mean", "regression", "llm"],
        default=None,
        dest="estimators",
        help="also estimate completeness (repeatable)",
    )
    add_judge_option(p, help="with --estimator llm: the judge whose endpoint and model estimate")
    p.add_argument(
        "--estimates",
        default=None,
        metavar="FILE",
        help="estimates JSONL to write (default: BELIEFS with .estimates.jsonl)",
    )
    add_llm_options(p, *LLM)
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds for the baselines (default 5)")
    add_json(p, what="one JSON object instead of text")
    p.set_defaults(run=run)


def default_estimates_path(beliefs: str | Path) -> Path:
    """``beliefs.jsonl`` -> ``beliefs.estimates.jsonl``."""
    p = Path(beliefs)
    return p.with_name(p.name.removesuffix(".jsonl") + ".estimates.jsonl")


def run(args: argparse.Namespace) -> int:
    from ..env.conformal import (
        baseline_estimates,
        load_corpus_records,
        render_beliefs,
        synthesize_belief_states,
        write_belief_states,
        write_estimates,
    )

    estimators = list(dict.fromkeys(args.estimators or []))
    if "llm" in estimators and not args.judge:
        raise UserInputError("--estimator llm needs --judge NAME (see `seekbench judge list`)")
    if args.judge and "llm" not in estimators:
        raise UserInputError("--judge is only used with --estimator llm")
    check_at_least(args, ("folds", 2))
    corpus = load_corpus_records(args.corpus)
    states = synthesize_belief_states(corpus, delta=args.delta, seed=args.seed)
    if not states:
        raise UserInputError("no belief states: no document of the corpus has passages", file=args.corpus)
    write_belief_states(args.output, states)
    out = {
        "beliefs": str(args.output),
        "n_states": len(states),
        "n_documents": len({s.doc_id for s in states}),
        "delta": args.delta,
        "seed": args.seed,
        "estimates": None,
        "estimators": [],
    }
    if estimators:
        views = render_beliefs(states, corpus)
        frames = []
        for name in estimators:
            if name == "llm":
                frame, info = _llm_estimates(args, states, views)
            else:
                frame = baseline_estimates(states, views, name, n_folds=args.folds, seed=args.seed)
                info = {}
            frames.append(frame)
            scored = int(frame["c_hat"].notna().sum())
            unscored = len(frame) - scored
            out["estimators"].append(
                {"estimator": frame["estimator"].iloc[0], "scored": scored, "unscored": unscored, **info}
            )
        path = Path(args.estimates) if args.estimates else default_estimates_path(args.output)
        if path.resolve() == Path(args.output).resolve():
            raise UserInputError("--estimates must differ from the belief-state file", file=str(path))
        write_estimates(path, frames)
        out["estimates"] = str(path)
    failed = [e for e in out["estimators"] if e.get("failed")]
    # 3: done with failures (README "Exit codes"); a re-run sends only the failed ones
    code = finish(args, out, lambda: _text(args, out), failed=bool(failed))
    if not args.json:
        for e in failed:
            print(
                f"seekbench: {e['failed']} of {out['n_states']} estimates of {e['estimator']} failed (left "
                f"unscored; re-run to retry); first error: {e['first_error']}",
                file=sys.stderr,
            )
    return code


def _text(args: argparse.Namespace, out: dict) -> str:
    lines = [
        f"wrote {out['n_states']} belief states of {out['n_documents']} documents to {out['beliefs']} "
        f"(delta {args.delta}, seed {args.seed})"
    ]
    for e in out["estimators"]:
        cost = f", ${e['cost_usd']:.4f}" if "cost_usd" in e else ""
        lines.append(f"  {e['estimator']}: {e['scored']} scored, {e['unscored']} unscored{cost}")
    if out["estimates"]:
        lines.append(f"wrote estimates to {out['estimates']}; next: seekbench conformal {out['estimates']} -o DIR")
    return "\n".join(lines)


def _llm_estimates(args, states, views):
    from ..env.conformal import LLMCompletenessEstimator, estimates_frame

    kw = llm_kwargs(args, *LLM)
    if kw.pop("no_cache"):
        kw["cache"] = False
    est = LLMCompletenessEstimator(args.judge, **kw)
    results = est.estimate(views)
    frame = estimates_frame(states, est.name, [r.c_hat for r in results], [r.error for r in results])
    info = {
        "cost_usd": float(sum(r.cost_usd for r in results)),
        "cached": int(sum(r.cached for r in results)),
        "failed": est.failed,
        "first_error": est.first_error,
    }
    return frame, info
