"""``seekbench export-labels`` and ``import-labels``: step labels out to and in from Phoenix or Langfuse.

Both map labels to steps through the span ids the OpenTelemetry importer keeps, so both read the
trace files first (``--traces``) and index their steps by span.
"""

from __future__ import annotations

import argparse
import sys

from .._errors import UserInputError
from ..labels import load_annotations, read_span_labels, span_index, span_label_records, write_span_labels
from ..traces import read_traces
from ._inputs import report_skipped
from ._options import add_command, add_output, add_skip_invalid, add_span_traces

#: The tools whose label files the commands write and read.
TOOLS = ("phoenix", "langfuse")

EXPORT_DESCRIPTION = """\
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


IMPORT_DESCRIPTION = """\
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


EXPORT_LABELS_HELP = "step labels out to Phoenix (span annotations) or Langfuse (scores)"

IMPORT_LABELS_HELP = "step labels in from Phoenix (span annotations) or Langfuse (scores)"


def register(sub) -> None:
    e = add_command(sub, "export-labels", help=EXPORT_LABELS_HELP, description=EXPORT_DESCRIPTION)
    e.add_argument("labels", metavar="SET", help="annotation set (JSONL) to export")
    add_span_traces(e, what="the labels are for")
    e.add_argument("--to", required=True, choices=TOOLS, help="the tool to write for")
    add_output(e, metavar="FILE", help="JSONL file to write")
    add_skip_invalid(e, what="labels and trace records that cannot be exported")
    e.set_defaults(run=run_export)

    i = add_command(sub, "import-labels", help=IMPORT_LABELS_HELP, description=IMPORT_DESCRIPTION)
    i.add_argument("annotations", metavar="FILE", help="annotations exported from the tool")
    i.add_argument("--from", dest="source", required=True, choices=TOOLS, help="the tool the annotations come from")
    add_span_traces(i, what="the annotations are on")
    i.add_argument(
        "--rater", default=None, metavar="NAME", help="rater name for every label (default: per annotation, see above)"
    )
    add_output(i, metavar="SET.jsonl", help="annotation set to write")
    add_skip_invalid(i, what="annotations that fit no step or hold an unknown label")
    i.set_defaults(run=run_import)


def _span_index(args: argparse.Namespace):
    """The steps of ``--traces`` by span id (skipped trace records reported on stderr)."""
    read = read_traces(args.traces, format=args.format, skip_invalid=args.skip_invalid)
    report_skipped(read.skipped, what="trace records")
    return span_index(read.traces, file=", ".join(map(str, args.traces)))


def run_export(args: argparse.Namespace) -> int:
    index = _span_index(args)
    labels = load_annotations(args.labels, skip_invalid=args.skip_invalid)
    report_skipped(labels.skipped, what="label records")
    export = span_label_records(labels, index, to=args.to, skip_invalid=args.skip_invalid, file=args.labels)
    report_skipped(export.skipped or [], what="labels")
    n = write_span_labels(args.output, export)
    what = "span annotations" if args.to == "phoenix" else "scores"
    unscored = f"; {export.unscored} unscored labels not exported" if export.unscored else ""
    print(f"wrote {n} {what} to {args.output}{unscored}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    index = _span_index(args)
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
