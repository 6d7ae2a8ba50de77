"""``seekbench agree``: judges vs. the reference labels, per field, with CIs; the metric sensitivity."""

from __future__ import annotations

import argparse
import math
import sys
import warnings

from .._errors import UndefinedMetricWarning, UserInputError
from ._inputs import add_input_arguments, read_input, report_skipped
from ._metrics import add_metric_options, bootstrap_kwargs, metric_options
from ._options import add_command, add_json, add_output, add_reference_options
from ._output import finish, fixed_width, wrote_report

DESCRIPTION = """\
Compare judged step labels with reference (human) labels, per label field and step kind
(grounding of reasoning steps and of search steps are scored apart), then one row per rater
pooling them, named "all (pooled)": steps compared and excluded (labeled by one side only,
unscored, rule-derived), raw agreement, Cohen's kappa and Gwet's AC1 with 95% bootstrap CIs
over whole traces, label prevalence and the confusion matrix. Labels a judge derived by rule
(InitialQuery, RepeatQuery) are not its own decisions: they are scored apart, as the rater
"rule-derived". A rater with nothing compared shows n = 0 and no coefficient. With two or
more judges: their majority panel (ties broken by --tiebreaker, else left open and scored as
a miss, "(unresolved tie)") scored as a rater, Krippendorff's alpha, Fleiss' kappa and
pairwise kappas. Per judge: cost, latency and tokens per trace from label provenance, and the
unscored count. Then RQI, CE and ERF at turn 8 per agent from each rater's labels against the
reference's, with the difference's CI and Kendall's tau of the agent rankings.

Example:
  seekbench agree traces.jsonl --reference inline --rater gpt41mini.jsonl --rater rules.jsonl -o out/
"""


AGREE_HELP = "agreement of judges with reference labels, and the metric sensitivity"


def register(sub) -> None:
    p = add_command(sub, "agree", help=AGREE_HELP, description=DESCRIPTION)
    add_input_arguments(p)
    add_reference_options(p, required=True)
    p.add_argument(
        "--fields",
        default=None,
        metavar="F1,F2",
        help="label fields to compare (default: every field the reference labels)",
    )
    p.add_argument(
        "--usage",
        default="per_call",
        choices=["per_call", "per_record"],
        help="provenance usage is per provider call, counted once (default), or per label record",
    )
    add_metric_options(p, grouping=False)
    add_json(p)
    add_output(
        p,
        required=False,
        directory=True,
        metavar="DIR",
        help="also write DIR/agreement.html (self-contained), figures and tables/*.csv",
    )
    p.set_defaults(run=run)


def _restrict(labels, trace_ids: set, what: str):
    """Keep the labels of the traces given; say on stderr how many were for other traces."""
    from ..labels import AnnotationSet

    recs = labels.records
    keep = recs["trace_id"].astype(str).isin(trace_ids)
    if not keep.all():
        n_tr = recs.loc[~keep, "trace_id"].nunique()
        print(
            f"seekbench: {what}: ignored {int((~keep).sum())} labels of {n_tr} traces not in the trace files",
            file=sys.stderr,
        )
    if not keep.any():
        raise UserInputError(f"{what}: no label refers to a trace in the trace files; check the trace ids")
    return AnnotationSet(recs[keep].reset_index(drop=True), name=labels.name, skipped=labels.skipped)


def _load_sets(args, traces):
    from ..labels import AnnotationSet, load_annotations

    ids = {str(t["trace_id"]) for t in traces}
    if args.reference == "inline":
        reference = AnnotationSet.from_traces(traces, source=", ".join(args.files))
        if not len(reference):
            raise UserInputError("--reference inline: the traces carry no inline labels; pass an annotation file")
    else:
        reference = load_annotations(args.reference, skip_invalid=args.skip_invalid)
        report_skipped(reference.skipped, what=f"label records in {args.reference}")
        reference = _restrict(reference, ids, args.reference)
    raters, owner = [], {}
    for r in reference.raters:
        owner[r] = args.reference
    for path in args.raters:
        s = load_annotations(path, skip_invalid=args.skip_invalid)
        report_skipped(s.skipped, what=f"label records in {path}")
        for name in s.raters:
            if name in owner:
                raise UserInputError(
                    f"rater {name!r} is also in {owner[name]}; rater names must be unique "
                    "(rename the rater field of one file)",
                    file=path,
                )
            owner[name] = path
        raters.append(_restrict(s, ids, path))
    return reference, raters


