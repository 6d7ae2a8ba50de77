"""``seekbench conformal``: split conformal coverage of completeness estimates, as a report directory."""

from __future__ import annotations

import argparse
import math
import sys
import warnings

from .._errors import SeekbenchWarning, UserInputError
from .._io import dumps

DESCRIPTION = """\
Calibrate completeness estimates by split conformal prediction (docs/conformal.md) and
report, per estimator: q_hat, empirical test coverage with a Clopper-Pearson CI, mean
interval width, coverage by completeness bin, raw R^2, as mean +- std over
S splits x R seeds (std over split-level means). Writes DIR/conformal.html (self-
contained), DIR/conformal.md, DIR/figures/conformal_*.png (estimated vs true completeness
with the band; nonconformity histogram with q_hat) and DIR/tables/*.csv.

ESTIMATES is JSONL, one line per (state, estimator):
  {"doc_id", "state_id", "true_completeness", "estimator", "c_hat"}  (c_hat null = unscored)
as written by `seekbench env synth-beliefs --estimator ...`.

With --traces (seeking-environment episodes with per-step self_estimate), also the
stopping rule c_hat - q_hat >= delta (completeness at stop, steps saved) and the
variance decomposition of final completeness (Type III ANOVA).

Example:
  seekbench conformal beliefs.estimates.jsonl -o conformal/ --alpha 0.1 --split document
"""


