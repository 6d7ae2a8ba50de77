"""``seekbench metrics``: per-group process and outcome metrics, as a table or JSON."""

from __future__ import annotations

import argparse
import math

from .._errors import UserInputError
from ..metrics import MetricOptions
from ._corrected import add_correct_options, corrected_from_args, format_corrected
from ._inputs import add_input_arguments, add_label_arguments, load_input
from ._options import add_command, add_json, add_seed, check_at_least
from ._output import finish, fixed_width
from ._scale import add_engine_arguments, scaled_summary

BY_CHOICES = {"agent": ("agent",), "dataset": ("dataset",), "agent,dataset": ("agent", "dataset")}


#: Help of each metric option, in ``--help`` order (flag: the field with dashes; default: MetricOptions').
METRIC_OPTION_HELP = {
    "evidence_mapping": "E = C + Q (sum, default) or the released code's sufficiency-first mapping",
    "evidence_scope": "E at turn t: best evidence so far (default) or the latest observation only",
    "ce_aggregate": "CE per trace then mean (default, the paper) or pooled over decision points",
    "ce_prevalence": "with --ce-aggregate pooled: P(E=k) over all agents (default) or within the group",
    "decision_points": "CE decision points: every turn (default) or every step (released code)",
    "recovery": "ERF (and audit) recovery event: E=2 or a correct answer (default), or E=2 only (released code)",
    "erf_method": "ERF estimator: Aalen-Johansen cumulative incidence (default) or 1-KM (overstates)",
    "time": "ERF time scale (default: turn)",
    "rqi_aggregate": "RQI: mean of per-trace RQI (default) or pooled over reasoning steps",
}


def add_metric_options(
    p: argparse.ArgumentParser,
    *,
    grouping: bool = True,
    bootstrap: bool = True,
    only: tuple[str, ...] | None = None,
) -> None:
    """The metric options (docs/metrics/), shared by ``metrics``, ``report``, ``agree`` and ``explore``.

    ``only`` names the :class:`MetricOptions` fields a command uses (default: all of them);
    ``bootstrap`` adds ``--n-boot`` and ``--seed``.
    """
    g = p.add_argument_group("metric options (definitions: docs/metrics/index.md)")
    if grouping:
        g.add_argument("--by", default="agent", choices=list(BY_CHOICES), help="grouping (default: agent)")
    fields = MetricOptions.__dataclass_fields__
    for name in only or METRIC_OPTION_HELP:
        g.add_argument(
            "--" + name.replace("_", "-"),
            default=fields[name].default,
            choices=MetricOptions.choices(name),
            help=METRIC_OPTION_HELP[name],
        )
    if bootstrap:
        g.add_argument("--n-boot", type=int, default=2000, metavar="B", help="bootstrap resamples (default 2000)")
        add_seed(g, of="bootstrap resamples")


def metric_options(args: argparse.Namespace) -> MetricOptions:
    """The one place the command line's metric options become a :class:`MetricOptions`."""
    check_at_least(args, ("n_boot", 0))
    return MetricOptions(**{name: getattr(args, name) for name in MetricOptions.__dataclass_fields__})


def bootstrap_kwargs(args: argparse.Namespace) -> dict:
    """``--n-boot`` and ``--seed`` as the keywords every bootstrapping function of the API takes."""
    return {"n_boot": args.n_boot, "seed": args.seed}


def metric_kwargs(args: argparse.Namespace) -> dict:
    """The metric options as keywords of :func:`seekbench.metrics.summarize`, with ``by`` and the bootstrap's."""
    return {"by": BY_CHOICES[args.by], **metric_options(args).as_dict(), **bootstrap_kwargs(args)}


METRICS_HELP = "process and outcome metrics per agent"

METRICS_DESCRIPTION = (
    "Compute RQI, CE, ERF and outcome metrics per group with bootstrap CIs.\n"
    "Label-dependent metrics are null (undefined) when steps are unlabeled, "
    "with the count of unlabeled steps; label them with `seekbench annotate` "
    "or pass --labels."
)


