"""``seekbench convert``: any supported format to canonical JSONL or Parquet (and its annotation set)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from .._errors import UserInputError
from .._io import paused_gc
from ..labels import AnnotationSet
from ..traces import ReadResult, importer_options, valid_traces, write_jsonl
from ..traces.importers import format_of, importer_for, mapping_lines, write_parquet
from ._inputs import add_input_arguments, import_options, report_import, report_skipped
from ._options import add_command, add_output

TARGETS = ("jsonl", "parquet")


CONVERT_HELP = "convert traces to the canonical format (JSONL or Parquet)"

CONVERT_DESCRIPTION = (
    "Convert trace files to seekbench's canonical JSONL "
    "(docs/formats.md) or to Parquet (one row per step, the trace's "
    "fields beside its steps: the step table DuckDB or Spark read as it is). "
    "Streams: memory does not grow with the corpus. Inline labels stay in the "
    "traces and are also written as an annotation set with --labels-out (a file whose "
    "traces carry no step label, such as a Search-R1 run, is an error there: label it with "
    "seekbench annotate)."
)


def register(sub) -> None:
    p = add_command(sub, "convert", help=CONVERT_HELP, description=CONVERT_DESCRIPTION)
    add_input_arguments(p)
    add_output(
        p, required=False, metavar="OUT", help="file to write (OUT.jsonl, OUT.parquet); required unless --explain"
    )
    p.add_argument(
        "--to",
        choices=TARGETS,
        default=None,
        help="output format (default: parquet when OUT ends in .parquet, else jsonl)",
    )
    p.add_argument(
        "--labels-out", metavar="FILE", default=None, help="also write the inline labels as an annotation set (JSONL)"
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="write nothing; show, for the first record of each file, where the question, each step, "
        "the documents, the answer and the gold came from (field paths), to check a mapping "
        "before trusting numbers; then the mapping in --map syntax, to edit and pass back with --map",
    )
    p.set_defaults(run=run)


def _slim(trace: dict) -> dict:
    """What ``AnnotationSet.from_traces`` reads of a trace (the labels, not the text)."""
    return {
        "trace_id": trace["trace_id"],
        "inline_labels": trace.get("inline_labels"),
        "steps": [{"index": st["index"], "labels": st.get("labels")} for st in trace["steps"]],
    }


def _has_labels(trace: dict) -> bool:
    """Whether any step of ``trace`` carries a label value (what ``AnnotationSet.from_traces`` keeps)."""
    return any(v is not None for st in trace["steps"] for v in (st.get("labels") or {}).values())


def _short(value: object, width: int = 70) -> str:
    text = " ".join(str(value).split())
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def explain(path: str, args: argparse.Namespace) -> list[str]:
    """Lines saying where each field and step of the file's first record came from."""
    given = import_options(args)
    fmt = format_of(path, args.format, skip_invalid=args.skip_invalid, options=given)
    options, ignored = importer_options(fmt, given)
    how = f" ({args.mapping})" if fmt == "mapped" else " (forced)" if args.format else " (detected)"
    out = [
        f"{path}: format {fmt}"
        + how
        + (f"; ignores {', '.join('--' + k.replace('_', '-') for k in ignored)}" if ignored else "")
    ]
    rec = next(iter(importer_for(fmt).iter_records(path, **options)), None)
    if rec is None:
        return [*out, "  no record"]
    if rec.error is not None:
        return [*out, f"  first record is invalid: {rec.error.one_line()}"]
    t, src = rec.trace, rec.sources
    out.append(f"first record (line {rec.line}): trace {t['trace_id']}")
    agent_from = src.get("agent") or (
        "--agent" if args.agent and t["agent"] == args.agent else "the file name (no agent field)"
    )
    none = "(not found)"
    fields = [
        ("agent", agent_from, t["agent"]),
        ("question", src.get("question", none), t["question"]),
        ("final_answer", src.get("final_answer", none), t["final_answer"]),
        ("gold_answers", src.get("gold_answers", none), t["gold_answers"]),
        (
            "correct",
            src.get("correct", none),
            None if t["correct"] is None else f"{t['correct']['value']} ({t['correct']['source']})",
        ),
    ]
    out += [f"  {name:<13} <- {where}: {_short(value)}" for name, where, value in fields]
    out.append(f"  steps ({len(t['steps'])}):")
    for st in t["steps"]:
        what = (st.get("query") if st["kind"] == "search" else None) or st.get("text")
        line = f"    {st['index']:>3} {st['kind']:<13} <- {(st.get('source_ref') or {}).get('path')}"
        if st.get("tool") is not None:
            line += f" tool {st['tool']!r}"
        line += f": {_short(what or '', 50)}"
        if st.get("documents"):
            titles = ", ".join(_short(d.get("title") or d.get("url") or "(untitled)", 30) for d in st["documents"][:5])
            n = len(st["documents"])
            line += f"; {n} document{'' if n == 1 else 's'}: {titles}" + (", ..." if len(st["documents"]) > 5 else "")
        out.append(line)
    if t.get("metadata", {}).get("tool_kinds"):
        out.append("  tool kinds: " + ", ".join(f"{k} = {v}" for k, v in t["metadata"]["tool_kinds"].items()))
    out += [f"  {n}" for n in rec.notes + rec.warnings]
    out.append("  the mapping, in --map syntax (save the lines below to a file, edit, pass back with --map FILE):")
    return out + mapping_lines(fmt, rec, mapping=options.get("mapping"))


def run(args: argparse.Namespace) -> int:
    if args.explain:
        for f in args.files:
            print("\n".join(explain(f, args)))
        return 0
    if not args.output:
        raise UserInputError("convert needs -o OUT (the file to write), or --explain to only show the mapping")
    target = args.to or ("parquet" if str(args.output).lower().endswith(".parquet") else "jsonl")
    read = ReadResult()
    label_traces: list[dict] | None = [] if args.labels_out else None

    def traces() -> Iterator[dict]:
        n = labeled = 0
        for tr in valid_traces(
            args.files, read, format=args.format, skip_invalid=args.skip_invalid, **import_options(args)
        ):
            n += 1
            if label_traces is not None:
                label_traces.append(_slim(tr))
                labeled += _has_labels(tr)
            yield tr
        # Both raised inside the writer: nothing is written.
        if not n and not read.skipped:
            raise UserInputError("no traces found; the file holds no records", file=", ".join(map(str, args.files)))
        if n and label_traces is not None and not labeled:
            raise UserInputError(
                f"--labels-out: none of the {n} traces carries a step label, so there is no annotation set "
                f"to write; nothing was written. Convert without --labels-out, then label the steps with a "
                f"judge: seekbench annotate {args.output} --judge rules -o {args.labels_out}",
                file=", ".join(map(str, args.files)),
            )

    with paused_gc():
        if target == "parquet":
            n, _ = write_parquet(args.output, traces())
        else:
            n = write_jsonl(args.output, traces())
    report_skipped(read.skipped, what="trace records")
    report_import(read)
    msg = f"wrote {n} traces to {args.output}" + (" (Parquet)" if target == "parquet" else "")
    if label_traces is not None:  # collected exactly when --labels-out is given
        source = ",".join(os.path.basename(f) for f in args.files)
        aset = AnnotationSet.from_traces(label_traces, source=source)
        aset.save(args.labels_out)
        msg += f"; {len(aset)} labels to {args.labels_out}"
    print(msg)
    return 0
