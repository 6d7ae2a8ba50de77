"""Time ``validate_trace`` per trace on a JSONL corpus (prints figures; not a test).

Two figures, CPU time per trace (``time.process_time``, best and median of ``--repeats``
passes, the load average before and after beside each):

- hot: each line parsed with orjson and validated at once, as the readers do (the record is
  still in the CPU caches); the time of a parse-only pass is subtracted;
- cold: every line parsed first (not timed), then ``validate_trace(obj, file=..., line=...)``
  on each record, as the lead measured it (each record comes from main memory).

``--jsonschema`` also times the reference path (the quick and the compiled checks switched off,
so jsonschema checks every record), on the first ``--reference-limit`` records.
``--fastjsonschema`` also times, cold, the schema check alone as ``fastjsonschema`` compiles it,
as ``seekbench.traces._fastschema`` does, and the hand-written quick check in front of them
(``seekbench.traces._trace_check``, schema and order rules) (issue 28: fastjsonschema would be
used if it were as fast; ``pip install -e '.[bench]'``).

Run (from the repo root)::

    PYTHONPATH=. python scripts/bench/validate_speed.py /tmp/scale-io-bench/corpus_1x.jsonl
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import orjson


def _time(records: list, file: str, repeats: int) -> list[float]:
    from seekbench.traces import validate_trace

    per_trace = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()  # as the readers do (traces._io.paused_gc): no collections during the pass
        c0 = time.process_time()
        for line, obj in records:
            validate_trace(obj, file=file, line=line)
        per_trace.append((time.process_time() - c0) / len(records) * 1e6)
        gc.enable()
    return per_trace


def _time_hot(lines: list, file: str, repeats: int) -> list[float]:
    """µs per trace of validation right after parsing each line (as the readers do, the record still in
    the CPU caches): CPU time of parse + validate minus that of parse alone, interleaved by pass."""
    from seekbench.traces import validate_trace

    def one_pass(check: bool) -> float:
        gc.collect()
        gc.disable()
        c0 = time.process_time()
        for line, raw in lines:
            obj = orjson.loads(raw)
            if check:
                validate_trace(obj, file=file, line=line)
        spent = time.process_time() - c0
        gc.enable()
        return spent

    per_trace = []
    for _ in range(repeats):
        parse = one_pass(False)
        per_trace.append((one_pass(True) - parse) / len(lines) * 1e6)
    return per_trace


def _report(what: str, timer, items: list, args) -> None:
    load0 = os.getloadavg()[0]
    times = timer(items, args.path, args.repeats)
    load1 = os.getloadavg()[0]
    print(f"{what}, {len(items)} traces, {args.repeats} passes: best {min(times):.2f} µs/trace, "
          f"median {statistics.median(times):.2f} (CPU), total best {min(times) * len(items) / 1e6:.3f} s; "
          f"load {load0:.2f} -> {load1:.2f}")


def _compare_fastjsonschema(records: list, args) -> None:
    """Cold µs per trace of the schema check alone: fastjsonschema's compiled function (it raises on an
    invalid record; none is), _fastschema's predicate and _trace_check's quick check."""
    import copy

    import fastjsonschema

    from seekbench._schemas import load_schema
    from seekbench.traces._fastschema import fast_validator
    from seekbench.traces._trace_check import quick_trace_check

    schema = copy.deepcopy(load_schema("trace"))  # fastjsonschema.compile changes the schema it is given
    for name, check in (("fastjsonschema", fastjsonschema.compile(schema)), ("_fastschema", fast_validator("trace")),
                        ("_trace_check quick", quick_trace_check)):
        _report(f"cold, {name} schema check alone", lambda items, file, repeats, check=check: _time_check(
            check, items, repeats), records, args)


def _time_check(check, records: list, repeats: int) -> list[float]:
    per_trace = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        c0 = time.process_time()
        for _line, obj in records:
            check(obj)
        per_trace.append((time.process_time() - c0) / len(records) * 1e6)
        gc.enable()
    return per_trace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a canonical JSONL corpus (e.g. corpus_1x.jsonl from make_corpus.py)")
    ap.add_argument("--repeats", type=int, default=5, help="passes over the corpus (default 5)")
    ap.add_argument("--jsonschema", action="store_true", help="also time jsonschema alone (the reference)")
    ap.add_argument("--fastjsonschema", action="store_true", help="also time fastjsonschema's check (cold)")
    ap.add_argument("--reference-limit", type=int, default=2000, help="records for --jsonschema (default 2000)")
    args = ap.parse_args()

    with open(args.path, "rb") as fh:
        lines = [(i, raw) for i, raw in enumerate(fh, start=1) if raw.strip()]
    _report("hot (validate each record right after parsing it)", _time_hot, lines, args)
    records = [(i, orjson.loads(raw)) for i, raw in lines]
    del lines
    _report("cold (all records parsed first, then validated)", _time, records, args)
    if args.fastjsonschema:
        _compare_fastjsonschema(records, args)
    if args.jsonschema:
        from seekbench.traces import _validate

        _validate.fast_validator = lambda name: None  # type: ignore[assignment]  # jsonschema on every record
        _validate.quick_trace_check = lambda trace: False  # type: ignore[assignment]
        ref = _time(records[: args.reference_limit], args.path, 1)
        print(f"jsonschema alone on {min(len(records), args.reference_limit)} traces: {ref[0]:.1f} µs/trace")


if __name__ == "__main__":
    main()
