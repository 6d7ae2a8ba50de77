"""Input options shared by the commands: trace files, how to read them (one option group), labels."""

from __future__ import annotations

import argparse
import atexit
import shutil
import sys
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass

import pandas as pd

from .._errors import SeekbenchWarning, UserInputError
from ..labels import AnnotationSet, load_annotations
from ..traces import (
    ReadLimits,
    ReadResult,
    attach_labels,
    build_tables,
    is_stream,
    read_tables,
    read_traces,
    spool_stream,
    stream_label,
)
from ..traces.importers import load_mapping
from ._options import LIMIT_OPTIONS, add_format_option, add_label_options, add_limit_options, add_skip_invalid

#: How a record's fields map onto a trace, when the importer's defaults do not find them: (flag, metavar, help).
FIELD_OPTIONS = (
    ("--agent", "NAME", "the agent of records that name none (default: the file's name without extension)"),
    (
        "--question-field",
        "FIELD",
        "record field holding the question, dotted for nested fields (default: 'question', "
        "else the prompt's user turn or first user message)",
    ),
    (
        "--answer-field",
        "FIELD",
        "record field holding the gold answer(s) (default: golden_answers, gold_answers, "
        "ground_truth, reward_model.ground_truth, answers, answer, gold, gts)",
    ),
    (
        "--field",
        "FIELD",
        "record field holding the model's tagged text (default: output, response, "
        "sequences_str, gen_text_store, message_str, ...)",
    ),
    (
        "--search-tools",
        "NAMES",
        "comma-separated tool names that are searches; every other tool is an 'other' step "
        "counted as an action call (default: by name: search, scholar, visit, scrape, browse, "
        "fetch, retrieve, open, ...)",
    ),
    (
        "--answer-tool",
        "NAMES",
        "comma-separated tool names whose call gives the answer (its answer argument becomes the answer "
        "step and final_answer), beside the default submit, final_answer, submit_final_result, answer, "
        "final_result",
    ),
)


def add_input_arguments(p: argparse.ArgumentParser, *, files_required: bool = True) -> None:
    """The trace files and the one group of options saying how to read them, the same on every command."""
    p.add_argument(
        "files",
        nargs="+" if files_required else "*",
        metavar="FILE",
        help="trace files (JSONL, JSON, chat-template text, or Parquet from `seekbench convert --to "
        "parquet`); '-' reads standard input, and a pipe or FIFO works too"
        + ("" if files_required else "; default: the embedded sample traces"),
    )
    g = p.add_argument_group(
        "reading trace files",
        "How trace files are read; the README's Producers table gives the options for each producer's files.",
    )
    add_format_option(g, what="the input format")
    add_skip_invalid(g, what="invalid trace records")
    for flag, metavar, text in FIELD_OPTIONS:
        g.add_argument(flag, default=None, metavar=metavar, help=text)
    g.add_argument(
        "--map",
        dest="mapping",
        default=None,
        metavar="FILE",
        help="a mapping file (TOML) naming, with paths such as $.task.prompt or $.events[*], where the "
        "question, answer, gold, agent, steps or messages, tool calls and documents of records of any "
        "other shape are (docs/formats.md, 'Any other shape'); `seekbench convert FILE --explain` prints "
        "one to start from",
    )
    g.add_argument(
        "--tags",
        action="append",
        default=None,
        metavar="KIND=TAG",
        help="tags of a step kind (reasoning, search, search_result, answer, tool_call): a tag name "
        "(search_result=result) or an open and close pair ('search=<q> </q>'); replaces that "
        "kind's default tags; comma-separated or repeated",
    )
    add_limit_options(g)


def parse_tags(values: list[str] | None) -> dict | None:
    """``--tags`` values (``KIND=NAME`` or ``KIND=OPEN CLOSE``, comma-separated or repeated) as the tags option."""
    if not values:
        return None
    out: dict = {}
    for entry in (e.strip() for v in values for e in v.split(",")):
        if not entry:
            continue
        kind, eq, value = entry.partition("=")
        parts = value.split()
        if not eq or not kind.strip() or len(parts) not in (1, 2):
            raise UserInputError(f"--tags {entry!r}: write KIND=TAG or 'KIND=OPEN CLOSE', e.g. search_result=result")
        out[kind.strip()] = parts[0] if len(parts) == 1 else parts
    return out


