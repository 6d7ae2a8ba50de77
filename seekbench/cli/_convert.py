"""``seekbench convert``: any supported format to the canonical JSONL (and its annotation set)."""

from __future__ import annotations

import argparse
import os

from ..labels import AnnotationSet
from ..traces import write_jsonl
from ._inputs import add_input_arguments, load_input


def register(sub) -> None:
    p = sub.add_parser("convert", help="convert traces to the canonical format",
                       description="Convert trace files to seekbench's canonical JSONL "
                                   "(schemas/trace.schema.json). Inline labels stay in the traces and are "
                                   "also written as an annotation set with --labels-out.")
    add_input_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl", help="canonical trace file to write")
    p.add_argument("--labels-out", metavar="FILE", default=None,
                   help="also write the inline labels as an annotation set (JSONL)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    args.labels = None
    loaded = load_input(args)
    n = write_jsonl(args.output, loaded.read.traces)
    msg = f"wrote {n} traces to {args.output}"
    if args.labels_out:
        source = ",".join(os.path.basename(f) for f in args.files)
        aset = AnnotationSet.from_traces(loaded.read.traces, source=source)
        aset.save(args.labels_out)
        msg += f"; {len(aset)} labels to {args.labels_out}"
    print(msg)
    return 0
