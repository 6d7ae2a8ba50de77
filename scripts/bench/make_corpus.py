"""Build paper-scale benchmark corpora by resampling the 190 shared SeekBench traces (not a test).

The SeekBench study labeled 28,493 traces (283,950 steps). ``--scale 1`` draws that many
traces with replacement from the 190 human-labeled traces of the shared data, seeded;
``--scale 0.1`` and ``--scale 10`` draw a tenth and ten times as many. Every drawn trace
gets a fresh ``trace_id`` (``bench-<scale>-<i>``) and a fresh agent: the source agent
with a run suffix ``@run<r>``, r uniform in ``0 .. runs-1`` (default 4 runs, so the 5
shared agents become 20 groups), as when several seeds or judges of each agent are
evaluated. Question ids are kept, so ``cluster="question"`` bootstraps still cluster,
and ``metadata.resampled_from`` names the source trace. Labels stay inline.

The canonical JSONL is written streaming (one trace at a time, atomically renamed at
the end), so memory stays flat at any scale. With ``--parquet`` the JSONL is then
converted with ``seekbench convert FILE --to parquet`` (itself streaming).

Run (from the repo root)::

    PYTHONPATH=. python scripts/bench/make_corpus.py --scale 1 --out /tmp/seekbench-bench [--parquet]

Corpora go outside git (default ``/tmp/seekbench-bench``); never commit them.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from seekbench.traces import atomic_writer, read_traces  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
DEFAULT_OUT = Path("/tmp/seekbench-bench")
#: Traces of the SeekBench study: ``--scale 1``.
PAPER_TRACES = 28_493


def scale_name(scale: float) -> str:
    """``0.1x``, ``1x``, ``10x`` for file names."""
    return f"{scale:g}x"


def n_traces(scale: float) -> int:
    """Traces at ``scale`` times the paper's corpus (at least 1)."""
    return max(1, round(PAPER_TRACES * scale))


def resampled(templates: list[dict], n: int, *, seed: int, runs: int, tag: str):
    """Yield ``n`` traces drawn with replacement from ``templates``, fresh ids and agents.

    Parameters
    ----------
    templates : list of dict
        Canonical traces to draw from (left unchanged).
    n : int
        Traces to yield.
    seed : int
        Seed of ``numpy.random.default_rng``: the source traces and run suffixes.
    runs : int
        Each source agent becomes ``runs`` agents ``<agent>@run<r>``.
    tag : str
        Part of every fresh trace id (``bench-<tag>-<i>``).

    Yields
    ------
    dict
        A canonical trace (a fresh copy: callers may keep or mutate it).
    """
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(templates), size=n)
    run = rng.integers(0, runs, size=n)
    width = len(str(n - 1))
    for i, (k, r) in enumerate(zip(pick.tolist(), run.tolist())):
        src = templates[k]
        tid = f"bench-{tag}-{i:0{width}d}"
        tr = {key: value for key, value in src.items() if key != "steps"}
        tr["trace_id"] = tid
        tr["agent"] = f"{src['agent']}@run{r}"
        tr["source"] = {"format": "canonical", "file": None, "line": None, "record_id": tid, "path": None}
        tr["metadata"] = {**(src.get("metadata") or {}), "resampled_from": src["trace_id"]}
        tr["steps"] = src["steps"]  # shared, not copied: the writer only serialises it
        yield tr


def write_corpus(path: Path, templates: list[dict], n: int, *, seed: int, runs: int, tag: str) -> tuple[int, int]:
    """Stream ``n`` resampled traces to canonical JSONL at ``path``; return (traces, steps)."""
    n_steps = 0
    with atomic_writer(path) as fh:
        for tr in resampled(templates, n, seed=seed, runs=runs, tag=tag):
            fh.write(json.dumps(tr, ensure_ascii=False, allow_nan=False))
            fh.write("\n")
            n_steps += len(tr["steps"])
    return n, n_steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, action="append", default=None,
                    help="corpus size as a multiple of the paper's 28,493 traces (repeatable; default 1)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="source traces (default: the shared 190)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=4, help="agents per source agent (default 4)")
    ap.add_argument("--parquet", action="store_true", help="also convert each corpus to Parquet")
    args = ap.parse_args(argv)
    templates = [copy.deepcopy(t) for t in read_traces(args.data).traces]
    for scale in args.scale or [1.0]:
        name = scale_name(scale)
        jsonl = args.out / f"corpus_{name}.jsonl"
        t0 = time.perf_counter()
        n, n_steps = write_corpus(jsonl, templates, n_traces(scale), seed=args.seed, runs=args.runs,
                                  tag=name.replace(".", "p"))
        size = jsonl.stat().st_size / 2**20
        print(f"{jsonl}: {n} traces, {n_steps} steps, {size:.0f} MiB in {time.perf_counter() - t0:.1f} s")
        if args.parquet:
            pq = args.out / f"corpus_{name}.parquet"
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "seekbench", "convert", str(jsonl), "--to", "parquet",
                            "-o", str(pq)], check=True, cwd=REPO, env={**_env(), "PYTHONPATH": str(REPO)})
            print(f"{pq}: converted in {time.perf_counter() - t0:.1f} s")
    return 0


def _env() -> dict:
    import os

    return dict(os.environ)


if __name__ == "__main__":
    raise SystemExit(main())