def _label_fields(args: argparse.Namespace) -> list[str] | None:
    """The label fields ``--fields`` names (comma-separated), or None for every field the reference labels."""
    return [f.strip() for f in args.fields.split(",") if f.strip()] if args.fields else None


def load_judged_sets(args: argparse.Namespace, traces: list[dict]):
    """``(reference, raters)`` as ``--reference`` and ``--rater`` say; ``(None, [])`` without a ``--rater``."""
    return _load_sets(args, traces) if args.raters else (None, [])


def run(args: argparse.Namespace) -> int:
    from ..agreement import compare_annotations

    options = metric_options(args)
    read = read_input(args)
    reference, raters = _load_sets(args, read.traces)
    fields = _label_fields(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # reported once, in result.warnings
        result = compare_annotations(
            reference,
            *raters,
            fields=fields,
            tiebreaker=args.tiebreaker,
            traces=read.traces,
            usage=args.usage,
            options=options,
            **bootstrap_kwargs(args),
        )
    from ..analysis import judge_records

    records = judge_records(raters)
    if args.output:
        from ..analysis import agreement_analysis
        from ..report import write_agreement_report

        files = write_agreement_report(agreement_analysis(result), args.output, judge_records=records)
        print(wrote_report(args.output, "agreement", files), file=sys.stderr if args.json else sys.stdout)
    out = result.to_dict()
    inputs = {
        "files": args.files,
        "reference": args.reference,
        "raters": args.raters,
        "skipped_records": read.n_skipped,
    }
    out["inputs"] = inputs
    return finish(args, out, lambda: format_result(result) + judge_records_text(records))


def judge_records_text(records) -> str:
    """The raters' judges' validation records, one compact line each, and the notices (empty: no judge)."""
    from ..llm import compact_kappas

    if not records:
        return ""
    out = ["", "", "judge validation records (how each judge agreed with human labels where it was validated):"]
    for jr in records:
        out.append(f"  {jr.judge}: {compact_kappas(jr.record, jr.features)}")
        out += [f"  note: {n}" for n in jr.notices()]
    return "\n".join(out)


def _f(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float):
        return f"{0.0 if abs(v) < 0.5 * 10**-digits else v:.{digits}f}"  # no "-0.000"
    return str(v)


def _ci(v, lo, hi) -> str:
    s = _f(v)
    if s != "n/a" and not (math.isnan(lo) or math.isnan(hi)):
        s += f" [{_f(lo, 2)}, {_f(hi, 2)}]"
    return s


def _signed(v, digits: int = 3) -> str:
    """A difference: "+0.042" or "-0.062", and zero as "0.000" (never "-0.000" or "+0.000")."""
    s = _f(v, digits)
    return s if s == "n/a" or s.startswith("-") or float(s) == 0 else "+" + s


def _diff_ci(v, lo, hi) -> str:
    """A difference with its CI, every number signed the same way ("+0.153 [-0.01, +0.33]")."""
    s = _signed(v)
    if s != "n/a" and not (math.isnan(lo) or math.isnan(hi)):
        s += f" [{_signed(lo, 2)}, {_signed(hi, 2)}]"
    return s


def _grid(cols: list[str], rows: list[list[str]]) -> str:
    return "\n".join(fixed_width(cols, rows))


def _same(value, note: str) -> str:
    """The "same ranking" cell: yes/no, or n/a with the reason (never ``None``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return note or "n/a"
    return "yes" if value else "no"


#: The columns of each text table: (header, the cell of one row of the result's frame).
SUMMARY_COLUMNS = (
    ("rater", lambda r: r.rater),
    ("field", lambda r: r.field),
    ("steps", lambda r: r.step_kind),
    ("n", lambda r: str(r.n_compared)),
    ("excluded", lambda r: str(r.n_excluded)),
    ("agreement", lambda r: _f(r.raw_agreement)),
    ("kappa [95% CI]", lambda r: _ci(r.kappa, r.kappa_lower, r.kappa_upper)),
    ("AC1 [95% CI]", lambda r: _ci(r.ac1, r.ac1_lower, r.ac1_upper)),
    ("note", lambda r: r.note),
)
MULTI_RATER_COLUMNS = (
    ("field", lambda m: m.field),
    ("steps", lambda m: m.step_kind),
    ("raters", lambda m: str(m.n_raters)),
    ("Krippendorff alpha [95% CI]", lambda m: _ci(m.alpha, m.alpha_lower, m.alpha_upper)),
    ("Fleiss kappa [95% CI]", lambda m: _ci(m.fleiss_kappa, m.fleiss_lower, m.fleiss_upper)),
    ("items (all)", lambda m: str(m.fleiss_n_items)),
)
COST_COLUMNS = (
    ("rater", lambda c: c.rater),
    ("traces", lambda c: str(c.n_traces)),
    ("unscored", lambda c: str(c.n_unscored)),
    ("cost/trace $", lambda c: _f(c.cost_per_trace, 5)),
    ("latency/trace s", lambda c: _f(c.latency_s_per_trace, 2)),
    ("tokens/trace", lambda c: _f(c.tokens_per_trace, 0)),
)
SENSITIVITY_COLUMNS = (
    ("rater", lambda t: t.rater),
    ("agent", lambda t: str(t.agent)),
    ("metric", lambda t: t.metric),
    ("reference", lambda t: _f(t.reference)),
    ("judged", lambda t: _f(t.judged)),
    ("difference [95% CI]", lambda t: _diff_ci(t.difference, t.lower, t.upper)),
)
RANKING_COLUMNS = (
    ("rater", lambda k: k.rater),
    ("metric", lambda k: k.metric),
    ("Kendall tau", lambda k: _f(k.kendall_tau)),
    ("p", lambda k: _f(k.p_value)),
    ("agents", lambda k: str(k.n_agents)),
    ("same ranking", lambda k: _same(k.same_ranking, k.note)),
)


def _table(frame, columns) -> str:
    """One text table of ``frame``, a row per record, the cells as ``columns`` say."""
    return _grid([head for head, _ in columns], [[cell(r) for _, cell in columns] for r in frame.itertuples()])


def format_result(result) -> str:
    """The agreement tables as fixed-width text (n/a always with its reason, never None or nan)."""
    out = [f"reference: {result.reference}   raters: {', '.join(result.raters)}", ""]
    out.append(_table(result.summary, SUMMARY_COLUMNS))
    out.append('"all (pooled)" pools the (field, steps) rows above it, each with its own chance agreement.')
    if len(result.exclusions):
        out += [
            "",
            "excluded: "
            + "; ".join(
                f"{e.rater}/{e.field} ({e.step_kind}): {e.n} {e.reason}" for e in result.exclusions.itertuples()
            ),
        ]
    if len(result.multi_rater):
        out += ["", _table(result.multi_rater, MULTI_RATER_COLUMNS)]
    if result.panel is not None:
        p = result.panel
        open_ties = p.n_ties - p.n_ties_broken
        out += [
            "",
            (
                f"panel {', '.join(p.members)} (tiebreaker: {p.tiebreaker or 'none'}): {p.n_ties} ties, "
                f"{p.n_ties_broken} broken, {open_ties} left open (scored as misses where the reference "
                "labeled the step)"
            ),
        ]
    if len(result.costs):
        out += ["", _table(result.costs, COST_COLUMNS)]
        out.append("n/a in cost, latency or tokens: not recorded in the label provenance")
    sens = result.sensitivity
    if sens is not None:
        out += [
            "",
            "metric sensitivity (judged - reference, per agent):",
            _table(sens.table, SENSITIVITY_COLUMNS),
            "",
            _table(sens.rankings, RANKING_COLUMNS),
        ]
        if sens.table[["reference", "judged"]].isna().any().any():
            out.append("n/a in reference or judged: the label source lacks the labels the metric needs (see notes)")
    if result.warnings or (sens is not None and sens.warnings):
        notes = [*result.warnings, *(sens.warnings if sens is not None else [])]
        out += ["", *("note: " + w.replace("; returning NaN", "") for w in dict.fromkeys(notes))]
    out.append(
        f"\noptions: n_boot={result.options['n_boot']}, seed={result.options['seed']}, usage={result.options['usage']}"
    )
    return "\n".join(out)
