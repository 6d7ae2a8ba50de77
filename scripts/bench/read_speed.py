"""CPU seconds per stage of the read path a metrics worker runs on canonical JSONL (prints figures; not a test).

The stages, in one process, as a local-engine worker runs them, fragment by fragment (32 MiB of
JSONL each, as ``plan_fragments`` cuts them), each record dropped before the next is parsed:

- ``parse``: ``_canonical_records`` (read the byte range, split lines, orjson per line, ``source``
  filled), each record freed as the next is read (freeing is part of this stage);
- ``validate``: ``validate_trace`` on each record (the parse loop timed again with it, minus ``parse``);
- ``gather``: ``DictColumns.add`` of each valid record (the loop again with it, minus the two above);
- ``tables``: the rest of the worker's loop (``dict_chunks``: ids, the import summary, the tables of
  each chunk of ``CHUNK_TRACES`` traces), its CPU minus the three above;
- ``read``: the worker's loop itself (``dict_chunks``), the sum of the four above measured at once;
- ``trace_statistics``: the per-trace reduction of each chunk's tables (default options).

Each is timed by ``time.process_time`` (this process's CPU, all threads) with the garbage
collector paused as the worker pauses it; ``--repeats`` runs each and reports the minimum and
the median. The stages are differences of loops that each parse the fragment again, so under
load they are noisier than ``read``. The 1-minute load average is printed before and after:
other sessions share the machine, so read figures beside it.

Run (from the repo root)::

    PYTHONPATH=. python scripts/bench/read_speed.py /tmp/scale-io-bench/corpus_1x.jsonl --repeats 3
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

from seekbench.metrics import trace_statistics
from seekbench.traces import plan_fragments
from seekbench.traces._chunks import CHUNK_TRACES, _canonical_records
from seekbench.traces._dict_columns import DictColumns
from seekbench.traces._fragment_log import FragmentLog, dict_chunks
from seekbench.traces._validate import validate_trace


def _parse(fragment) -> None:
    for _ in _canonical_records(fragment):
        pass


def _validate(fragment) -> None:
    for line, obj in _canonical_records(fragment):
        validate_trace(obj, file=fragment.file, line=line)


def _gather(fragment) -> None:
    gathered = DictColumns(use_inline=True)
    for line, obj in _canonical_records(fragment):
        validate_trace(obj, file=fragment.file, line=line)
        gathered.add(obj)
        del obj


def run_once(path: str) -> dict[str, float]:
    """CPU seconds of each stage on ``path`` (one pass per stage, fragment by fragment as a worker reads)."""
    cpu = dict.fromkeys(("parse", "parse+validate", "parse+validate+gather", "read", "trace_statistics"), 0.0)
    n_traces = n_steps = 0
    gc.collect()
    gc.disable()  # as the worker (seekbench.scale) reads
    try:
        for fragment in plan_fragments([path], ["canonical"]):
            for stage, fn in (("parse", _parse), ("parse+validate", _validate), ("parse+validate+gather", _gather)):
                t = time.process_time()
                fn(fragment)
                cpu[stage] += time.process_time() - t
            t = time.process_time()
            log = FragmentLog(fragment)
            tables = list(
                dict_chunks(_canonical_records(fragment), log, fragment, skip_invalid=False, chunk_traces=CHUNK_TRACES)
            )
            cpu["read"] += time.process_time() - t
            t = time.process_time()
            for s, tr in tables:
                trace_statistics(s, tr)
            cpu["trace_statistics"] += time.process_time() - t
            n_traces += sum(len(tr) for _, tr in tables)
            n_steps += sum(len(s) for s, _ in tables)
            del tables
    finally:
        gc.enable()
    return {
        "parse": cpu["parse"],
        "validate": cpu["parse+validate"] - cpu["parse"],
        "gather": cpu["parse+validate+gather"] - cpu["parse+validate"],
        "tables": cpu["read"] - cpu["parse+validate+gather"],
        "read": cpu["read"],
        "trace_statistics": cpu["trace_statistics"],
        "read+trace_statistics": cpu["read"] + cpu["trace_statistics"],
        "n_traces": n_traces,
        "n_steps": n_steps,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl", help="a canonical JSONL corpus")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    runs = [run_once(args.jsonl) for _ in range(args.repeats)]
    load1 = os.getloadavg()[0]
    print(f"{args.jsonl}: {runs[0]['n_traces']:,} traces, {runs[0]['n_steps']:,} steps; {args.repeats} runs")
    print(f"chunks of {CHUNK_TRACES} traces; load average (1 min): {load0:.2f} before, {load1:.2f} after")
    print(f"{'stage':<24}{'min CPU s':>10}{'median CPU s':>14}")
    for s in ("parse", "validate", "gather", "tables", "read", "trace_statistics", "read+trace_statistics"):
        xs = [r[s] for r in runs]
        print(f"{s:<24}{min(xs):>10.3f}{statistics.median(xs):>14.3f}")


if __name__ == "__main__":
    main()
