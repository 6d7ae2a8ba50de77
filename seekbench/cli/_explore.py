"""``seekbench explore``: the trace explorer (explorer.html and its data scripts); the audit-flag options."""

from __future__ import annotations

import argparse

from ._agree import load_judged_sets
from ._inputs import add_input_arguments, add_label_arguments, load_input
from ._metrics import add_metric_options
from ._options import add_command, add_output, add_reference_options, check_at_least

DESCRIPTION = """\
Write DIR/explorer.html and DIR/explorer-data/*.js: a page to read every trace, step by step,
with each step's turn, kind, evidence state E after it and its labels (chips naming field and
rater). Filter by agent, audit flag, correctness, E at the answer and judge-vs-reference
disagreement; search the text of questions, steps and documents; sort by the audit score
(worst first) and more. Open it straight from disk (file://): no server, no network. The
data sits in sidecar scripts loaded on demand, so 28,493 traces stay responsive.

With --rater (judged annotation sets) and --reference (default: the inline labels), every
label the judge gives differently from the reference is listed beside it, with the judge's
explanation when its label record carries one. Links: explorer.html#trace=ID opens a
trace; #agent=NAME lists an agent's traces worst first (also #flag=, #correct=, #E=, #q=).

Examples:
  seekbench explore traces.jsonl -o explorer/
  seekbench explore traces.jsonl --reference inline --rater judge.jsonl -o explorer/
"""


#: The metric options the explorer's evidence states and audit flags depend on.
EXPLORER_METRIC_OPTIONS = ("evidence_mapping", "evidence_scope", "recovery")


def add_audit_options(p: argparse.ArgumentParser) -> None:
    """The thresholds of the audit flags (seekbench.metrics.trace_audit), shared by ``report`` and ``explore``."""
    g = p.add_argument_group("audit flags (thresholds of seekbench.metrics.trace_audit)")
    g.add_argument(
        "--ungrounded-threshold",
        type=float,
        default=0.75,
        metavar="U",
        help="flag 'ungrounded' when at least this share of labeled reasoning steps is NotGrounded (default 0.75)",
    )
    g.add_argument(
        "--min-reasoning-labeled",
        type=int,
        default=3,
        metavar="N",
        help="flag 'ungrounded' only in traces with at least N labeled reasoning steps (default 3)",
    )
    g.add_argument(
        "--answer-evidence-below",
        type=int,
        default=1,
        choices=[0, 1, 2],
        help="flag 'low_evidence_answer' when the answer came with E below this (default 1: E = 0; "
        "2: any answer before full evidence; 0: off)",
    )
    g.add_argument(
        "--repeated-queries-threshold",
        type=int,
        default=2,
        metavar="N",
        help="flag 'repeated_queries' when at least N queries repeat an earlier one (default 2)",
    )
    g.add_argument(
        "--recovery-horizon",
        type=int,
        default=None,
        metavar="T",
        help="flag 'not_recovered' when not recovered by turn T (default: not recovered at all)",
    )


def audit_kwargs(args: argparse.Namespace) -> dict:
    return {
        "ungrounded_threshold": args.ungrounded_threshold,
        "min_reasoning_labeled": args.min_reasoning_labeled,
        "answer_evidence_below": args.answer_evidence_below,
        "repeated_queries_threshold": args.repeated_queries_threshold,
        "recovery_horizon": args.recovery_horizon,
    }


EXPLORE_HELP = "write the trace explorer (a page to filter, search and read every trace)"


def register(sub) -> None:
    p = add_command(sub, "explore", help=EXPLORE_HELP, description=DESCRIPTION)
    add_input_arguments(p, files_required=False)
    add_label_arguments(p)
    add_reference_options(p.add_argument_group("judge vs reference"), tiebreaker=False)
    add_metric_options(p, grouping=False, bootstrap=False, only=EXPLORER_METRIC_OPTIONS)
    add_audit_options(p)
    p.add_argument(
        "--chunk-size",
        type=int,
        default=200,
        metavar="N",
        help="traces per data script (default 200; each loads when one of its traces is opened)",
    )
    add_output(p, metavar="DIR", help="explorer directory", directory=True)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis import explorer_data
    from ..report import write_explorer

    check_at_least(args, ("chunk_size", 1))
    loaded = load_input(args)
    reference, raters = load_judged_sets(args, loaded.read.traces)
    ev = {name: getattr(args, name) for name in EXPLORER_METRIC_OPTIONS}
    data = explorer_data(
        loaded.read.traces,
        loaded.steps,
        loaded.traces,
        labels=loaded.labels,
        label_source=loaded.label_source,
        reference=reference,
        raters=raters,
        audit_options=audit_kwargs(args),
        **ev,
    )
    files = write_explorer(data, args.output, chunk_size=args.chunk_size)
    flagged = sum(1 for f in data.index["flags"] if f)
    scripts = "script" if files.n_chunks == 1 else "scripts"
    print(
        f"wrote {files.html} ({files.n_traces} traces, {flagged} flagged; data in {files.n_chunks} {scripts} "
        f"under {files.data_dir})"
    )
    return 0