def read_limits(args: argparse.Namespace) -> ReadLimits | None:
    """The limits ``--max-record-bytes``, ``--max-member-bytes`` and ``--max-row-group-bytes`` set (the
    defaults for those not given), or None when none is given."""
    given: dict[str, int] = {
        dest: getattr(args, dest) for _, dest, _, _ in LIMIT_OPTIONS if getattr(args, dest, None) is not None
    }
    return ReadLimits(**given) if given else None


def spool_streams(files: list, limits: ReadLimits | None) -> None:
    """Replace, in ``files`` itself, each stream (``-``, a pipe, a FIFO, ``<(cmd)``) by a copy in a
    temporary folder removed at exit, so detection and the importer each read all of it (messages
    then name the copy: ``.../seekbench-input-XXXX/stdin``)."""
    for i, name in enumerate(files):
        if not is_stream(name):
            continue
        folder = tempfile.mkdtemp(prefix="seekbench-input-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        files[i] = str(spool_stream(name, f"{folder}/{stream_label(name)}", limits=limits))


def import_options(args: argparse.Namespace) -> dict:
    """The importer options the input group's flags give (None where a flag is unset), the limits
    among them.

    Every command that reads traces asks for them before reading, so this is also where the streams
    among ``args.files`` are spooled to files (:func:`spool_streams`, in the list itself).
    """
    limits = read_limits(args)
    if getattr(args, "files", None):
        spool_streams(args.files, limits)
    return {
        "limits": limits,
        "agent": getattr(args, "agent", None),
        "question_field": getattr(args, "question_field", None),
        "answer_field": getattr(args, "answer_field", None),
        "field": getattr(args, "field", None),
        "tags": parse_tags(getattr(args, "tags", None)),
        "search_tools": getattr(args, "search_tools", None),
        "answer_tool": getattr(args, "answer_tool", None),
        "mapping": load_mapping(args.mapping) if getattr(args, "mapping", None) else None,
    }


def read_input(args: argparse.Namespace, files: list | None = None) -> ReadResult:
    """Read the traces of ``files`` (default ``args.files``) as the input group says, and report the import."""
    read = read_traces(
        args.files if files is None else files,
        format=args.format,
        skip_invalid=args.skip_invalid,
        **import_options(args),
    )
    report_skipped(read.skipped, what="trace records")
    report_import(read)
    return read


def report_import(read: ReadResult) -> None:
    """The importers' notes, their warnings (the first three and a count), and the one summary line.

    Issued as :class:`SeekbenchWarning`, which the CLI prints on stderr once the command has run
    (an error instead ends the run with its one line, without them).
    """
    lines = [n.removeprefix("note: ") for n in read.notes]
    lines += [f"warning: {w}" for w in read.warnings[:3]]
    if read.n_warnings > 3:
        lines.append(f"warning: ... and {read.n_warnings - 3} more like these")
    if read.summary is not None:
        lines += [f"warning: {a}" for a in read.summary.advice()] + [read.summary.line()]
    for line in lines:
        warnings.warn(line, SeekbenchWarning, stacklevel=2)


def add_label_arguments(p: argparse.ArgumentParser) -> None:
    """``--labels`` and ``--labels-rater``: the step labels the metrics read, when not the inline ones."""
    add_label_options(
        p, labels_help="annotation set (JSONL) to use for step labels; default: the labels inline in the traces"
    )


@dataclass
class LoadedInput:
    read: ReadResult
    labels: AnnotationSet | None
    steps: pd.DataFrame
    traces: pd.DataFrame
    label_source: str


#: Commands that read only the tables: their traces are streamed into them and not kept.
TABLE_ONLY_COMMANDS = ("metrics",)


def load_input(args: argparse.Namespace, *, keep_traces: bool | None = None) -> LoadedInput:
    """Read traces and labels as the flags say, report skipped records on stderr, build the tables.

    With ``keep_traces=False`` the traces are streamed into the tables and not kept
    (``read.traces`` stays empty), so memory holds the tables only; None (default) does
    so for the commands in ``TABLE_ONLY_COMMANDS``.
    """
    if keep_traces is None:
        keep_traces = getattr(args, "command", None) not in TABLE_ONLY_COMMANDS
    if not args.files:
        from ..data import sample_traces_path

        args.files = [str(sample_traces_path())]
    files = args.files
    if keep_traces:
        read = read_traces(files, format=args.format, skip_invalid=args.skip_invalid, **import_options(args))
    else:  # streamed into the tables, not kept: memory holds the tables only
        read, steps, traces = read_tables(
            files, format=args.format, skip_invalid=args.skip_invalid, **import_options(args)
        )
    report_skipped(read.skipped, what="trace records")
    report_import(read)
    labels = None
    source = "inline labels"
    if getattr(args, "labels", None):
        labels = load_annotations(args.labels, skip_invalid=args.skip_invalid)
        report_skipped(labels.skipped, what="label records")
        if args.labels_rater:
            if args.labels_rater not in labels.raters:
                raise UserInputError(
                    f"rater {args.labels_rater!r} not in the set; it has: {', '.join(labels.raters)}", file=args.labels
                )
            labels = labels.for_rater(args.labels_rater)
        elif len(labels.raters) > 1:
            raise UserInputError(
                f"the set holds several raters ({', '.join(labels.raters)}); pick one with --labels-rater",
                file=args.labels,
            )
        source = f"{args.labels}" + (f" (rater {args.labels_rater})" if args.labels_rater else "")
    if keep_traces:
        steps, traces = build_tables(read.traces, None if labels is None else labels.records)
    elif labels is not None:
        steps = attach_labels(steps, labels.records)
    if labels is not None:
        check_labels_fit(labels.records, steps, labels_file=args.labels, files=files)
    return LoadedInput(read, labels, steps, traces, source)


def check_labels_fit(records: pd.DataFrame, steps: pd.DataFrame, *, labels_file: str, files: list[str]) -> None:
    """Labels made for other traces are a user error; labels partly for other traces, one warning line.

    A label fits when its (trace_id, step) is a step of the traces read.
    """
    if records.empty:
        return
    have = set(zip(steps["trace_id"].astype(str), steps["step"].astype(int), strict=True))
    keys = set(zip(records["trace_id"].astype(str), records["step"].astype(int), strict=True))
    fit = keys & have
    lab_traces, traces = set(records["trace_id"].astype(str)), set(steps["trace_id"].astype(str))
    where = ", ".join(map(str, files))
    if not fit:
        raise UserInputError(
            f"the labels fit no trace: they label {len(keys)} steps of {len(lab_traces)} traces, "
            f"and none of those steps is among the {len(have)} steps of the {len(traces)} traces "
            f"in {where}; give the annotation set made for these traces",
            file=str(labels_file),
        )
    if len(fit) < len(keys):
        print(
            f"seekbench: warning: {labels_file}: {len(keys) - len(fit)} of {len(keys)} labeled steps "
            f"({len(lab_traces - traces)} of {len(lab_traces)} traces) are not in {where}; "
            f"using the {len(fit)} that are",
            file=sys.stderr,
            flush=True,
        )


def report_skipped(skipped: list, *, what: str) -> None:
    if not skipped:
        return
    reasons = Counter(e.message.split(";")[0] for e in skipped)
    print(f"seekbench: skipped {len(skipped)} invalid {what}:", file=sys.stderr)
    for reason, n in reasons.most_common(5):
        print(f"  {n} x {reason}", file=sys.stderr)
    for e in skipped[:3]:
        print(f"  e.g. {e.one_line()}", file=sys.stderr)
