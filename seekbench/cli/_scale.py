"""``--jobs`` and ``--engine``: the metrics of a large corpus reduced fragment by fragment (seekbench.scale)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING

# The standard library only at import: `seekbench metrics` imports this module to start its workers'
# fork server before it builds its parser (start_workers_early); the rest is imported when it runs.
from .._workers import default_jobs, idle_core, start_fork_server

if TYPE_CHECKING:
    from ..metrics import MetricOptions, MetricsSummary


def add_engine_arguments(p: argparse.ArgumentParser, *, about: str | None = None, jobs: str | None = None) -> None:
    """The options saying where the per-trace reduction runs (the same on every command that takes them);
    ``about`` and ``jobs`` word the group and --jobs for a command that keeps its traces in memory."""
    g = p.add_argument_group(
        "scale (large corpora)",
        about
        or "Traces are read in fragments of complete traces and reduced to one row per trace, so memory "
        "holds those rows, not the traces. Inputs may be folders, globs or URLs (s3://..., through fsspec).",
    )
    g.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help=jobs
        or "worker processes reading and reducing fragments, then computing the groups' metrics "
        "(default: all cores; 1: this process only)",
    )
    g.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local: this machine's cores (default); ray: Ray Data tasks on the Ray cluster named by "
        "RAY_ADDRESS, else a local Ray instance (pip install 'seekbench[ray]')",
    )


def scaled_summary(args: argparse.Namespace, *, by: tuple[str, ...], options: MetricOptions) -> MetricsSummary:
    """The metrics summary of ``args.files`` through :func:`seekbench.scale.reduce_traces`, the read reported
    on stderr as every command reports it."""
    from ..metrics import AUTO_POISSON_ABOVE, summarize_statistics, trace_statistics
    from ..scale import local_workers, reduce_traces
    from ._inputs import import_options, report_import, report_skipped
    from ._options import check_at_least

    check_at_least(args, ("jobs", 1))
    jobs = default_jobs() if args.jobs is None else args.jobs
    # One pool of workers (processes start only when given work; their fork server may be running
    # already, see start_workers_early): the fragments are read in it, then the groups' metrics are
    # computed in it, without starting processes or importing again.
    with local_workers(jobs) as pool:
        red = reduce_traces(
            args.files,
            functools.partial(trace_statistics, options=options),
            engine=args.engine,
            jobs=jobs,
            executor=pool,
            format=args.format,
            skip_invalid=args.skip_invalid,
            strings="compact",  # categorical keys and Arrow trace ids: the same numbers, less memory
            **import_options(args),
        )
        report_skipped(red.read.skipped, what="trace records")
        report_import(red.read)
        args.n_skipped = red.read.n_skipped
        # The exact bootstrap's draws are what take time; above AUTO_POISSON_ABOVE traces the Poisson
        # bootstrap is cheap per group while a group's rows are costly to send: computed here.
        draws = len(red.rows) * args.n_boot if len(red.rows) <= AUTO_POISSON_ABOVE else 0
        return summarize_statistics(
            red.rows,
            by=by,
            options=options,
            n_boot=args.n_boot,
            seed=args.seed,
            executor=pool if draws >= PARALLEL_WORK else None,
        )


#: Multinomial resample counts (traces x resamples) from which the groups are computed in worker
#: processes: below it starting them costs more than it saves (the sample's 48 traces take 0.2 s
#: here; the paper's 28,493 x 2000 about 4 CPU seconds, spread over the cores).
PARALLEL_WORK = 10_000_000


def wants_local_workers(*, jobs: int | None, engine: str | None, labels: str | None) -> bool:
    """Whether ``metrics`` with these options reads in local worker processes: not with one job, with
    Ray (it starts local workers only if the groups' metrics need them, later) or with ``--labels``
    (read whole, in this process)."""
    return (default_jobs() if jobs is None else jobs) > 1 and engine in (None, "local") and labels is None


#: Input bytes (the files named on the command line, together) from which ``metrics`` starts its workers'
#: fork server before building its parser: one JSONL fragment (``seekbench.traces`` JSONL_BYTES). A
#: smaller JSONL file is read in this process, and its groups too (PARALLEL_WORK): a server started
#: for it would import for nothing.
EARLY_BYTES = 32 * 2**20


class _Lenient(argparse.ArgumentParser):
    """Never prints or exits: the command's own parser reports a bad command line, once."""

    def error(self, message: str):
        raise ValueError(message)


def start_workers_early(argv: Sequence[str]) -> int | None:
    """Start the fork server of ``metrics``' worker processes now, from the command line not yet parsed,
    when it will read in local workers; the server's process id (to stop it with
    :func:`seekbench._workers.stop_fork_server` when the command ends), else None.

    Building the parser imports pandas and the metrics (their options' choices and defaults): about
    half a second on one core. The server imports the same for the workers meanwhile, on another, so
    the workers start reading as soon as the fragments are planned instead of half a second later.
    Looked at: ``--jobs``, ``--engine``, ``--labels`` and ``--help`` (abbreviated as the real parser
    allows them), the size of the files named (folders, globs and URLs count nothing: their server
    starts when the pool needs it, as before), and whether a core is idle now. A command line
    misjudged costs that half second of CPU, never a result.
    """
    pre = _Lenient(add_help=False, exit_on_error=False)
    pre.add_argument("-h", "--help", action="store_true")
    for option in ("--jobs", "--engine", "--labels"):
        pre.add_argument(option)
    try:
        known, rest = pre.parse_known_args(list(argv))
        jobs = None if known.jobs is None else int(known.jobs)
    except (argparse.ArgumentError, ValueError):
        return None
    if known.help or not wants_local_workers(jobs=jobs, engine=known.engine, labels=known.labels):
        return None
    if _file_bytes(rest[1:] if rest[:1] == ["metrics"] else rest) < EARLY_BYTES:
        return None
    # Side by side only on an idle core: on busy ones (other sessions) the server's imports would take
    # the driver's share of the CPU and delay its own (measured: the first fragment 0.3 s later).
    return start_fork_server() if idle_core() else None


def _file_bytes(words: Sequence[str]) -> int:
    """The bytes of the words that name regular files (the inputs: no other option of ``metrics`` but
    ``--labels`` names a file)."""
    total = 0
    for word in words:
        with contextlib.suppress(OSError, ValueError):
            st = os.stat(word)
            total += st.st_size if stat.S_ISREG(st.st_mode) else 0
    return total
