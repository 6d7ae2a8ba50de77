"""``--jobs`` and ``--engine``: the metrics of a large corpus reduced fragment by fragment (seekbench.scale)."""

from __future__ import annotations

import argparse
import functools
from typing import TYPE_CHECKING

from .._workers import default_jobs

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
    # One pool of workers (processes start only when given work): the fragments are read in it, then
    # the groups' metrics are computed in it, without starting processes or importing again.
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
