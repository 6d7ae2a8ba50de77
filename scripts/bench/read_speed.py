"""CPU seconds per stage of the read path a metrics worker runs on canonical JSONL (prints figures; not a test).

The stages, in one process, as a local-engine worker runs them, fragment by fragment (32 MiB of
JSONL each, as ``plan_fragments`` cuts them; a fragment's records are dropped before the next):

- ``parse``: ``_canonical_records`` (read the byte range, split lines, orjson per line, ``source`` filled);
- ``validate``: ``validate_trace`` on each record, alone;
- ``validate+tabulate``: the worker's loop (``dict_chunks``): validate each record, gather its
  columns, make the step and trace tables per chunk of 2048 traces;
- ``tabulate``: the difference of the two (the tables' share of the loop), of which
- ``free``: dropping the fragment's trace dicts (the worker drops each chunk's: a cost of parsing);
- ``em_f1``: the answer scoring alone (``em_f1`` per scored trace, timed again on its own);
- ``trace_statistics``: the per-trace reduction of each chunk's tables (default options).

Each stage is timed by ``time.process_time`` (this process's CPU, all threads) with the garbage
collector paused as the worker pauses it; ``--repeats`` runs each and reports the minimum and
the median. The 1-minute load average is printed before and after: other sessions share the
machine, so read figures beside it.

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
from seekbench.traces._answers import em_f1
from seekbench.traces._chunks import CHUNK_TRACES, _canonical_records
from seekbench.traces._fragment_log import FragmentLog, dict_chunks
from seekbench.traces._validate import validate_trace


class _Clock:
    """CPU seconds per stage: ``lap(stage)`` adds the time since the last lap to ``stage``."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.t = time.process_time()

    def lap(self, stage: str) -> None:
        t = time.process_time()
        self.cpu[stage] = self.cpu.get(stage, 0.0) + t - self.t
        self.t = t


def _scores(answers: list[tuple]) -> list[tuple[float, float]]:
    return [em_f1(final, golds) for final, golds in answers if final is not None and golds]


def _validate(records: list, file: str) -> None:
    for line, obj in records:
        validate_trace(obj, file=file, line=line)


def run_once(path: str) -> dict[str, float]:
    """CPU seconds of each stage on ``path`` (one pass, fragment by fragment as a worker reads them)."""
    n_traces = n_steps = 0
    gc.collect()
    gc.disable()  # as the worker (seekbench.scale) reads
    try:
        clock = _Clock()
        for fragment in plan_fragments([path], ["canonical"]):
            clock.lap("other")
            records = list(_canonical_records(fragment))
            clock.lap("parse")
            _validate(records, path)
            clock.lap("validate")
            answers = [(t.get("final_answer"), t.get("gold_answers")) for _, t in records]
            clock.lap("other")
            # The worker's loop: validate each record and gather its columns, tables per chunk.
            log = FragmentLog(fragment)
            tables = list(dict_chunks(iter(records), log, fragment, skip_invalid=False, chunk_traces=CHUNK_TRACES))
            clock.lap("validate+tabulate")
            n_traces += len(records)
            del records  # the worker drops each chunk's dicts: freeing them costs too
            clock.lap("free")
            _scores(answers)
            clock.lap("em_f1")
            for s, t in tables:
                trace_statistics(s, t)
            clock.lap("trace_statistics")
            n_steps += sum(len(s) for s, _ in tables)
            del tables
    finally:
        gc.enable()
    cpu = clock.cpu
    cpu["tabulate"] = cpu["validate+tabulate"] - cpu["validate"]
    return {**cpu, "n_traces": n_traces, "n_steps": n_steps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl", help="a canonical JSONL corpus")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    runs = [run_once(args.jsonl) for _ in range(args.repeats)]
    load1 = os.getloadavg()[0]
    print(f"{args.jsonl}: {runs[0]['n_traces']:,} traces, {runs[0]['n_steps']:,} steps; {args.repeats} runs")
    print(f"load average (1 min): {load0:.2f} before, {load1:.2f} after")
    print(f"{'stage':<22}{'min CPU s':>10}{'median CPU s':>14}")
    stages = ("parse", "validate", "validate+tabulate", "tabulate", "free", "em_f1", "trace_statistics")
    for s in stages:
        xs = [r[s] for r in runs]
        print(f"{s:<22}{min(xs):>10.3f}{statistics.median(xs):>14.3f}")
    # em_f1 runs inside tabulate: the sum of the parts the task targets counts it once.
    target = [r["parse"] + r["free"] + r["tabulate"] + r["trace_statistics"] for r in runs]
    name = "parse+free+tabulate+stats"
    print(f"{name:<26}{min(target):>6.3f}{statistics.median(target):>14.3f}  (em_f1 within tabulate)")


if __name__ == "__main__":
    main()
