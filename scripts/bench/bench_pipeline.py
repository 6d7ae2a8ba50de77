"""Benchmark the trace-to-metrics pipeline per stage on paper-scale corpora (prints figures; not a test).

For each corpus (``corpus_<scale>.jsonl`` / ``.parquet`` from ``make_corpus.py``) and
each stage, a fresh Python process runs the stage ``--repeats`` times; the table gives
the median wall time of the stage itself (imports and the stages before it excluded),
the median CPU time of the whole process (all threads; less sensitive than wall time
to other load on the machine) and its peak RSS (``RUSAGE_CHILDREN`` of a wrapper
process whose only child it is; the memory of the stages before it counts). Stages:

- ``load``: read every record into a canonical trace dict, no validation, streaming;
- ``validate``: the same plus ``validate_trace`` on each (the time of the checks only);
- ``tables``: the streaming pass ``seekbench metrics`` makes: read, validate and build the
  step and trace tables, keeping no trace dicts (Parquet: columns straight to tables);
- ``metrics``: ``summarize`` with B bootstrap resamples (default 2000) on those tables;
- ``report``: ``write_report`` (HTML, Markdown, figures, CSV) after loading as
  ``seekbench report`` does (trace dicts kept for the per-trace view);
- ``end_to_end``: the command ``seekbench metrics FILE --json`` (wall time from outside,
  interpreter start and imports included): the figure the targets are about; run once per
  engine of ``--engines`` (``--engine local --jobs N`` or ``--engine ray``);
- ``scale``: the path ``seekbench metrics`` takes (issue 17), in one process per engine:
  ``reduce_traces`` with ``trace_statistics`` (fragments read and reduced by ``--jobs``
  worker processes or Ray tasks), then ``summarize_statistics`` with B resamples. It gives
  three rows: ``read`` and ``reduce`` (the CPU seconds the workers spent reading fragments
  to tables and reducing them, summed, beside the wall time of the two together, which
  interleave) and ``aggregate`` (the driver's bootstrap and per-group aggregation); peak RSS
  is the driver's, and the largest worker's in ``worker peak RSS``.

Each row records the load average (1 min) when its runs started and ended: figures
taken under load (other sessions share the machine) say so beside themselves.

Other sessions share the machine, so timings are noisy: the script records the load
average before and after; read medians, not single runs. Writes
``scripts/bench/results/pipeline.json`` and ``pipeline.md`` and prints the table. When
``scripts/bench/annotator_throughput.py`` exists, it is run too and its output kept in
``results/annotator_throughput.txt``.

Run (from the repo root, after ``make_corpus.py --scale 0.1 --scale 1 --scale 10 --parquet``)::

    PYTHONPATH=. python scripts/bench/bench_pipeline.py --repeats 3
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_CORPORA = Path("/tmp/seekbench-bench")
STAGES = ("load", "validate", "tables", "metrics", "report", "end_to_end", "scale")


# -- worker: one stage in this (fresh) process -----------------------------------------------------------------

def _scale_worker(path: str, n_boot: int, engine: str, jobs: int | None) -> dict:
    """Read + reduce (``reduce_traces`` with ``trace_statistics``), then aggregate, timed apart."""
    import functools
    import resource

    from seekbench.metrics import MetricOptions, summarize_statistics, trace_statistics
    from seekbench.scale import reduce_traces

    opts = MetricOptions()
    t0, c0 = time.perf_counter(), time.process_time()
    red = reduce_traces(path, functools.partial(trace_statistics, options=opts), engine=engine, jobs=jobs,
                        strings="compact")  # as seekbench metrics reduces
    t1, c1 = time.perf_counter(), time.process_time()
    rss_reduce = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    summary = summarize_statistics(red.rows, options=opts, n_boot=n_boot)
    t2, c2 = time.perf_counter(), time.process_time()
    return {"stage": "scale", "format": next(iter(red.read.formats.values())), "n_traces": len(red.rows),
            "n_steps": int(red.rows["n_steps"].sum()), "n_groups": len(summary.groups),
            "n_fragments": red.n_fragments, "reduce_wall_s": t1 - t0, "driver_reduce_cpu_s": c1 - c0,
            "aggregate_wall_s": t2 - t1, "aggregate_cpu_s": c2 - c1, "driver_rss_after_reduce_mib": rss_reduce,
            **red.cost}


def _worker(stage: str, path: str, n_boot: int, out_dir: str | None) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    from seekbench.traces import detect_format
    from seekbench.traces._io import paused_gc
    from seekbench.traces._read import read_tables
    from seekbench.traces._validate import validate_trace
    from seekbench.traces.importers import importer_for

    fmt = detect_format(path)
    result: dict = {"stage": stage, "format": fmt}
    if stage in ("load", "validate"):
        t0 = time.perf_counter()
        checking = 0.0
        n = 0
        with paused_gc():
            for rec in importer_for(fmt).iter_records(path):
                n += 1
                if stage == "validate":
                    c0 = time.perf_counter()
                    validate_trace(rec.trace, file=path, line=rec.line)
                    checking += time.perf_counter() - c0
        result.update(seconds=checking if stage == "validate" else time.perf_counter() - t0, n_traces=n)
    elif stage in ("tables", "metrics"):
        from seekbench.metrics import summarize

        t0 = time.perf_counter()
        _, steps, traces = read_tables(path)
        t1 = time.perf_counter()
        result.update(n_traces=len(traces), n_steps=len(steps))
        if stage == "tables":
            result["seconds"] = t1 - t0
        else:
            summary = summarize(steps, traces, n_boot=n_boot)
            result.update(seconds=time.perf_counter() - t1, n_groups=len(summary.groups))
    elif stage == "report":
        from seekbench.analysis import analyze
        from seekbench.report import write_report
        from seekbench.traces import build_tables, read_traces

        read = read_traces(path)
        steps, traces = build_tables(read.traces)
        t0 = time.perf_counter()
        write_report(analyze(steps, traces, trace_dicts=read.traces, n_boot=n_boot), out_dir)
        result.update(seconds=time.perf_counter() - t0, n_traces=len(traces))
    else:
        raise SystemExit(f"unknown stage {stage!r}")
    return result


# -- driver ------------------------------------------------------------------------------------------------------

def _wrapper(cmd: list[str]) -> int:
    """Run ``cmd`` as this process's only child; print its wall time, peak RSS and last stdout line.

    ``RUSAGE_CHILDREN`` of a process with one child is that child's own peak RSS.
    """
    import resource

    t0 = time.perf_counter()
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - t0
    lines = res.stdout.strip().splitlines()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall": wall, "rss_mib": usage.ru_maxrss / 1024.0, "cpu": usage.ru_utime + usage.ru_stime,
                      "code": res.returncode, "last": lines[-1] if lines else ""}))
    return 0


def _measure(cmd: list[str], timeout: float) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak RSS MiB, exit code, last stdout line) of ``cmd`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        res = subprocess.run([sys.executable, __file__, "--measure", *cmd], capture_output=True, text=True,
                             env=env, cwd=REPO, timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("nan"), float("nan"), float("nan"), -9, ""
    info = json.loads(res.stdout.strip().splitlines()[-1])
    return info["wall"], info["cpu"], info["rss_mib"], info["code"], info["last"]


def _engine_flags(engine: str, jobs: int | None) -> list[str]:
    return ["--engine", engine] + (["--jobs", str(jobs)] if jobs is not None and engine == "local" else [])


def _stage_runs(stage: str, path: Path, args: argparse.Namespace, tmp: Path, repeats: int,
                engine: str = "local") -> dict:
    runs = []
    load = {"load_before": os.getloadavg()[0]}
    for _ in range(repeats):
        if stage == "end_to_end":
            cmd = [sys.executable, "-m", "seekbench", "metrics", str(path), "--json", "--n-boot", str(args.n_boot),
                   *_engine_flags(engine, args.jobs)]
        elif stage == "scale":
            cmd = [sys.executable, __file__, "--worker", stage, "--input", str(path), "--n-boot", str(args.n_boot),
                   *_engine_flags(engine, args.jobs)]
        else:
            cmd = [sys.executable, __file__, "--worker", stage, "--input", str(path), "--n-boot", str(args.n_boot),
                   "--out", str(tmp / "report")]
        wall, cpu, rss, code, out = _measure(cmd, args.timeout)
        if code != 0:
            return {"stage": stage, "error": f"exit code {code}", "runs": runs, **load}
        info = {"wall": wall, "process_cpu": cpu, "rss_mib": rss}
        if stage != "end_to_end":
            info.update(json.loads(out))
        runs.append(info)
    load["load_after"] = os.getloadavg()[0]
    if stage == "scale":
        for r in runs:
            r["seconds"] = r["reduce_wall_s"] + r["aggregate_wall_s"]
    secs = [r["seconds"] if "seconds" in r else r["wall"] for r in runs]
    return {"stage": stage, "engine": engine, "runs": runs, **load, "median_s": statistics.median(secs),
            "min_s": min(secs), "max_s": max(secs),
            "median_process_cpu_s": statistics.median(r["process_cpu"] for r in runs),
            "peak_rss_mib": max(r["rss_mib"] for r in runs),
            "median_rss_mib": statistics.median(r["rss_mib"] for r in runs)}


def _machine() -> dict:
    import numpy
    import pandas
    import pyarrow

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpus": os.cpu_count(), "memory_gib": round(mem, 1), "python": platform.python_version(),
            "numpy": numpy.__version__, "pandas": pandas.__version__, "pyarrow": pyarrow.__version__,
            "platform": platform.platform()}


def _median_of(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _markdown(results: dict) -> str:
    lines = ["| corpus | format | traces | steps | stage | engine | median s | min-max s | process CPU s | "
             "peak RSS MiB | runs | load avg |",
             "|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---|"]
    for row in results["rows"]:
        engine = row.get("engine", "local")
        load = (f"{row['load_before']:.1f}-{row['load_after']:.1f}" if "load_after" in row
                else f"{row.get('load_before', float('nan')):.1f}")
        if "error" in row:
            lines.append(f"| {row['scale']} | {row['format']} | | | {row['stage']} | {engine} | {row['error']} "
                         f"| | | | | {load} |")
            continue
        size = [f"{row[k]:,}" if row.get(k) is not None else "" for k in ("n_traces", "n_steps")]
        head = f"| {row['scale']} | {row['format']} | {size[0]} | {size[1]} |"
        n = len(row["runs"])
        if row["stage"] == "scale":
            med = functools.partial(_median_of, row["runs"])
            jobs = "" if engine == "ray" else f" ({row['runs'][0].get('n_fragments', '?')} fragments)"
            workers = max(r.get("worker_peak_rss_mib", 0.0) for r in row["runs"])
            lines += [
                f"{head} read{jobs} | {engine} | {med('reduce_wall_s'):.2f} (read+reduce wall) | | "
                f"{med('read_cpu_s'):.1f} (workers) | {workers:.0f} (largest worker) | {n} | {load} |",
                f"{head} reduce | {engine} | | | {med('reduce_cpu_s'):.1f} (workers) | | {n} | {load} |",
                f"{head} aggregate (B={results['n_boot']}) | {engine} | {med('aggregate_wall_s'):.2f} | | "
                f"{med('aggregate_cpu_s'):.1f} | {row['peak_rss_mib']:.0f} (driver, whole run) | {n} | {load} |",
                f"{head} scale total (process) | {engine} | {med('wall'):.2f} | | "
                f"{row.get('median_process_cpu_s', float('nan')):.1f} | {row['peak_rss_mib']:.0f} | {n} | {load} |",
            ]
            continue
        lines.append(f"{head} {row['stage']} | {engine} | {row['median_s']:.2f} | "
                     f"{row['min_s']:.2f}-{row['max_s']:.2f} | {row.get('median_process_cpu_s', float('nan')):.1f} | "
                     f"{row['peak_rss_mib']:.0f} | {n} | {load} |")
    la = results["load_average"]
    lines.append(f"\nB = {results['n_boot']} bootstrap resamples; {results['machine']['cpus']} CPUs, "
                 f"{results['machine']['memory_gib']} GiB; load average {la['before'][0]:.1f} before, "
                 f"{la['after'][0]:.1f} after (other sessions share the machine). Process CPU and peak RSS are "
                 "the measured process's and its waited-for children's (RUSAGE_CHILDREN: worker processes of a "
                 "fork server or Ray are not all counted; the scale rows give the workers' own).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help=f"corpus directory ({DEFAULT_CORPORA})")
    ap.add_argument("--scales", default="0.1x,1x,10x", help="corpora to run (default 0.1x,1x,10x)")
    ap.add_argument("--formats", default="jsonl,parquet")
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--repeats", type=int, default=3, help="runs per stage (median reported)")
    ap.add_argument("--large-repeats", type=int, default=2,
                    help="runs per stage for corpora of scale 10 and more (default 2)")
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run before it is killed")
    ap.add_argument("--skip-report-above", type=float, default=1.0,
                    help="skip the report stage for corpora larger than this scale (default 1: no 10x report)")
    ap.add_argument("--skip-annotator", action="store_true", help="do not run annotator_throughput.py")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--engines", default="local", help="engines of the end_to_end and scale stages (local,ray)")
    ap.add_argument("--jobs", type=int, default=None, help="--jobs of the local engine (default: all cores)")
    ap.add_argument("--formats-by-scale", default="",
                    help="formats per corpus, e.g. '1x=jsonl;10x=parquet;100x=parquet' (default: --formats for all)")
    ap.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--measure"]:
        return _wrapper(argv[1:])
    args = ap.parse_args(argv)
    if args.worker == "scale":
        print(json.dumps(_scale_worker(args.input, args.n_boot, args.engine, args.jobs)))
        return 0
    if args.worker:
        print(json.dumps(_worker(args.worker, args.input, args.n_boot, args.out and str(args.out))))
        return 0
    import tempfile

    results = {"n_boot": args.n_boot, "repeats": args.repeats, "large_repeats": args.large_repeats,
               "machine": _machine(),
               "load_average": {"before": os.getloadavg()}, "rows": [],
               "command": "PYTHONPATH=. python scripts/bench/bench_pipeline.py " + " ".join(argv)}
    with tempfile.TemporaryDirectory(prefix="seekbench-bench-") as tmp:
        by_scale = dict(kv.split("=", 1) for kv in args.formats_by_scale.split(";") if kv)
        for scale in args.scales.split(","):
            for fmt in by_scale.get(scale, args.formats).split(","):
                path = args.corpora / f"corpus_{scale}.{fmt}"
                if not path.exists():
                    print(f"skip {path}: not found (make it with scripts/bench/make_corpus.py)", file=sys.stderr)
                    continue
                size = {"n_traces": None, "n_steps": None}
                for stage in args.stages.split(","):
                    if stage == "report" and float(scale.rstrip("x")) > args.skip_report_above:
                        continue
                    repeats = args.large_repeats if float(scale.rstrip("x")) >= 10 else args.repeats
                    engines = args.engines.split(",") if stage in ("end_to_end", "scale") else ["local"]
                    for engine in engines:
                        row = {"scale": scale, "format": fmt,
                               **_stage_runs(stage, path, args, Path(tmp), repeats, engine)}
                        for r in row.get("runs", []):
                            size.update({k: r[k] for k in ("n_traces", "n_steps") if r.get(k) is not None})
                        row.update(size)
                        results["rows"].append(row)
                        print(f"{scale:>5} {fmt:<8} {stage:<10} {engine:<5} " + (row["error"] if "error" in row else
                              f"{row['median_s']:8.2f} s  {row['peak_rss_mib']:8.0f} MiB  load "
                              f"{row['load_before']:.1f}-{row['load_after']:.1f}"), file=sys.stderr)
                for row in results["rows"]:  # the sizes come from the stages that read them
                    if row["scale"] == scale and row["format"] == fmt:
                        row.update({k: v for k, v in size.items() if row.get(k) is None})
    results["load_average"]["after"] = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pipeline.json").write_text(json.dumps(results, indent=1) + "\n")
    table = _markdown(results)
    (args.out / "pipeline.md").write_text(table + "\n")
    print(table)
    annotator = Path(__file__).resolve().parent / "annotator_throughput.py"
    if annotator.exists() and not args.skip_annotator:
        res = subprocess.run([sys.executable, str(annotator)], capture_output=True, text=True, cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=args.timeout)
        (args.out / "annotator_throughput.txt").write_text(res.stdout + (res.stderr if res.returncode else ""))
        print("\n# annotator throughput (scripts/bench/annotator_throughput.py)\n" + res.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
