"""Benchmark the LLM-judge annotator against the local OpenAI-compatible server (prints figures; not a test).

1. Throughput: the shared SeekBench traces annotated by the ``local`` judge
   against ``seekbench.testing.OpenAIServer`` with 200 ms added to every
   response, at concurrency 1, 4, 16 and 64 (fresh cache and output each time).
2. Tokens per trace: seekbench's one request per trace (all steps, rule labels
   as context), as the server reports them, against the published annotator's
   design of about two requests per step, each carrying the whole trace so far
   (estimated with the same counter: the same instructions, the trace up to and
   including the step, one label per answer).

Token counts: the mock server's counter (words and punctuation marks), and,
when the optional ``bpe-openai`` package is installed, OpenAI's ``o200k_base``
(the GPT-4.1 / GPT-5 tokenizer) plus 3 tokens per message and 3 per request;
without it that column is left out.

Run::

    PYTHONPATH=. python scripts/bench/annotator_throughput.py [--data ../shared/data/seekbench_human_190.jsonl]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from seekbench.annotate import PromptTemplate, annotate, load_judge_config, render_prompt, rule_labels
from seekbench.annotate._prompt import STEPS_BEGIN, STEPS_END, step_text
from seekbench.testing import OpenAIServer, count_tokens, default_policy
from seekbench.traces import FIELDS_BY_KIND, LABEL_VALUES, read_traces

DEFAULT_DATA = REPO.parent / "shared" / "data" / "seekbench_human_190.jsonl"
GPT41_MINI = (0.40, 1.60)  # USD per million input / output tokens


def o200k():
    try:
        import bpe_openai
    except ImportError:
        return None
    enc = bpe_openai.get_encoding("o200k_base")
    return lambda text: len(enc.encode_ordinary(text))


def chat_tokens(messages, counter, *, per_message=0, per_request=0):
    return per_request + sum(counter(m["content"]) + per_message for m in messages)


def throughput(traces, concurrencies, latency_ms):
    import openai  # noqa: F401  (imported before timing: its import takes about a second)

    cfg = load_judge_config("local")
    rows = []
    for c in concurrencies:
        n = min(len(traces), max(24, 12 * c))
        with tempfile.TemporaryDirectory() as tmp, OpenAIServer(latency_ms=latency_ms) as srv:
            t0 = time.perf_counter()
            s = annotate(traces[:n], cfg, Path(tmp) / "o.jsonl", cache=Path(tmp) / "c.sqlite",
                         base_url=srv.base_url, concurrency=c)
            dt = time.perf_counter() - t0
        rows.append((c, n, dt, n / dt, s.requests))
    base = rows[0][3]
    print(f"\n## Throughput: local server, {latency_ms} ms latency per response, 'local' judge")
    print("concurrency  traces  seconds  traces/s  requests  speed-up vs 1")
    for c, n, dt, tps, req in rows:
        print(f"{c:>11}  {n:>6}  {dt:>7.2f}  {tps:>8.2f}  {req:>8}  {tps / base:>12.1f}x")
    return rows


def published_design_requests(trace, template):
    """The requests of the published design: per step, one per label field, carrying the trace so far."""
    out = []
    shown = []
    for step in trace["steps"]:
        shown.append(json.dumps({"step": step["index"], "kind": step["kind"], "text": step_text(step)},
                                ensure_ascii=False))
        for field in FIELDS_BY_KIND.get(step["kind"], ()):
            user = (f"Question: {trace.get('question') or ''}\n{STEPS_BEGIN}\n[" + ",\n".join(shown) + f"]\n"
                    f"{STEPS_END}\nLabel the {field} of step {step['index']}.")
            answer = json.dumps({field: LABEL_VALUES[field][0]})
            out.append(([{"role": "system", "content": template.system}, {"role": "user", "content": user}],
                        answer))
    return out


def tokens_per_trace(traces):
    cfg = load_judge_config("gpt-4.1-mini")
    template = PromptTemplate.load(cfg.prompt_path, version=cfg.prompt_version)
    bpe = o200k()
    ours = {"requests": [], "mock_in": [], "mock_out": [], "bpe_in": [], "bpe_out": []}
    pub = {"requests": [], "mock_in": [], "mock_out": [], "bpe_in": [], "bpe_out": []}
    for tr in traces:
        msgs = render_prompt(tr, rule_labels(tr), template, context_tokens=cfg.context_tokens,
                             max_tokens=cfg.max_tokens).messages
        answer = default_policy({"messages": msgs})
        ours["requests"].append(1)
        ours["mock_in"].append(chat_tokens(msgs, count_tokens))
        ours["mock_out"].append(count_tokens(answer))
        reqs = published_design_requests(tr, template)
        pub["requests"].append(len(reqs))
        pub["mock_in"].append(sum(chat_tokens(m, count_tokens) for m, _ in reqs))
        pub["mock_out"].append(sum(count_tokens(a) for _, a in reqs))
        if bpe is not None:
            ours["bpe_in"].append(chat_tokens(msgs, bpe, per_message=3, per_request=3))
            ours["bpe_out"].append(bpe(answer))
            pub["bpe_in"].append(sum(chat_tokens(m, bpe, per_message=3, per_request=3) for m, _ in reqs))
            pub["bpe_out"].append(sum(bpe(a) for _, a in reqs))
    n_steps = statistics.mean(len(t["steps"]) for t in traces)
    print(f"\n## Tokens per trace ({len(traces)} traces, {n_steps:.1f} steps per trace on average)")
    print("design                         requests  counter    prompt  completion  $ at gpt-4.1-mini")
    for name, d in (("seekbench: 1 per trace", ours), ("published: ~2 per step", pub)):
        for counter, key in (("mock", "mock"), ("o200k", "bpe")):
            if not d[f"{key}_in"]:
                continue
            tin, tout = statistics.mean(d[f"{key}_in"]), statistics.mean(d[f"{key}_out"])
            usd = (tin * GPT41_MINI[0] + tout * GPT41_MINI[1]) / 1e6
            print(f"{name:<29}  {statistics.mean(d['requests']):>8.1f}  {counter:<7}  {tin:>8.0f}  {tout:>10.0f}  "
                  f"{usd:>17.5f}")
    key = "bpe" if ours["bpe_in"] else "mock"
    ratio = sum(pub[f"{key}_in"]) / sum(ours[f"{key}_in"])
    print(f"prompt tokens, published design / seekbench ({'o200k' if key == 'bpe' else 'mock'} counter): "
          f"{ratio:.1f}x")
    if bpe is None:
        print("(pip install bpe-openai to add o200k_base counts)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="trace file (default: the 190 shared traces)")
    p.add_argument("--latency-ms", type=int, default=200)
    p.add_argument("--concurrency", default="1,4,16,64", help="comma-separated levels")
    args = p.parse_args(argv)
    traces = read_traces(args.data).traces
    throughput(traces, [int(c) for c in args.concurrency.split(",")], args.latency_ms)
    tokens_per_trace(traces)
    return 0


if __name__ == "__main__":
    sys.exit(main())
