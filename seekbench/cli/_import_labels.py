"""``seekbench import-labels``: Phoenix span annotations or Langfuse scores in, as an annotation set."""

from __future__ import annotations

import argparse
import sys

from .._errors import UserInputError
from ..labels import read_span_labels, span_index
from ..traces import available_formats, read_traces
from ._inputs import report_skipped

DESCRIPTION = """\
Read labels made in Phoenix (span annotations) or Langfuse (scores) into a seekbench annotation
set, so `seekbench agree` can compare them with a judge's labels. Each annotation's span is
matched to the step it labels in the traces, which must have been imported from OpenTelemetry
files (OTLP JSON or span tables). The annotation name is the label field (grounding, clarity,
sufficiency, search_type, reasoning_type, correct); others are ignored and counted. A
trace-level `correct` score (a trace id and no span) labels the trace's answer step.

Reads JSONL, one JSON document (a list, or {"data": [...]} as the APIs answer) or Parquet:
  phoenix   span_id, name, annotator_kind, result {label, score, explanation}, identifier,
            user_id, metadata (also annotation_name and result.label columns)
  langfuse  observationId, traceId, name, value / stringValue, dataType, source, authorUserId,
            comment, metadata (also the snake_case export columns)

The rater is the annotation's metadata.rater, else the annotating user, else <tool>-<kind>
(--rater overrides); the provenance kind is human (HUMAN, ANNOTATION), judge (LLM, EVAL) or
rule (CODE).

Example:
  seekbench import-labels phoenix_annotations.jsonl --from phoenix --traces spans.jsonl -o human.jsonl
"""


def register(sub) -> None:
    p = sub.add_parser(
        "import-labels",
        help="step labels in from Phoenix (span annotations) or Langfuse (scores)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("annotations", metavar="FILE", help="annotations exported from the tool")
    p.add_argument(
        "--from",
        dest="source",
        required=True,
        choices=["phoenix", "langfuse"],
        help="the tool the annotations come from",
    )
    p.add_argument(
        "--traces",
        nargs="+",
        required=True,
        metavar="FILE",
        help="the trace files the annotations are on, as imported from OpenTelemetry files",
    )
    p.add_argument(
        "--format",
        choices=available_formats(),
        default=None,
        help="force the trace format (default: detected per file)",
    )
    p.add_argument(
        "--rater", default=None, metavar="NAME", help="rater name for every label (default: per annotation, see above)"
    )
    p.add_argument("-o", "--output", required=True, metavar="SET.jsonl", help="annotation set to write")
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out annotations that fit no step or hold an unknown label, and say how many "
        "(default: stop at the first with exit code 2)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    read = read_traces(args.traces, format=args.format, skip_invalid=args.skip_invalid)
    report_skipped(read.skipped, what="trace records")
    index = span_index(read.traces, file=", ".join(map(str, args.traces)))
    got = read_span_labels(
        args.annotations, index, source=args.source, rater=args.rater, skip_invalid=args.skip_invalid
    )
    report_skipped(got.skipped, what="annotations")
    for name, n in got.ignored_names.most_common():
        print(f"seekbench: ignored {n} annotations named {name!r} (not a seekbench label field)", file=sys.stderr)
    if not len(got.labels):
        raise UserInputError(
            "no labels imported: no annotation names a label field of a step in the traces", file=args.annotations
        )
    n = got.labels.save(args.output)
    print(f"wrote {n} labels ({', '.join(got.labels.raters)}) to {args.output}")
    return 0
