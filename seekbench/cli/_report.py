"""``seekbench report``: the process audit as HTML, Markdown, figures and tables."""

from __future__ import annotations

import argparse

from ._inputs import add_input_arguments, add_label_arguments, load_input
from ._metrics import metric_kwargs, add_metric_options


def register(sub) -> None:
    p = sub.add_parser("report", help="write the audit report (HTML, Markdown, figures, tables)",
                       description="Write DIR/report.html (self-contained, opens offline), DIR/report.md, "
                                   "DIR/figures/*.png and DIR/tables/*.csv: per-group metrics with CIs, ERF "
                                   "curves, RQI by reasoning type, calibration of the answer decision, evidence "
                                   "prevalence and a per-trace audit. Without FILE, the embedded sample traces "
                                   "(offline, labeled) are used.")
    add_input_arguments(p, files_required=False)
    add_label_arguments(p)
    add_metric_options(p)
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="report directory")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..report import write_report

    loaded = load_input(args)
    kw = metric_kwargs(args)
    by = kw.pop("by")
    inputs = {"files": ", ".join(args.files), "labels": loaded.label_source,
              "skipped_records": loaded.read.n_skipped}
    files = write_report(loaded.steps, loaded.traces, args.output, trace_dicts=loaded.read.traces,
                         inputs=inputs, by=by, **kw)
    print(f"wrote {files.html} ({len(files.figures)} figures, {len(files.tables)} tables) and {files.markdown}")
    return 0
