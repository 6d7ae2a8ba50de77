"""``seekbench conformal``: split conformal coverage of completeness estimates, as a report directory."""

from __future__ import annotations

import argparse
import math
import warnings

from .._errors import SeekbenchWarning, UserInputError
from ._options import add_command, add_json, add_output, add_seed
from ._output import finish, fixed_width, wrote_report

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
    p = add_command(
        sub, "conformal", help="split conformal coverage of completeness estimates", description=DESCRIPTION
    )
    p.add_argument("estimates", metavar="ESTIMATES", help="estimates JSONL")
    add_output(p, metavar="DIR", help="report directory (created if missing)", directory=True)
    p.add_argument("--alpha", type=float, default=0.1, help="target miscoverage (default 0.1: 90%% coverage)")
    p.add_argument(
        "--split",
        default="document",
        choices=["document", "state"],
        help="calibration/test split by document (default) or pooled over states (the paper)",
    )
    p.add_argument("--splits", type=int, default=3, metavar="S", help="random splits (default 3)")
    p.add_argument("--seeds", type=int, default=10, metavar="R", help="seeds per split (default 10)")
    add_seed(p, of="random splits (the base seed)")
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
    add_json(p, what="one JSON object instead of a table")
    p.set_defaults(run=run)


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
    wrote_report(args.output, "conformal", files)
    out = result.to_dict()
    out["files"] = {
        "html": str(files.html),
        "markdown": str(files.markdown),
        "figures": [str(p) for p in files.figures],
        "tables": [str(p) for p in files.tables],
    }
    return finish(args, out, lambda: format_summary(result) + f"\nwrote {files.html}")


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
    text = fixed_width(
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
        text += fixed_width(
            ["agent", "belief", "episodes", "stopped", "c at stop", "c final", "steps saved", "stop valid"], stop_rows
        )
    if result.anova is not None and len(result.anova):
        text.append("\nvariance decomposition of final completeness (Type III ANOVA)")
        text += fixed_width(
            ["factor", "df", "F", "eta^2", "partial eta^2"],
            [
                [str(r.factor), f"{r.df:g}", _f(r.F, 2), _f(r.eta_sq), _f(r.partial_eta_sq)]
                for r in result.anova.itertuples(index=False)
            ],
        )
    return "\n".join(text)
