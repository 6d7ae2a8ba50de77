"""How well a judge labels: annotate the 190 shared traces with it and score it against the human labels.

For a capable model you can reach (an API such as OpenAI's, or your own
vLLM / llama.cpp server): the judge labels every step of the shared traces
(``seekbench annotate``'s pipeline, resumable: run the same command again
after an interruption), then :func:`seekbench.agreement.compare_annotations`
scores it against the traces' inline human labels, as ``seekbench agree``
does. Written to ``scripts/bench/results/judge_kappa-<judge>-<granularity>``:

- ``.md`` / ``.json``: Cohen's kappa and Gwet's AC1 per label field and step
  kind with 95% bootstrap CIs over traces (n compared, raw agreement), and
  per trace: cost, latency, prompt and completion tokens, requests, the
  unscored count; the run's summary (repairs, retries, elapsed);
- ``.validation.json``: the judge's validation record (``schemas/judge_validation.schema.json``);
  with ``--record PATH`` also written there (seekbench shows the record of a judge whose file is
  ``validation/<judge>.json`` beside its ``.toml``);
- ``.labels.jsonl``: the judge's labels (rater ``<judge>-<granularity>``, so
  the two designs' files can be compared with ``seekbench agree``).

Examples::

    # OpenAI (the published default judge; OPENAI_API_KEY set)
    PYTHONPATH=. python scripts/bench/judge_kappa.py --judge gpt-4.1-mini
    # a vLLM server (vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000): the shipped `local` judge,
    # with `model` set to the served name in a copy of judges/local.toml
    PYTHONPATH=. python scripts/bench/judge_kappa.py --judge ./judges/my-vllm.toml --base-url http://127.0.0.1:8000/v1
    # the pipeline end to end without a model: the bundled mock server (figures say nothing of quality)
    PYTHONPATH=. python scripts/bench/judge_kappa.py --judge local --mock-server --limit 20
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from seekbench import UndefinedMetricWarning  # noqa: E402
from seekbench.agreement import compare_annotations  # noqa: E402
from seekbench.analysis import validation_record, validation_result  # noqa: E402
from seekbench.annotate import annotate, load_judge_config  # noqa: E402
from seekbench.labels import AnnotationSet, load_annotations  # noqa: E402
from seekbench.traces import read_traces  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
RESULTS = HERE / "results"


def _out(out_dir: str, rater: str, suffix: str) -> Path:
    # Not Path.with_suffix: judge names have dots (gpt-4.1-mini).
    return Path(out_dir) / f"judge_kappa-{rater}{suffix}"


def _judge_slug(judge: str) -> str:
    return Path(judge).stem if judge.endswith(".toml") else judge


def run(args: argparse.Namespace) -> dict:
    traces = read_traces(args.data).traces
    if args.limit:
        traces = traces[: args.limit]
    slug = _judge_slug(args.judge) + ("-mock" if args.mock_server else "")
    rater = f"{slug}-{args.granularity}"
    labels = _out(args.out_dir, rater, ".labels.jsonl")
    kwargs: dict = {}
    if "granularity" in inspect.signature(annotate).parameters:
        kwargs["granularity"] = args.granularity
    elif args.granularity != "trace":
        raise SystemExit("this seekbench's annotate has no granularity option; only --granularity trace runs")
    cfg = load_judge_config(args.judge)
    with contextlib.ExitStack() as stack:
        base_url, cache = args.base_url, args.cache
        if args.mock_server:
            import tempfile

            from seekbench.testing import OpenAIServer

            base_url = stack.enter_context(OpenAIServer()).base_url
            if cache is None:  # mock answers must never be served from a real judge's cache later
                cache = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "mock.sqlite"
        t0 = time.perf_counter()
        summary = annotate(traces, cfg, labels, cache=cache, concurrency=args.concurrency, rater=rater,
                           base_url=base_url, progress=not args.no_progress, **kwargs)
        wall = time.perf_counter() - t0
    if summary.failed or summary.not_started:
        print(f"warning: {summary.failed} traces failed and {summary.not_started} were not started "
              f"(first error: {summary.first_error}); run the same command again to resume", file=sys.stderr)
    reference = AnnotationSet.from_traces(traces, source=str(args.data))
    judged = load_annotations(labels)
    recs = judged.records  # the labels file may hold more traces than this run (an earlier run without --limit)
    recs = recs[recs["trace_id"].astype(str).isin({str(t["trace_id"]) for t in traces})].reset_index(drop=True)
    judged = AnnotationSet(recs, name=judged.name, skipped=judged.skipped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # listed in the result's warnings
        result = compare_annotations(reference, judged, traces=traces, n_boot=args.n_boot, seed=0).to_dict()
    strata = [r for r in result["summary"] if r["rater"] == rater]
    (costs,) = [c for c in result["costs"] if c["rater"] == rater]
    record = validation_record(
        _judge_slug(args.judge), [validation_result(reference, judged, traces, n_boot=args.n_boot, seed=0)],
        method="in-sample",
        method_detail=(f"no training on these labels (a fixed prompt, granularity {args.granularity}); measured on "
                       f"{len(traces)} traces" + (" against the bundled mock server, not a model." if args.mock_server
                                                  else ".")),
        data={"name": f"human labels of {Path(args.data).name}", "source": str(args.data), "license": None,
              "n_traces": len(traces), "agents": sorted({str(t.get("agent")) for t in traces})},
        model=cfg.model, cost_per_trace_usd=costs["cost_per_trace"], seconds_per_trace=costs["latency_s_per_trace"],
        n_boot=args.n_boot, seed=0, created_by="scripts/bench/judge_kappa.py")
    return {
        "judge": args.judge, "model": cfg.model, "granularity": args.granularity, "rater": rater,
        "endpoint": base_url or cfg.base_url, "mock_server": args.mock_server, "n_traces": len(traces),
        "n_boot": args.n_boot, "wall_s": round(wall, 1), "run": summary.to_dict(), "strata": strata, "costs": costs,
        "labels": str(labels), "warnings": result["warnings"], "validation_record": record,
    }


def _json_num(v):
    """numpy numbers in the record as plain JSON numbers."""
    return v.item() if hasattr(v, "item") else str(v)


def _f(v, digits: int = 3) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def to_markdown(res: dict) -> str:
    c, s = res["costs"], res["run"]
    lines = [f"# Judge quality: {res['judge']} ({res['model']}), granularity {res['granularity']}",
             "",
             f"{res['n_traces']} shared traces against their human labels; endpoint {res['endpoint']}"
             + (" (the bundled mock server: these figures say nothing of a model's quality)" if res["mock_server"]
                else "") + f"; 95% CIs from {res['n_boot']} bootstrap resamples of traces.",
             "",
             "| field | step kind | n | raw agreement | kappa (95% CI) | AC1 (95% CI) |",
             "|---|---|---|---|---|---|"]
    for r in res["strata"]:
        lines.append(f"| {r['field']} | {r['step_kind']} | {r['n_compared']} | {_f(r['raw_agreement'])} | "
                     f"{_f(r['kappa'])} ({_f(r['kappa_lower'])}, {_f(r['kappa_upper'])}) | "
                     f"{_f(r['ac1'])} ({_f(r['ac1_lower'])}, {_f(r['ac1_upper'])}) |")
    n = max(res["n_traces"], 1)
    lines += ["",
              "Per trace, from the labels' provenance as `seekbench agree` reports it, and as paid in this run "
             "(0 when every answer came from the cache):", "",
             "| per trace | value |", "|---|---|",
              f"| cost (USD) | {_f(c['cost_per_trace'], 5)} |",
              f"| latency (s) | {_f(c['latency_s_per_trace'], 2)} |",
              f"| prompt tokens | {_f(c['input_tokens_per_trace'], 0)} |",
              f"| completion tokens | {_f(c['output_tokens_per_trace'], 0)} |",
              f"| requests (this run) | {_f(s['requests'] / n, 2)} |",
              f"| prompt tokens (this run) | {_f(s['prompt_tokens'] / n, 0)} |",
              f"| completion tokens (this run) | {_f(s['completion_tokens'] / n, 0)} |",
              f"| cost (USD, this run) | {_f(s['cost_usd'] / n, 5)} |",
              "",
              f"Run: {s['labeled']} traces labeled, {s['unscored']} unscored, {s['failed']} failed, "
              f"{s['already_done']} already done; {s['unscored_labels']} unscored labels "
              f"(most common reason: {c['top_unscored_reason'] or '-'}); {s['repairs']} repairs, {s['retries']} "
              f"retries; {res['wall_s']} s wall. Labels: `{res['labels']}`.", "",
              *[f"Note: {w}" for w in res["warnings"]], ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--judge", required=True, help="judge name from judges/ or a judge .toml file")
    p.add_argument("--granularity", choices=("trace", "step"), default="trace",
                   help="one request per trace (default) or per step (the published design)")
    p.add_argument("--data", default=str(DEFAULT_DATA), help="trace file with inline human labels")
    p.add_argument("--base-url", help="override the judge's endpoint (e.g. http://127.0.0.1:8000/v1)")
    p.add_argument("--mock-server", action="store_true", help="answer with the bundled mock server (no model)")
    p.add_argument("--concurrency", type=int, default=8, help="traces in flight (1 for a one-slot local server)")
    p.add_argument("--cache", help="SQLite judge cache (default: seekbench's)")
    p.add_argument("--limit", type=int, help="only the first N traces")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for the CIs")
    p.add_argument("--out-dir", default=str(RESULTS), help="where the results go (default scripts/bench/results)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--record", metavar="PATH",
                   help="also write the judge's validation record here; seekbench shows it when the file is "
                        "validation/<judge>.json beside the judge's .toml (judge list, agree, report)")
    args = p.parse_args(argv)
    Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    res = run(args)
    md = to_markdown(res)
    _out(args.out_dir, res["rater"], ".md").write_text(md, encoding="utf-8")
    _out(args.out_dir, res["rater"], ".json").write_text(json.dumps(res, indent=1, default=str) + "\n",
                                                         encoding="utf-8")
    record = json.dumps(res["validation_record"], indent=1, sort_keys=True, default=_json_num) + "\n"
    _out(args.out_dir, res["rater"], ".validation.json").write_text(record, encoding="utf-8")
    if args.record:
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text(record, encoding="utf-8")
    print(md)
    print(f"wrote {_out(args.out_dir, res['rater'], '.{md,json}')} and {res['labels']}", file=sys.stderr)
    return 0 if res["run"]["complete"] else 3


if __name__ == "__main__":
    sys.exit(main())
