"""``--jobs`` and ``--engine``: the metrics of a large corpus reduced fragment by fragment (seekbench.scale)."""

from __future__ import annotations

import argparse
import functools
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager

from ..metrics import AUTO_POISSON_ABOVE, MetricOptions, MetricsSummary, summarize_statistics, trace_statistics
from ._inputs import import_options, report_import, report_skipped
from ._options import check_at_least


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """The options saying where the per-trace reduction runs (the same on every command that takes them)."""
    g = p.add_argument_group(
        "scale (large corpora)",
        "Traces are read in fragments of complete traces and reduced to one row per trace, so memory "
        "holds those rows, not the traces. Inputs may be folders, globs or URLs (s3://..., through fsspec).",
    )
    g.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes reading and reducing fragments, then computing the groups' metrics "
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
    from ..scale import default_jobs, reduce_traces

    check_at_least(args, ("jobs", 1))
    red = reduce_traces(
        args.files,
        functools.partial(trace_statistics, options=options),
        engine=args.engine,
        jobs=args.jobs,
        format=args.format,
        skip_invalid=args.skip_invalid,
        strings="compact",  # categorical keys and Arrow trace ids: the same numbers, less memory
        **import_options(args),
    )
    report_skipped(red.read.skipped, what="trace records")
    report_import(red.read)
    args.n_skipped = red.read.n_skipped
    jobs = default_jobs() if args.jobs is None else args.jobs
    # The exact bootstrap's draws are what take time; above AUTO_POISSON_ABOVE traces the Poisson
    # bootstrap is cheap per group while a group's rows are costly to send: computed here.
    draws = len(red.rows) * args.n_boot if len(red.rows) <= AUTO_POISSON_ABOVE else 0
    with group_workers(jobs, draws) as executor:
        return summarize_statistics(
            red.rows, by=by, options=options, n_boot=args.n_boot, seed=args.seed, executor=executor
        )


#: Multinomial resample counts (traces x resamples) from which the groups are computed in worker
#: processes: below it starting them costs more than it saves (the sample's 48 traces take 0.2 s
#: here; the paper's 28,493 x 2000 about 4 CPU seconds, spread over the cores).
PARALLEL_WORK = 10_000_000


@contextmanager
def group_workers(jobs: int, draws: int) -> Iterator[Executor | None]:
    """``jobs`` worker processes for the groups' metrics (started by a fork server, as the fragments'
    are), or None (this process) for one job or fewer ``draws`` than :data:`PARALLEL_WORK`."""
    if jobs <= 1 or draws < PARALLEL_WORK:
        yield None
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")  # no fork server on Windows
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        yield pool
