"""Run the seekbench mock OpenAI server from the command line.

    python -m seekbench.testing.openai_server --port 8765 --faults "429:0.1,inject:0.05"

then point the judge pipeline (or any openai client) at
``http://127.0.0.1:8765/v1`` with any API key.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from .._errors import UserInputError
from ._faults import FAULT_HEADER, FAULT_KINDS, FaultSpec
from ._profile import ServerProfile
from ._protocol import STEPS_BEGIN, STEPS_END, TRACE_ID_PREFIX
from ._server import OpenAIServer

__all__ = ["OpenAIServer", "main"]

API_KEY_ENV = "SEEKBENCH_MOCK_API_KEY"

_EPILOG = f"""\
endpoints (127.0.0.1 only):
  POST /v1/chat/completions   non-streaming; content comes from the labeling policy
  GET  /v1/models
  POST /v1/files, GET /v1/files/{{id}}, GET /v1/files/{{id}}/content
  POST /v1/batches, GET /v1/batches/{{id}}, POST /v1/batches/{{id}}/cancel
       (each GET of a batch advances it: validating -> in_progress -> completed)

prompt contract of the default policy (last user message):
  {TRACE_ID_PREFIX} <id>            optional, copied to the request log
  {STEPS_BEGIN}
  [{{"step": 1, "kind": "reasoning|search|search_result|answer", "text": "..."}}, ...]
  {STEPS_END}
  -> {{"labels": [{{"step": 1, "reasoning_type": ..., "grounding": ...}}, ...]}}
  the other shipped prompts are answered too: answer judges (<<<CANDIDATE_JSON ->
  Yes/No by normalised match with <<<GOLD_ANSWERS_JSON), coverage (<<<STATEMENTS_JSON),
  completeness estimates and the seeker agent (<<<BELIEF_JSON)

fault spec: comma-separated kind[:probability], tried in order, first to fire wins
  kinds: {", ".join(FAULT_KINDS)}
  e.g. "429:0.2,500:0.1,drop:0.05,timeout:0.05,malformed:0.1"
  a request can force one with the header "{FAULT_HEADER}: <kind>" (or "none")
  draws are seeded by --seed, the request body and how often that body was seen,
  so a retry draws afresh; batch lines draw too (failures go to the error file)

usage: prompt_tokens = words and punctuation marks in the messages' text,
  completion_tokens = the same count over the answer.

authorization: any "Bearer" key is accepted unless {API_KEY_ENV} is set, then
  only that key. Keys are never logged.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m seekbench.testing.openai_server",
        description="A local OpenAI-compatible server that labels seekbench judge prompts "
        "deterministically and injects faults on request, for tests and for trying "
        "the judge pipeline without an API key.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0 = any free port; default 8765)")
    parser.add_argument(
        "--faults", default=None, metavar="SPEC", help='fault spec, e.g. "429:0.2,drop:0.1" (default: none)'
    )
    parser.add_argument("--latency-ms", type=int, default=0, metavar="N", help="delay every response by N ms")
    parser.add_argument(
        "--timeout-s",
        type=float,
        default=5.0,
        metavar="S",
        help="how long the timeout fault holds a request (default 5)",
    )
    parser.add_argument(
        "--retry-after", type=int, default=0, metavar="S", help="Retry-After seconds on 429 (default 0)"
    )
    parser.add_argument("--request-log", default=None, metavar="FILE", help="append one JSON line per request to FILE")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws and ids (default 0)")
    parser.add_argument("--quiet", action="store_true", help="do not print one line per request to stderr")
    parser.add_argument(
        "--profile",
        choices=("openai", "llama.cpp", "vllm"),
        default="openai",
        help="the server to play: llama.cpp refuses json_schema with HTTP 500 and serves /props; vllm reports "
        "max_model_len in /v1/models (default openai: accepts everything, reports nothing)",
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=None,
        metavar="N",
        help="refuse prompts longer than N tokens with a context-length 400 (and report N as the server would)",
    )
    parser.add_argument("--slots", type=int, default=1, metavar="N", help="llama.cpp profile: total_slots (default 1)")
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        faults = FaultSpec.parse(args.faults)
    except UserInputError as e:
        parser.error(str(e))
    if args.latency_ms < 0 or args.timeout_s < 0 or args.retry_after < 0:
        parser.error("--latency-ms, --timeout-s and --retry-after must be >= 0")
    if args.profile == "llama.cpp":
        profile = ServerProfile.llama_cpp(context_tokens=args.context_tokens or 8192, slots=args.slots)
    elif args.profile == "vllm":
        profile = ServerProfile.vllm(context_tokens=args.context_tokens or 8192)
    else:
        profile = ServerProfile(context_tokens=args.context_tokens)
    server = OpenAIServer(
        profile=profile,
        port=args.port,
        faults=faults,
        latency_ms=args.latency_ms,
        seed=args.seed,
        request_log=args.request_log,
        api_key=os.environ.get(API_KEY_ENV) or None,
        timeout_s=args.timeout_s,
        retry_after_s=args.retry_after,
        verbose=not args.quiet,
    )
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.start()
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e.strerror}; pick another --port", file=sys.stderr)
        return 2
    print(f"seekbench mock OpenAI server on {server.base_url} (faults: {str(faults) or 'none'})", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
