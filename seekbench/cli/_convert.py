"""``seekbench convert``: any supported format to canonical JSONL or Parquet (and its annotation set)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from .._errors import UserInputError
from ..labels import AnnotationSet
from ..traces import write_jsonl
from ..traces._io import paused_gc
from ..traces._read import ReadResult, _valid_traces
from ..traces.importers._parquet import write_parquet
from ._inputs import add_input_arguments, report_skipped

TARGETS = ("jsonl", "parquet")


def register(sub) -> None:
    p = sub.add_parser("convert", help="convert traces to the canonical format (JSONL or Parquet)",
                       description="Convert trace files to seekbench's canonical JSONL "
                                   "(docs/formats.md) or to Parquet (one row per step, the trace's "
                                   "fields beside its steps: the step table DuckDB or Spark read as it is). "
                                   "Streams: memory does not grow with the corpus. Inline labels stay in the "
                                   "traces and are also written as an annotation set with --labels-out.")
    add_input_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write (OUT.jsonl, OUT.parquet)")
    p.add_argument("--to", choices=TARGETS, default=None,
                   help="output format (default: parquet when OUT ends in .parquet, else jsonl)")
    p.add_argument("--labels-out", metavar="FILE", default=None,
                   help="also write the inline labels as an annotation set (JSONL)")
    p.set_defaults(run=run)


def _slim(trace: dict) -> dict:
    """What ``AnnotationSet.from_traces`` reads of a trace (the labels, not the text)."""
    return {"trace_id": trace["trace_id"], "inline_labels": trace.get("inline_labels"),
            "steps": [{"index": st["index"], "labels": st.get("labels")} for st in trace["steps"]]}


def run(args: argparse.Namespace) -> int:
    target = args.to or ("parquet" if str(args.output).lower().endswith(".parquet") else "jsonl")
    read = ReadResult()
    label_traces: list[dict] | None = [] if args.labels_out else None

    def traces() -> Iterator[dict]:
        n = 0
        for tr in _valid_traces(args.files, read, format=args.format, skip_invalid=args.skip_invalid):
            n += 1
            if label_traces is not None:
                label_traces.append(_slim(tr))
            yield tr
        if not n and not read.skipped:  # raised inside the writer: nothing is written
            raise UserInputError("no traces found; the file holds no records", file=", ".join(map(str, args.files)))

    with paused_gc():
        if target == "parquet":
            n, _ = write_parquet(args.output, traces())
        else:
            n = write_jsonl(args.output, traces())
    report_skipped(read.skipped, what="trace records")
    msg = f"wrote {n} traces to {args.output}" + (" (Parquet)" if target == "parquet" else "")
    if args.labels_out:
        source = ",".join(os.path.basename(f) for f in args.files)
        aset = AnnotationSet.from_traces(label_traces, source=source)
        aset.save(args.labels_out)
        msg += f"; {len(aset)} labels to {args.labels_out}"
    print(msg)
    return 0
