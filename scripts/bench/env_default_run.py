"""Time the embedded-default seeking-environment run, offline (prints figures; not a test).

Stages, each timed:

1. build the default corpus from the documentation installed with Python;
2. run two scripted agents (keyphrase, sentence) x three beliefs (trajectory,
   deduplicated, oracle) on every document, M steps each (TF-IDF by default;
   ``--embedder minilm`` for the local sentence-transformers model);
3. completeness per (agent, belief), curves, query diversity, topic x agent;
4. the report: ``write_report`` on the episodes plus the completeness section;
5. when the conformal half is installed: synthetic belief states with the two
   baseline estimators and split conformal (``seekbench env synth-beliefs`` and
   ``seekbench conformal``, in-process).

Run (from the repo root)::

    PYTHONPATH=. python scripts/bench/env_default_run.py [--steps 10] [--seeds 1] [--embedder tfidf] [--out DIR]

Outputs go to a temporary directory unless ``--out`` is given; never commit them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


class Timer:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []

    @contextlib.contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        yield
        took = time.perf_counter() - start
        self.rows.append((name, took))
        print(f"[{took:7.2f} s] {name}", flush=True)


def _cli(*args) -> tuple[int, str, str]:
    """``seekbench ARGS`` in-process."""
    from seekbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--queries-per-step", type=int, default=2)
    ap.add_argument("--embedder", default="tfidf")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="seekbench-env-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    timer = Timer()
    total = time.perf_counter()

    with timer.stage("import seekbench.env, scikit-learn"):
        import sklearn.feature_extraction.text  # noqa: F401

        from seekbench.env import (BELIEFS, CompletenessCurves, completeness_summary, default_corpus,
                                   make_agent, make_embedder, query_diversity_table, run_episodes,
                                   topic_agent_table, write_corpus)
    with timer.stage("build the default corpus"):
        build = default_corpus()
        docs = build.documents
        write_corpus(out / "corpus.jsonl", docs)
    n_pass = sum(len(s["passages"]) for d in docs for s in d["sections"])
    print(f"  {len(docs)} documents, {n_pass} passages, {len({d['topic'] for d in docs})} topics")

    embedder = make_embedder(args.embedder)
    agents = [make_agent("keyphrase"), make_agent("sentence")]
    with timer.stage(f"run {len(docs) * 2 * 3 * args.seeds} episodes ({args.steps} steps, {args.embedder})"):
        traces = run_episodes(docs, agents, list(BELIEFS), embedder=embedder, max_steps=args.steps,
                              seeds=range(args.seeds), queries_per_step=args.queries_per_step, corpus_name="default")
    from seekbench.traces._io import write_jsonl

    write_jsonl(out / "episodes.jsonl", traces)
    n_queries = sum(s["kind"] == "search" for t in traces for s in t["steps"])
    print(f"  {n_queries} queries, {sum(len(t['steps']) for t in traces)} trace steps")

    with timer.stage("completeness metrics"):
        summary = completeness_summary(traces)
        curves = CompletenessCurves().fit(traces).curves_
        diversity = query_diversity_table(traces)
        topics = topic_agent_table(traces)
    print(summary[["agent", "belief", "n_episodes", "completeness", "ci_low", "ci_high", "self_estimate_error",
                   "mean_query_diversity"]].round(3).to_string(index=False))
    print(f"  curves: {len(curves)} rows; diversity: {len(diversity)} rows; topics x agents: {topics.shape}")

    with timer.stage("report (write_report + completeness section)"):
        import warnings

        from seekbench.analysis import analyze
        from seekbench.report import write_report
        from seekbench.report._completeness_section import completeness_section
        from seekbench.traces import build_tables
        from seekbench.traces._io import write_bytes, write_text

        steps, ttable = build_tables(traces)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analysis = analyze(steps, ttable, trace_dicts=traces, n_boot=200)
            files = write_report(analysis, out / "report")
            section = completeness_section(analysis.completeness)
        _, md, figures, _ = section
        for name, png in figures.items():
            write_bytes(out / "report" / "figures" / f"{name}.png", png)
        write_text(out / "report" / "completeness.md", md)
    print(f"  report: {files.html}; completeness figures: {', '.join(figures)}")

    try:
        import seekbench.env.conformal  # noqa: F401
        have_conformal = True
    except ModuleNotFoundError:
        have_conformal = False
    if have_conformal:
        with timer.stage("synthetic belief states + baseline estimates (env synth-beliefs)"):
            code, o, e = _cli("env", "synth-beliefs", out / "corpus.jsonl", "-o", out / "beliefs.jsonl",
                              "--estimator", "mean", "--estimator", "regression")
        print("  " + (o.strip().splitlines() or [e.strip()])[-1] if code == 0 else f"  failed ({code}): {e.strip()}")
        if code == 0:
            with timer.stage("split conformal (seekbench conformal)"):
                code, o, e = _cli("conformal", out / "beliefs.estimates.jsonl", "-o", out / "conformal",
                                  "--traces", out / "episodes.jsonl", "--stop-estimator", "regression")
            print("\n".join("  " + ln for ln in o.strip().splitlines()[-6:]) if code == 0
                  else f"  failed ({code}): {e.strip()}")
    else:
        print("  (the conformal half, seekbench.env.conformal, is not installed: skipped)")

    took = time.perf_counter() - total
    print(f"\ntotal {took:.1f} s; outputs in {out}")
    for name, s in timer.rows:
        print(f"  {s:7.2f} s  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
