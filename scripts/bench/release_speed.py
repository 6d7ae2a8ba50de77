"""Reading the 1x corpus in the SeekBench release format and as canonical JSONL, against the parse floor (not a test).

Issue 28: the release format read in at most 2.5 times a plain ``json.loads`` pass over the same
file, and canonical JSONL no slower than before, both on the default install. Each code is run as
its own default install: orjson is hidden from a code whose ``pyproject.toml`` does not list it
among the core dependencies (before issue 28 it came with the ``scale`` extra only), and visible
to one that does; ``--hide-orjson NAME`` hides it from the code NAME too, ``--hide-orjson`` from
every code (the standard reader alone, as on a platform without an orjson wheel). For each corpus, in fresh processes:

- ``floor``: ``json.loads`` of every line of the file (the standard library, nothing kept);
- ``orjson floor``: the same with ``orjson.loads`` (for reference; not with ``--hide-orjson``);
- ``read_traces``: ``seekbench.traces.read_traces(file)`` (parse, import, validate; the traces kept),
  with the code of each ``--repo`` given (e.g. ``main`` as it was, and this branch), side by side.

Rounds repeat every measurement once in a shuffled order, so a change of load hits all alike; the
table gives medians of wall and CPU seconds (this process, all threads) and the ratio of the
medians to the floor's. The 1-minute load average is recorded before every run.

Run (from the repo root, after ``make_corpus.py --scale 1 --release``)::

    python scripts/bench/release_speed.py --corpora /tmp/seekbench-bench --repo before=/path/to/main --repo after=.
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
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = {"release": "corpus_1x_release.jsonl", "canonical": "corpus_1x.jsonl"}
#: The read may take at most this many times the floor's wall time (issue 28, the release format).
TARGET = 2.5

CHILD = """
import json, os, sys, time
path, stage = sys.argv[1], sys.argv[2]
t0, c0 = time.perf_counter(), time.process_time()
if stage in ("floor", "orjson floor"):
    loads = json.loads if stage == "floor" else __import__("orjson").loads
    with open(path, "rb") as fh:
        for line in fh:
            loads(line)
    n = None
else:
    from seekbench.traces import read_traces
    t0, c0 = time.perf_counter(), time.process_time()  # the read itself, not the imports
    n = len(read_traces(path).traces)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "traces": n}))
