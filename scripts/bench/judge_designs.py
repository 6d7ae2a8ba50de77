"""What each judge design costs: requests, prompt tokens and dollars per trace, ``trace`` against ``step`` granularity.

``trace`` (seekbench's default) sends one request per trace labeling all its
steps; ``step`` (the published annotator's design) sends one request per step
with the trace so far. Both are run for real: the 190 shared traces are
annotated through :func:`seekbench.annotate.annotate` against the bundled
OpenAI-compatible server (``seekbench.testing``), whose policy records every
request it answers; the figures are counted on those requests and answers
(the requests the pipeline actually sends, repairs included), so they are
exact for the prompts, not estimates. Token counts are OpenAI's ``o200k_base``
(GPT-4.1 / GPT-5) through the ``bpe-openai`` package (the ``bench`` extra),
plus 3 tokens per message and 3 per request, as in
``annotator_throughput.py``, whose counting this reuses. Cost at the shipped
``gpt-4.1-mini`` judge's prices. The answers are the mock server's (one valid
label set), so completion tokens are the size of a valid answer, not of a
real model's.

Run::

    PYTHONPATH=. python scripts/bench/judge_designs.py [--data ../shared/data/seekbench_human_190.jsonl]

and it also writes ``scripts/bench/results/judge_designs.txt``.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import statistics
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO), str(HERE)]

from annotator_throughput import DEFAULT_DATA, chat_tokens, o200k  # noqa: E402

from seekbench.annotate import annotate, load_judge_config  # noqa: E402
from seekbench.testing import OpenAIServer, default_policy, extract_trace_id  # noqa: E402
from seekbench.traces import read_traces  # noqa: E402

JUDGE = "gpt-4.1-mini"
GRANULARITIES = ("trace", "step")


def granularity_supported() -> bool:
    """Whether this seekbench's ``annotate`` takes ``granularity`` (issue 18 adds the ``step`` design)."""
    return "granularity" in inspect.signature(annotate).parameters


def run_design(traces: list[dict], granularity: str, counter) -> dict:
    """Annotate ``traces`` at one granularity against the bundled server; per-trace figures of what was sent."""
    cfg = load_judge_config(JUDGE)
    sent: list[tuple[dict, str]] = []
    lock = threading.Lock()

    def recording_policy(request):
        answer = default_policy(request)
        with lock:
            sent.append((request, answer))
        return answer

    kwargs = {"granularity": granularity} if granularity_supported() else {}
    with tempfile.TemporaryDirectory() as tmp, OpenAIServer(policy=recording_policy) as srv:
        summary = annotate(traces, cfg, Path(tmp) / "o.jsonl", cache=Path(tmp) / "c.sqlite",
                           base_url=srv.base_url, concurrency=8, **kwargs)
    per_trace: dict[str, dict] = {str(t["trace_id"]): {"requests": 0, "in": 0, "out": 0} for t in traces}
    for request, answer in sent:
        tid = extract_trace_id(request)
        if tid not in per_trace:  # ids that are not plain identifiers are shown hashed: not countable per trace
            raise SystemExit(f"a request names no trace of the input (TRACE_ID {tid!r}); use plain trace ids")
        row = per_trace[tid]
        row["requests"] += 1
        row["in"] += chat_tokens(request["messages"], counter, per_message=3, per_request=3)
        row["out"] += counter(answer)
    rows = list(per_trace.values())
    usd = [(r["in"] * cfg.price_input_per_mtok + r["out"] * cfg.price_output_per_mtok) / 1e6 for r in rows]
    return {"granularity": granularity, "n": len(rows), "summary": summary, "usd": usd,
            "requests": [r["requests"] for r in rows], "in": [r["in"] for r in rows], "out": [r["out"] for r in rows],
            "prices": (cfg.price_input_per_mtok, cfg.price_output_per_mtok)}


def _q(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1] if len(values) > 1 else values[0]


def report(results: list[dict], n_steps: float) -> str:
    out = io.StringIO()
    p_in, p_out = results[0]["prices"]
    print(f"## Judge designs: {results[0]['n']} shared traces ({n_steps:.1f} steps per trace on average), "
          f"bundled server, o200k_base tokens, {JUDGE} prices (${p_in}/${p_out} per M in/out)", file=out)
    print("granularity  requests/trace  prompt tok/trace (median, p90)  completion tok/trace  $/trace   "
          "$ for all  labeled  unscored", file=out)
    for r in results:
        s = r["summary"]
        print(f"{r['granularity']:<11}  {statistics.mean(r['requests']):>14.2f}  {statistics.mean(r['in']):>9.0f} "
              f"({statistics.median(r['in']):>6.0f}, {_q(r['in'], 0.9):>6.0f})  {statistics.mean(r['out']):>20.0f}  "
              f"{statistics.mean(r['usd']):>8.5f}  {sum(r['usd']):>9.4f}  {s.labeled:>7}  {s.unscored:>8}", file=out)
    if len(results) == 2:
        t, st = results
        print(f"step / trace: requests {sum(st['requests']) / sum(t['requests']):.1f}x, prompt tokens "
              f"{sum(st['in']) / sum(t['in']):.1f}x, cost {sum(st['usd']) / sum(t['usd']):.1f}x", file=out)
    return out.getvalue()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="trace file (default: the 190 shared traces)")
    p.add_argument("--output", default=str(HERE / "results" / "judge_designs.txt"),
                   help="also write the table here ('' for none)")
    args = p.parse_args(argv)
    counter = o200k()
    if counter is None:
        print("judge_designs.py needs o200k_base counts: python -m pip install -e '.[bench]'", file=sys.stderr)
        return 2
    traces = read_traces(args.data).traces
    designs = GRANULARITIES if granularity_supported() else ("trace",)
    results = []
    for g in designs:
        with contextlib.redirect_stderr(io.StringIO()):  # the run's own notes; the table says what matters
            results.append(run_design(traces, g, counter))
    text = report(results, statistics.mean(len(t["steps"]) for t in traces))
    if not granularity_supported():
        text += ("(this seekbench's annotate has no granularity option, so only the trace design ran; "
                 "annotator_throughput.py estimates the published per-step design)\n")
    print(text, end="")
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
