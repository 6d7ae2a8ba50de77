"""``seekbench export-labels``: an annotation set out as Phoenix span annotations or Langfuse scores."""

from __future__ import annotations

import argparse

from ..labels import load_annotations, span_index, span_label_records, write_span_labels
from ..traces import available_formats, read_traces
from ._inputs import report_skipped

DESCRIPTION = """\
Write step labels where Phoenix or Langfuse can take them: each label keyed by the span its step
came from. The traces must have been imported from OpenTelemetry files (OTLP JSON or span tables),
which keep each step's span id.

  phoenix   one span annotation per line (span_id, name = the label field, annotator_kind HUMAN /
            LLM / CODE from the label's provenance, result.label, result.score for yes/no labels,
            identifier = the rater, metadata with judge, model and prompt hash)
  langfuse  one score per line (traceId, observationId = the span id, name, categorical value,
            comment, metadata)

Labels without a value (unscored) are counted and not written. `seekbench import-labels` reads
the file back into the same labels.

Example:
  seekbench export-labels judged.jsonl --traces spans.jsonl --to phoenix -o annotations.jsonl
"""


def register(sub) -> None:
    p = sub.add_parser(
        "export-labels",
        help="step labels out to Phoenix (span annotations) or Langfuse (scores)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("labels", metavar="SET", help="annotation set (JSONL) to export")
    p.add_argument(
        "--traces",
        nargs="+",
        required=True,
        metavar="FILE",
        help="the trace files the labels are for, as imported from OpenTelemetry files",
    )
    p.add_argument(
        "--format",
        choices=available_formats(),
        default=None,
        help="force the trace format (default: detected per file)",
    )
    p.add_argument("--to", required=True, choices=["phoenix", "langfuse"], help="the tool to write for")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="JSONL file to write")
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out labels and trace records that cannot be exported, and say how many "
        "(default: stop at the first with exit code 2)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    read = read_traces(args.traces, format=args.format, skip_invalid=args.skip_invalid)
    report_skipped(read.skipped, what="trace records")
    labels = load_annotations(args.labels, skip_invalid=args.skip_invalid)
    report_skipped(labels.skipped, what="label records")
    index = span_index(read.traces, file=", ".join(map(str, args.traces)))
    export = span_label_records(labels, index, to=args.to, skip_invalid=args.skip_invalid, file=args.labels)
    report_skipped(export.skipped or [], what="labels")
    n = write_span_labels(args.output, export)
    what = "span annotations" if args.to == "phoenix" else "scores"
    print(
        f"wrote {n} {what} to {args.output}"
        + (f"; {export.unscored} unscored labels not exported" if export.unscored else "")
    )
    return 0
