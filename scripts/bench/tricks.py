"""What each process trick of ``seekbench`` buys: the command with the trick on and off, interleaved (not a test).

Issue 28: a speed trick stays only if it buys at least 10% of the wall time. Each trick is
measured on ``seekbench metrics FILE --json`` (B = 2000, the defaults: all cores) over the 1x
corpora of ``make_corpus.py`` (canonical JSONL and seekbench Parquet), on the default install as it
was when the tricks were measured (orjson hidden: then it came with the ``scale`` extra only; it
is a core dependency since, see ``release_speed.py``). One round runs, in a shuffled order,
the command with every trick on and then once with each trick off (the others on); the
rounds repeat ``--repeats`` times, so a load change hits both settings alike. A trick's gain
is ``(median off - median on) / median off``: the share of the wall time it saves (the CPU
seconds of the command and all its processes are given beside: steadier on a busy machine,
but blind to work moved onto an idle core). The 1-minute load average is recorded before
every run.

Tricks (see ``tricks_site/sitecustomize.py`` for how each is set or unset from outside,
on the code before issue 28 and after):

- ``early_fork_server``: the workers' fork server started before the command imports and
  builds its parser, so it imports pandas and the metrics on another core meanwhile;
- ``forkserver_preload``: the fork server imports ``seekbench.scale._work`` and
  ``seekbench.metrics`` once, and its workers are forked with them (else each imports them);
- ``huge_pages_off``: ``prctl(PR_SET_THP_DISABLE)`` for the command and its workers;
- ``openblas_timeout``: ``OPENBLAS_THREAD_TIMEOUT=4`` (OpenBLAS's default: 28, 2**28 cycles);
- ``arrow_system_pool``: ``ARROW_DEFAULT_MEMORY_POOL=system`` (pyarrow's default: mimalloc);
- ``paused_gc``: the cyclic garbage collector paused while traces are read (``seekbench._io.paused_gc``).

Run (from the repo root; one command, prints the table and writes ``results/tricks.md``)::

    PYTHONPATH=. python scripts/bench/make_corpus.py --scale 1 --parquet --out /tmp/seekbench-bench
    python scripts/bench/tricks.py --corpora /tmp/seekbench-bench --repeats 5
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SITE = HERE / "tricks_site"
TRICKS = ("early_fork_server", "forkserver_preload", "huge_pages_off", "openblas_timeout", "arrow_system_pool",
          "paused_gc")
#: Environment tricks: (variable, value with the trick, the library's own default).
ENV = {"openblas_timeout": ("OPENBLAS_THREAD_TIMEOUT", "4", "28"),
       "arrow_system_pool": ("ARROW_DEFAULT_MEMORY_POOL", "system", "mimalloc")}
#: A trick that saves less than this share of the wall time goes (issue 28).
KEEP = 0.10


def _env(tricks: dict[str, bool], hide: Path, repo: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", *(v[0] for v in ENV.values()))}
    # First the hidden orjson (the default install has none), then the trick switches, then the code.
    env["PYTHONPATH"] = os.pathsep.join([str(hide), str(SITE), str(repo)])
    env["SEEKBENCH_BENCH_TRICKS"] = json.dumps(tricks)
    env["SEEKBENCH_BENCH_DRIVER"] = "1"
    for trick, (var, on, off) in ENV.items():
        env[var] = on if tricks[trick] else off
    return env


def run_once(path: Path, tricks: dict[str, bool], *, hide: Path, repo: Path, n_boot: int) -> dict:
    """Wall and CPU seconds of one ``seekbench metrics PATH --json`` with these tricks, the load average before."""
    load = os.getloadavg()[0]
    cmd = [sys.executable, "-m", "seekbench", "metrics", str(path), "--json", "--n-boot", str(n_boot)]
    # The wrapper runs in this environment; only the command (and what it starts) gets the tricks'.
    res = subprocess.run([sys.executable, __file__, "--measure", json.dumps(_env(tricks, hide, repo)), *cmd],
                         cwd=repo, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr[-2000:]}")
    out, _, info = res.stdout.rpartition("\n{")
    return {**json.loads("{" + info), "load": load, "out": out}


def measure_command(env: dict[str, str], cmd: list[str]) -> int:
    """Run ``cmd`` in ``env``; print its output, then its wall seconds and the CPU seconds of it and every process it
    started (the fork server and its workers too: this process adopts them as a subreaper, so they are
    reaped here and counted)."""
    import ctypes
    import resource

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    t0 = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    while True:  # the orphans (the fork server, its workers) end once the command has
        try:
            os.wait()
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        return res.returncode
    sys.stdout.write(res.stdout.rstrip("\n") + "\n")
    print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime}))
    return 0


def measure(corpora: list[Path], *, repeats: int, seed: int, repo: Path, n_boot: int) -> list[dict]:
    """Interleaved rounds: every configuration once per round, in a shuffled order."""
    rng = random.Random(seed)
    configs = [("all on", None)] + [(f"{t} off", t) for t in TRICKS]
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        hide = Path(tmp)
        (hide / "orjson.py").write_text('raise ImportError("hidden: the default install has no orjson")\n')
        for r in range(repeats):
            for path in corpora:
                order = configs[:]
                rng.shuffle(order)
                outputs = set()
                for label, off in order:
                    tricks = {t: t != off for t in TRICKS}
                    info = run_once(path, tricks, hide=hide, repo=repo, n_boot=n_boot)
                    outputs.add(info.pop("out"))
                    runs.append({"round": r, "corpus": path.name, "config": label, **info})
                    print(f"round {r} {path.name:<22} {label:<24} {info['wall']:6.2f} s  CPU {info['cpu']:6.2f} s  "
                          f"load {info['load']:.2f}",
                          file=sys.stderr, flush=True)
                if len(outputs) != 1:  # a trick may change where time goes, never a number
                    raise SystemExit(f"{path.name}: the output differs between settings in round {r}")
    return runs


def table(runs: list[dict]) -> str:
    lines = ["| corpus | trick | wall s on | wall s off | saves (wall) | CPU s on | CPU s off | saves (CPU) | runs "
             "| by wall |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for corpus in dict.fromkeys(r["corpus"] for r in runs):
        on = [r for r in runs if r["corpus"] == corpus and r["config"] == "all on"]
        for t in TRICKS:
            off = [r for r in runs if r["corpus"] == corpus and r["config"] == f"{t} off"]
            w_on, w_off = (statistics.median(r["wall"] for r in rs) for rs in (on, off))
            c_on, c_off = (statistics.median(r["cpu"] for r in rs) for rs in (on, off))
            gain = (w_off - w_on) / w_off
            lines.append(f"| {corpus} | {t} | {w_on:.2f} | {w_off:.2f} | {gain:+.1%} | {c_on:.2f} | {c_off:.2f} | "
                         f"{(c_off - c_on) / c_off:+.1%} | {len(off)} | {'keep' if gain >= KEEP else 'remove'} |")
    loads = [r["load"] for r in runs]
    lines.append("")
    lines.append(f"Load average (1 min) before each run: min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
                 f"max {max(loads):.2f}; {os.cpu_count()} CPUs.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--measure"]:
        return measure_command(json.loads(argv[1]), argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=Path("/tmp/seekbench-bench"),
                    help="folder of corpus_1x.jsonl and corpus_1x.parquet (make_corpus.py)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0, help="seed of the run order")
    ap.add_argument("--repo", type=Path, default=REPO, help="the seekbench checkout to measure (default: this one)")
    ap.add_argument("--only", choices=["jsonl", "parquet"], help="one corpus only")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "tricks.md")
    args = ap.parse_args(argv)
    names = [f"corpus_1x.{ext}" for ext in ("jsonl", "parquet") if args.only in (None, ext)]
    corpora = [args.corpora / n for n in names]
    missing = [str(p) for p in corpora if not p.exists()]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: run make_corpus.py --scale 1 --parquet first")
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    runs = measure(corpora, repeats=args.repeats, seed=args.seed, repo=args.repo.resolve(), n_boot=args.n_boot)
    text = (f"# tricks.py: {args.repeats} interleaved rounds, {started}, code at {args.repo.resolve()}\n\n"
            f"`python scripts/bench/tricks.py --corpora {args.corpora} --repeats {args.repeats}`"
            f" (`seekbench metrics FILE --json --n-boot {args.n_boot}`, default install: orjson hidden)\n\n"
            + table(runs) + "\n")
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