def register(sub) -> None:
    p = sub.add_parser(
        "conformal",
        help="split conformal coverage of completeness estimates",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("estimates", metavar="ESTIMATES", help="estimates JSONL")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="report directory (created if missing)")
    p.add_argument("--alpha", type=float, default=0.1, help="target miscoverage (default 0.1: 90%% coverage)")
    p.add_argument(
        "--split",
        default="document",
        choices=["document", "state"],
        help="calibration/test split by document (default) or pooled over states (the paper)",
    )
    p.add_argument("--splits", type=int, default=3, metavar="S", help="random splits (default 3)")
    p.add_argument("--seeds", type=int, default=10, metavar="R", help="seeds per split (default 10)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--bins", type=int, default=5, help="completeness bins for conditional coverage (default 5)")
    p.add_argument(
        "--estimator",
        action="append",
        default=None,
        dest="only",
        metavar="NAME",
        help="evaluate only this estimator (repeatable; default: all in the file)",
    )
    g = p.add_argument_group("episodes (optional)")
    g.add_argument(
        "--traces",
        action="append",
        default=None,
        metavar="FILE",
        help="seeking-environment traces: stopping rule and variance decomposition (repeatable)",
    )
    g.add_argument(
        "--delta", type=float, default=0.5, help="stopping rule: stop when c_hat - q_hat >= delta (default 0.5)"
    )
    g.add_argument(
        "--stop-estimator",
        default=None,
        metavar="NAME",
        help="whose q_hat the stopping rule uses (default: the only estimator, else the estimator "
        "named like each trace's agent)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(run=run, output_is_directory=True)  # -o names a folder


def run(args: argparse.Namespace) -> int:
    from ..env.conformal import (
        completeness_anova,
        evaluate_conformal,
        evaluate_stopping,
        read_estimates,
        summarize_stopping,
    )
    from ..report import write_conformal_report

    estimates = read_estimates(args.estimates)
    if args.only:
        unknown = sorted(set(args.only) - set(estimates["estimator"]))
        if unknown:
            raise UserInputError(
                f"no estimator {unknown[0]!r} in the file; it has: "
                f"{', '.join(sorted(estimates['estimator'].unique()))}",
                file=args.estimates,
            )
        estimates = estimates[estimates["estimator"].isin(args.only)]
    result = evaluate_conformal(
        estimates,
        alpha=args.alpha,
        split=args.split,
        n_splits=args.splits,
        n_seeds=args.seeds,
        seed=args.seed,
        n_bins=args.bins,
    )
    if args.traces:
        from ..traces import read_traces

        traces = read_traces(args.traces).traces
        q = _stop_q_hat(result, traces, args.stop_estimator)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result.stopping = evaluate_stopping(traces, q, delta=args.delta)
            result.stopping_summary = summarize_stopping(result.stopping)
            try:
                result.anova = completeness_anova(traces)
            except UserInputError as e:
                warnings.warn(f"variance decomposition skipped: {e.one_line()}", SeekbenchWarning, stacklevel=1)
        result.warnings += [str(w.message) for w in caught if issubclass(w.category, SeekbenchWarning)]
        _reemit(caught)
    files = write_conformal_report(result, args.output)
    from ..report import record_written

    record_written(args.output, "conformal", [files.html, files.markdown, *files.figures, *files.tables])
    if args.json:
        out = result.to_dict()
        out["files"] = {
            "html": str(files.html),
            "markdown": str(files.markdown),
            "figures": [str(p) for p in files.figures],
            "tables": [str(p) for p in files.tables],
        }
        sys.stdout.write(dumps(out) + "\n")
        return 0
    sys.stdout.write(format_summary(result) + f"\nwrote {files.html}\n")
    return 0


def _reemit(caught) -> None:
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _stop_q_hat(result, traces: list[dict], stop_estimator: str | None):
    """q_hat for the stopping rule: one estimator's for all agents, or each agent's namesake estimator's."""
    names = result.estimators
    if stop_estimator is not None:
        if stop_estimator not in names:
            raise UserInputError(f"--stop-estimator {stop_estimator!r} is not among the estimators: {', '.join(names)}")
        return result.q_hat(stop_estimator)
    if len(names) == 1:
        return result.q_hat(names[0])
    agents = {t.get("agent") for t in traces}
    mapping = {a: result.q_hat(n) for a in agents for n in (a, f"llm:{a}") if n in names}
    if not mapping:
        raise UserInputError(
            "several estimators and none named like an agent of the traces; choose one with "
            f"--stop-estimator ({', '.join(names)})"
        )
    return mapping


def _f(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{digits}f}"


def _fixed(cols: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]

    def line(r: list[str]) -> str:
        return "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()

    return [line(cols), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def format_summary(result) -> str:
    """Fixed-width tables: per estimator q_hat, coverage (± std), the split-0 CI, width, R^2; the stopping rule."""
    rows = []
    for r in result.summary.itertuples(index=False):
        rows.append(
            [
                str(r.estimator),
                str(r.n_states),
                str(r.n_unscored),
                f"{_f(r.q_hat)} ± {_f(r.q_hat_std)}",
                f"{_f(r.coverage)} ± {_f(r.coverage_std)}",
                f"[{_f(r.ref_coverage_ci_lower, 2)}, {_f(r.ref_coverage_ci_upper, 2)}]",
                f"{_f(r.width)} ± {_f(r.width_std)}",
                f"{_f(r.r2)} ± {_f(r.r2_std)}",
                _f(r.q_hat_full),
            ]
        )
    o = result.options
    text = _fixed(
        ["estimator", "states", "unscored", "q_hat", "coverage", "split-0 CI", "width", "raw R2", "q_hat(all)"], rows
    )
    text.append(
        f"\ntarget coverage {1 - o['alpha']:g}; split by {o['split']}; {o['n_splits']} splits x "
        f"{o['n_seeds']} seeds (mean ± std over split means)"
    )
    if result.stopping_summary is not None and len(result.stopping_summary):
        text.append(f"\nstopping rule: stop when c_hat - q_hat >= {_f(float(result.stopping['delta'].iloc[0]), 2)}")
        stop_rows = [
            [
                str(r.agent),
                str(r.belief),
                str(r.n_episodes),
                _f(r.stopped_share, 2),
                _f(r.completeness_at_stop),
                _f(r.final_completeness),
                _f(r.steps_saved, 1),
                _f(r.stop_valid, 2),
            ]
            for r in result.stopping_summary.itertuples(index=False)
        ]
        text += _fixed(
            ["agent", "belief", "episodes", "stopped", "c at stop", "c final", "steps saved", "stop valid"], stop_rows
        )
    if result.anova is not None and len(result.anova):
        text.append("\nvariance decomposition of final completeness (Type III ANOVA)")
        text += _fixed(
            ["factor", "df", "F", "eta^2", "partial eta^2"],
            [
                [str(r.factor), f"{r.df:g}", _f(r.F, 2), _f(r.eta_sq), _f(r.partial_eta_sq)]
                for r in result.anova.itertuples(index=False)
            ],
        )
    return "\n".join(text)
