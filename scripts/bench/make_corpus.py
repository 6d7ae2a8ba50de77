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
the end), so memory stays flat at any scale. ``--parquet`` writes the same traces as
seekbench Parquet (the rows ``seekbench convert --to parquet`` writes), streaming too: each
source trace's rows are laid out once, and every batch of 4,096 drawn traces is those rows
taken again with the fresh ``trace_id``, agent and ``source.record_id``, one row group per
batch; memory holds one batch. ``--no-jsonl`` skips the JSONL (26 GB at ``--scale 100``).
``--release`` also writes the same draws in the SeekBench release format (the source
records of ``--data`` as they are, with the fresh ``id`` and ``model`` and the source's id
in ``resampled_from``): ``corpus_<scale>_release.jsonl``, what ``scripts/bench/read_speed.py``
reads beside the canonical corpus.

Run (from the repo root)::

    PYTHONPATH=. python scripts/bench/make_corpus.py --scale 1 --out /tmp/seekbench-bench [--parquet] [--release]
    PYTHONPATH=. python scripts/bench/make_corpus.py --scale 100 --parquet --no-jsonl

Corpora go outside git (default ``/tmp/seekbench-bench``); never commit them.
"""

from __future__ import annotations

import argparse
import copy
import json
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
    for i, (k, r) in enumerate(zip(pick.tolist(), run.tolist(), strict=True)):
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


def write_release_corpus(path: Path, data: Path, templates: list[dict], n: int, *, seed: int, runs: int,
                         tag: str) -> tuple[int, int]:
    """Stream the draws of :func:`resampled` (same seed: the same traces) as SeekBench release records:
    the record of ``data`` each template was read from (``source.line``), with the drawn trace's ``id``
    and ``model``, and ``resampled_from`` (an extra key, which the importer keeps in ``metadata``)."""
    with open(data, encoding="utf-8") as fh:
        records = {line: text for line, text in enumerate(fh, start=1)}
    line_of = {t["trace_id"]: t["source"]["line"] for t in templates}
    n_steps = 0
    with atomic_writer(path) as fh:
        for tr in resampled(templates, n, seed=seed, runs=runs, tag=tag):
            src = tr["metadata"]["resampled_from"]
            rec = {**json.loads(records[line_of[src]]), "id": tr["trace_id"], "model": tr["agent"],
                   "resampled_from": src}
            fh.write(json.dumps(rec, ensure_ascii=False, allow_nan=False))
            fh.write("\n")
            n_steps += len(rec["trace"])
    return n, n_steps


def write_parquet_corpus(path: Path, templates: list[dict], n: int, *, seed: int, runs: int,
                         tag: str) -> tuple[int, int]:
    """Stream the traces of :func:`resampled` (same seed: the same traces) to seekbench Parquet at ``path``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from seekbench.traces.importers._parquet import BATCH, rows_table
    from seekbench.traces.importers._parquet_layout import SCHEMA

    # Each template's rows, laid out once with a placeholder id; only three columns vary per drawn trace.
    laid = [rows_table([next(resampled([t], 1, seed=0, runs=1, tag="x"))]) for t in templates]
    n_rows = np.array([t.num_rows for t in laid])
    first_row = np.cumsum(n_rows) - n_rows
    rows = pa.concat_tables(laid).combine_chunks()  # one table: a batch is one vectorised take
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(templates), size=n)
    run = rng.integers(0, runs, size=n)
    width = len(str(n - 1))
    n_steps = 0
    names = SCHEMA.names
    with atomic_writer(path, "wb") as fh, pq.ParquetWriter(fh, SCHEMA, compression="zstd") as writer:
        for lo in range(0, n, BATCH):
            k, r = pick[lo:lo + BATCH], run[lo:lo + BATCH]
            ids = [f"bench-{tag}-{i:0{width}d}" for i in range(lo, lo + len(k))]
            agents = [f"{templates[a]['agent']}@run{b}" for a, b in zip(k.tolist(), r.tolist(), strict=True)]
            counts = n_rows[k]
            owner_np = np.repeat(np.arange(len(k)), counts)
            offset = np.arange(len(owner_np)) - np.repeat(np.cumsum(counts) - counts, counts)
            table = rows.take(pa.array(first_row[k][owner_np] + offset))
            owner = pa.array(owner_np)
            for name, values in (("trace_id", ids), ("agent", agents), ("source_record_id", ids)):
                col = pa.array(values, SCHEMA.field(name).type).take(owner)
                table = table.set_column(names.index(name), SCHEMA.field(name), col)
            writer.write_table(table)
            n_steps += int(sum(len(templates[a]["steps"]) for a in k.tolist()))
    return n, n_steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, action="append", default=None,
                    help="corpus size as a multiple of the paper's 28,493 traces (repeatable; default 1)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="source traces (default: the shared 190)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=4, help="agents per source agent (default 4)")
    ap.add_argument("--parquet", action="store_true", help="also write each corpus as Parquet (streaming)")
    ap.add_argument("--no-jsonl", action="store_true", help="write no JSONL (with --parquet)")
    ap.add_argument("--release", action="store_true",
                    help="also write each corpus in the SeekBench release format (--data must be in it)")
    args = ap.parse_args(argv)
    templates = [copy.deepcopy(t) for t in read_traces(args.data).traces]
    for scale in args.scale or [1.0]:
        name = scale_name(scale)
        tag = name.replace(".", "p")
        args.out.mkdir(parents=True, exist_ok=True)
        if not args.no_jsonl:
            jsonl = args.out / f"corpus_{name}.jsonl"
            t0 = time.perf_counter()
            n, n_steps = write_corpus(jsonl, templates, n_traces(scale), seed=args.seed, runs=args.runs, tag=tag)
            size = jsonl.stat().st_size / 2**20
            print(f"{jsonl}: {n} traces, {n_steps} steps, {size:.0f} MiB in {time.perf_counter() - t0:.1f} s")
        if args.release:
            rel = args.out / f"corpus_{name}_release.jsonl"
            t0 = time.perf_counter()
            n, n_steps = write_release_corpus(rel, args.data, templates, n_traces(scale), seed=args.seed,
                                              runs=args.runs, tag=tag)
            size = rel.stat().st_size / 2**20
            print(f"{rel}: {n} traces, {n_steps} steps, {size:.0f} MiB in {time.perf_counter() - t0:.1f} s")
        if args.parquet:
            pq = args.out / f"corpus_{name}.parquet"
            t0 = time.perf_counter()
            n, n_steps = write_parquet_corpus(pq, templates, n_traces(scale), seed=args.seed, runs=args.runs,
                                              tag=tag)
            size = pq.stat().st_size / 2**20
            print(f"{pq}: {n} traces, {n_steps} steps, {size:.0f} MiB in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