def register(sub) -> None:
    p = add_command(sub, "metrics", help=METRICS_HELP, description=METRICS_DESCRIPTION)
    add_input_arguments(p, files_required=False)
    add_label_arguments(p)
    add_correct_options(p.add_argument_group("judge-corrected metrics"))
    add_metric_options(p)
    add_engine_arguments(p)
    add_json(p, what="one JSON object instead of a table")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..metrics import summarize

    if not args.files:
        from ..data import sample_traces_path

        args.files = [str(sample_traces_path())]
    by = BY_CHOICES[args.by]
    if args.correct and args.labels is None:
        raise UserInputError("--correct needs the judge's labels: --labels JUDGE.jsonl (and --reference HUMAN.jsonl)")
    if args.labels is None:  # streamed fragment by fragment (seekbench.scale); labels need the whole step table
        summary = scaled_summary(args, by=by, options=metric_options(args))
        inputs = {"files": args.files, "labels": "inline labels", "skipped_records": args.n_skipped}
    else:
        if args.engine != "local":
            raise UserInputError("--labels is read with --engine local only; attach the labels to the traces first")
        loaded = load_input(args, keep_traces=True if args.correct else None)
        summary = summarize(loaded.steps, loaded.traces, by=by, options=metric_options(args), **bootstrap_kwargs(args))
        inputs = {"files": args.files, "labels": loaded.label_source, "skipped_records": loaded.read.n_skipped}
    out = summary.to_dict()
    out["inputs"] = inputs
    if args.correct:
        if by != ("agent",):
            raise UserInputError("--correct groups by agent only; drop --by")
        out["corrected"] = corrected_from_args(args, loaded, options=metric_options(args)).to_dict()
        return finish(args, out, lambda: format_table(out, by=by) + "\n" + format_corrected(out["corrected"]))
    return finish(args, out, lambda: format_table(out, by=by))


def _fmt(v, ci=None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    s = _no_negative_zero(f"{v:.3f}")
    if ci and all(c is not None and not (isinstance(c, float) and math.isnan(c)) for c in ci):
        s += f" [{_no_negative_zero(f'{ci[0]:.2f}')}, {_no_negative_zero(f'{ci[1]:.2f}')}]"
    return s


def _no_negative_zero(text: str) -> str:
    """ "-0.00" (a tiny negative rounded) as "0.00": a zero is printed one way."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def _option_value(v) -> str:
    """An option as the command line spells it: ``agent,dataset`` for a list, ``none`` for unset."""
    if v is None:
        return "none"
    return ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def _median_turn(g: dict) -> str:
    """The median recovery turn, or why there is none: the curve never reaches 0.5, or it is undefined."""
    med = g.get("median_recovery_turn")
    if med is not None and not (isinstance(med, float) and math.isnan(med)):
        return f"{med:g}"
    erf = g.get("recovered_by_8")
    if erf is None or (isinstance(erf, float) and math.isnan(erf)):
        return "n/a (no ERF)"
    return "not reached"


def _key(v) -> str:
    """A grouping value as a cell: a missing one (no dataset recorded, ...) is said so, never ``None``."""
    return "n/a (not recorded)" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def _why_undefined(out: dict) -> list[str]:
    """One line per reason a number is undefined (the summary's notes, without the NaN boilerplate)."""
    return [w.replace("; returning NaN", "") for w in out.get("warnings") or []]


def format_table(out: dict, *, by: tuple[str, ...]) -> str:
    """A readable fixed-width table of the main numbers per group (CIs: 95% percentile bootstrap)."""
    cols = [
        *by,
        "traces",
        "RQI [95% CI]",
        "CE [95% CI]",
        "overconf [95% CI]",
        "overcaut [95% CI]",
        "ERF@8 [95% CI]",
        "median turn",
        "accuracy",
        "EM",
        "F1",
        "tools",
        "dup q",
    ]
    rows = []
    for g in out["groups"]:
        rows.append(
            [
                *(_key(g.get(k)) for k in by),
                str(g["n_traces"]),
                _fmt(g["rqi"], g.get("rqi_ci")),
                _fmt(g["ce"], g.get("ce_ci")),
                _fmt(g["overconfident"], g.get("overconfident_ci")),
                _fmt(g["overcautious"], g.get("overcautious_ci")),
                _fmt(g.get("recovered_by_8"), g.get("recovered_by_8_ci")),
                _median_turn(g),
                _fmt(g["accuracy"]),
                _fmt(g["em"]),
                _fmt(g["f1"]),
                _fmt(g["tool_calls"]),
                _fmt(g["duplicate_query_rate"]),
            ]
        )
    text = fixed_width(cols, rows)
    if any(r[len(by) + 6] in ("not reached", "n/a (no ERF)") for r in rows):
        text.append(
            "median T: turn by which half the traces recovered; not reached = the ERF stays below 0.5; "
            "n/a (no ERF) = no trace has a labeled observation"
        )
    opts = ", ".join(f"{k}={_option_value(v)}" for k, v in out["options"].items())
    text.append(f"\noptions: {opts}")
    unl: dict[str, int] = {}
    for g in out["groups"]:
        for k, v in (g.get("unlabeled") or {}).items():
            unl[k] = unl.get(k, 0) + (v or 0)
    if any(unl.values()):
        text.append("not usable: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in unl.items() if v))
    if any(cell.startswith("n/a") for r in rows for cell in r):
        reasons = _why_undefined(out)
        text.append("n/a = undefined: " + ("; ".join(reasons) if reasons else "see the notes above"))
        if any(unl.values()):
            text.append("label steps with `seekbench annotate` or pass --labels FILE")
    return "\n".join(text)