"""


def core_orjson(repo: Path) -> bool:
    """True when the code at ``repo`` installs orjson by default (a core dependency)."""
    deps = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["dependencies"]
    return any(d.replace(" ", "").lower().startswith("orjson") for d in deps)


def run(path: Path, stage: str, repo: Path | None, hide: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(([str(hide)] if hide else []) + ([str(repo)] if repo is not None else []))
    load = os.getloadavg()[0]
    res = subprocess.run([sys.executable, "-c", CHILD, str(path), stage], env=env, capture_output=True, text=True,
                         cwd=tempfile.gettempdir())
    if res.returncode != 0:
        raise SystemExit(f"{stage} {path} ({repo}) failed: {res.stderr[-2000:]}")
    return {**json.loads(res.stdout.strip().splitlines()[-1]), "load": load}


def _orjson_version() -> str:
    try:
        import orjson
    except ImportError:
        return "not installed"
    return orjson.__version__


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=Path("/tmp/seekbench-bench"),
                    help="folder of corpus_1x.jsonl and corpus_1x_release.jsonl (make_corpus.py --release)")
    ap.add_argument("--repo", action="append", metavar="NAME=PATH", default=None,
                    help="a seekbench checkout to measure, named (repeatable; default: this one, as 'this')")
    ap.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the run order")
    ap.add_argument("--hide-orjson", nargs="?", const="*", action="append", default=[], metavar="NAME",
                    help="hide orjson from the code NAME (repeatable; without NAME from every code): the standard "
                         "reader alone, as on a platform without an orjson wheel")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "release_speed.md")
    args = ap.parse_args(argv)
    repos = dict(r.split("=", 1) for r in (args.repo or [f"this={HERE.parents[1]}"]))
    repos = {name: Path(path).resolve() for name, path in repos.items()}
    hidden = set(repos) if "*" in args.hide_orjson else set(args.hide_orjson)
    if hidden - set(repos):
        ap.error(f"--hide-orjson names no --repo: {', '.join(sorted(hidden - set(repos)))}")
    orjson = {name: core_orjson(path) and name not in hidden for name, path in repos.items()}
    floors = ["floor"] if "*" in args.hide_orjson else ["floor", "orjson floor"]
    jobs = [(corpus, floor, None) for corpus in CORPORA for floor in floors] + [
        (corpus, "read_traces", name) for corpus in CORPORA for name in repos]
    rng = random.Random(args.seed)
    runs: list[dict] = []
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    with tempfile.TemporaryDirectory() as tmp:
        hide = Path(tmp)
        (hide / "orjson.py").write_text('raise ImportError("hidden: the default install has no orjson")\n')
        for r in range(args.repeats):
            order = jobs[:]
            rng.shuffle(order)
            for corpus, stage, name in order:
                visible = orjson[name] if name is not None else stage == "orjson floor"
                info = run(args.corpora / CORPORA[corpus], stage, None if name is None else repos[name],
                           None if visible else hide)
                runs.append({"round": r, "corpus": corpus, "stage": stage, "code": name, **info})
                print(f"round {r} {corpus:<10} {stage:<12} {name or '':<8} wall {info['wall']:6.2f} s  "
                      f"CPU {info['cpu']:6.2f} s  load {info['load']:.2f}", file=sys.stderr, flush=True)

    def med(corpus: str, stage: str, name: str | None, key: str) -> float:
        return statistics.median(x[key] for x in runs if (x["corpus"], x["stage"], x["code"]) == (corpus, stage, name))

    lines = ["| corpus | what | code | orjson | wall s | x floor (wall) | CPU s | x floor (CPU) | runs |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for corpus in CORPORA:
        fw, fc = med(corpus, "floor", None, "wall"), med(corpus, "floor", None, "cpu")
        lines.append(f"| {corpus} | json.loads floor | | no | {fw:.2f} | 1.00 | {fc:.2f} | 1.00 | {args.repeats} |")
        if "orjson floor" in floors:
            w, c = med(corpus, "orjson floor", None, "wall"), med(corpus, "orjson floor", None, "cpu")
            lines.append(f"| {corpus} | orjson.loads floor | | yes | {w:.2f} | {w / fw:.2f} | {c:.2f} | {c / fc:.2f} | "
                         f"{args.repeats} |")
        for name in repos:
            w, c = med(corpus, "read_traces", name, "wall"), med(corpus, "read_traces", name, "cpu")
            lines.append(f"| {corpus} | read_traces | {name} | {'yes' if orjson[name] else 'no'} | {w:.2f} | "
                         f"{w / fw:.2f} | {c:.2f} | {c / fc:.2f} | {args.repeats} |")
    loads = [x["load"] for x in runs]
    size = {c: (args.corpora / f).stat().st_size / 2**20 for c, f in CORPORA.items()}
    text = (f"# release_speed.py: {args.repeats} interleaved rounds, {started}\n\n"
            f"`python scripts/bench/release_speed.py --corpora {args.corpora} "
            + " ".join(f"--repo {n}={p}" for n, p in repos.items())
            + f" --repeats {args.repeats} --seed {args.seed}"
            + "".join(" --hide-orjson" + ("" if n == "*" else f" {n}") for n in args.hide_orjson) + "`"
            f" ({sys.executable}; orjson {_orjson_version()})\n\n"
            + "Each code as its default install (orjson hidden unless a core dependency, or hidden by --hide-orjson: "
            "column orjson). "
            + f"28,493 traces, 275,486 steps; release file {size['release']:.0f} MiB, "
            f"canonical {size['canonical']:.0f} MiB. Target: release read_traces at most {TARGET}x its floor.\n\n"
            + "\n".join(lines) + "\n\n"
            f"Load average (1 min) before each run: min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
            f"max {max(loads):.2f}; {os.cpu_count()} CPUs.\n")
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
