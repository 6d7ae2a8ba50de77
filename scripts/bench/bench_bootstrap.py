"""Time the bootstrap of ``summarize_statistics`` alone on one corpus (prints figures; not a test).

The per-trace statistics table is reduced once; then ``summarize_statistics`` (every group's RQI,
CE and outcome metrics with B resamples) runs ``--repeats`` times in this process and the
median, min and max wall and CPU seconds are printed with the load average before and after.
It isolates the aggregation that the resample draws dominate, to measure a change to the
bootstrap (issue 28: the draws' cache and the thread that drew ahead).

Run (from the repo root, after ``make_corpus.py --scale 1``)::

    PYTHONPATH=. python scripts/bench/bench_bootstrap.py /tmp/seekbench-bench/corpus_1x.jsonl --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="a corpus file of make_corpus.py")
    ap.add_argument("--repeats", type=int, default=5, help="runs of summarize_statistics (median reported)")
    ap.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples B (2000)")
    ap.add_argument("--cluster", default="trace", choices=("trace", "question"), help="resampling unit")
    args = ap.parse_args()

    from seekbench.metrics import summarize_statistics, trace_statistics
    from seekbench.traces import build_tables, read_traces

    read = read_traces(args.corpus)
    steps, traces = build_tables(read.traces)
    stats = trace_statistics(steps, traces)
    warnings.simplefilter("ignore")  # the corpus's undefined rates, once per run
    load0 = os.getloadavg()[0]
    wall, cpu = [], []
    for _ in range(args.repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        summary = summarize_statistics(stats, n_boot=args.n_boot, seed=0, cluster=args.cluster)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    load1 = os.getloadavg()[0]
    print(
        f"{args.corpus.name}: {len(stats)} traces, {len(summary.groups)} groups, B = {args.n_boot}, "
        f"cluster = {args.cluster}, {args.repeats} runs"
    )
    print(f"wall s: median {statistics.median(wall):.2f} (min {min(wall):.2f}, max {max(wall):.2f})")
    print(f"cpu  s: median {statistics.median(cpu):.2f} (min {min(cpu):.2f}, max {max(cpu):.2f})")
    print(f"load average (1 min): {load0:.2f} before, {load1:.2f} after")


if __name__ == "__main__":
    main()
