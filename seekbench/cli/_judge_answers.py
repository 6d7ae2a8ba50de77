"""``seekbench judge-answers``: decide whether final answers are correct (EM, an LLM judge, or a panel)."""

from __future__ import annotations

import argparse
import sys

from .._errors import UserInputError
from ._inputs import add_input_arguments, read_input, report_skipped
from ._options import add_command, add_json, add_judge_option, add_llm_options, add_output, check_at_least, llm_kwargs
from ._output import finish

DESCRIPTION = """\
Decide whether each trace's final answer is correct, and write the traces
with their `correct` field filled: the value, the source that decided it
(em, judge or panel) and, in `detail`, every judge's vote, the majority and
whether the judges disagreed.

--judge em (the default) is exact match after SQuAD normalisation: offline
and free. Any other --judge is an answer judge file (kind = "answer" in
judges/, e.g. answer-gpt-4.1-mini, answer-local). Give --judge twice or more
for a panel, and --tiebreaker C for a judge asked only when the others reach no
majority (InfoDeepSeek's protocol: two judges, a third on disagreement).
Questions flagged false_premise in their metadata are graded with the judge's
false-premise prompt. Replies are read tolerantly ("Yes.", "No, because ...")
but an ambiguous one ("yes and no", "maybe") is re-asked, then left unscored.

Completions are cached (SQLite): re-running the same command pays for
nothing twice. Answers whose request failed are left undecided (pending);
run again to retry them. Traces carrying an evidence set
(metadata.evidence_set) also get their per-k and no-retrieval answers judged.
InfoDeepSeek result files are accepted as input and imported on the fly.
"""


#: What judge-answers asks of the LLM options (seekbench.cli._options.LLM_OPTIONS), in ``--help`` order.
LLM = ("concurrency", "budget_usd", "cache", "base_url", "no_progress")


def add_lang_option(p) -> None:
    """``--lang``: the language of InfoDeepSeek files, which the commands reading them import on the fly."""
    p.add_argument(
        "--lang",
        choices=["en", "zh"],
        default=None,
        help="language of InfoDeepSeek input files (default: from the file name)",
    )


def register(sub) -> None:
    p = add_command(
        sub, "judge-answers", help="judge final answers (EM, an LLM answer judge, or a panel)", description=DESCRIPTION
    )
    add_input_arguments(p)
    add_output(p, metavar="OUT", help="traces to write (JSONL, atomically)")
    add_judge_option(
        p, repeat=True, help="answer judge: em (default), or a judge name/file of kind answer; repeat for a panel"
    )
    p.add_argument(
        "--tiebreaker",
        "--tiebreak",
        dest="tiebreaker",
        default=None,
        metavar="NAME",
        help="tiebreaker judge, asked only when the --judge panel reaches no majority (--tiebreak: the old spelling)",
    )
    p.add_argument(
        "--overwrite",
        choices=["missing", "machine", "all"],
        default="machine",
        help="existing decisions to replace: only missing ones; also em/judge/panel ones (default); "
        "all, including human and source-data decisions (the old one is kept in detail.previous)",
    )
    p.add_argument(
        "--no-evidence-set",
        action="store_true",
        help="judge only the final answers, not the per-k answers of metadata.evidence_set",
    )
    p.add_argument(
        "--decisions",
        default=None,
        metavar="CSV",
        help="also write one row per judged answer (votes, majority, disagreement) as CSV",
    )
    add_lang_option(p)
    add_llm_options(p, *LLM)
    add_json(p, what="the run summary as one JSON object on stdout")
    p.set_defaults(run=run)


def load_any_traces(args: argparse.Namespace) -> list[dict]:
    """Canonical traces from trace files of any supported format, or from InfoDeepSeek result/score files."""
    from ..answers import is_infodeepseek_file, read_infodeepseek

    traces: list[dict] = []
    plain = []
    for f in args.files:
        if args.format is None and is_infodeepseek_file(f):
            imp = read_infodeepseek(f, lang=getattr(args, "lang", None), skip_invalid=args.skip_invalid)
            report_skipped(imp.skipped, what=f"InfoDeepSeek records in {f}")
            traces += imp.traces
        else:
            plain.append(f)
    if plain:
        read = read_input(args, plain)
        traces += read.traces
    ids = [t["trace_id"] for t in traces]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise UserInputError(f"trace id {dup!r} appears in more than one input; trace ids must be unique")
    return traces


def run(args: argparse.Namespace) -> int:
    from .._csv import csv_text
    from .._io import write_jsonl, write_text
    from ..answers import judge_answers

    check_at_least(args, ("concurrency", 1), ("budget_usd", 0))
    traces = load_any_traces(args)
    res = judge_answers(
        traces,
        args.judge or ["em"],
        tiebreak=args.tiebreaker,
        overwrite=args.overwrite,
        evidence_set=not args.no_evidence_set,
        **llm_kwargs(args, *LLM),
    )
    write_jsonl(args.output, res.traces)
    if args.decisions:
        write_text(args.decisions, csv_text(res.decisions))
    text = res.format() + f"\nwrote {len(res.traces)} traces to {args.output}"
    payload = {**res.to_dict(), "output": args.output}
    return finish(args, payload, text, failed=bool(res.counts["pending"]), text_to=sys.stderr)
