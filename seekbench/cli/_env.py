"""``seekbench env build-corpus|run|theta``: the seeking environment (SeekerGym) from the command line.

``synth-beliefs`` (belief states for conformal calibration) lives in ``_synth_beliefs``.
"""

from __future__ import annotations

import argparse
import sys
import time

from .._errors import EXIT_FAILURES, EXIT_OK, UserInputError
from . import _synth_beliefs
from ._options import add_command_group, add_json, add_llm_options, add_output, add_seed, check_at_least
from ._output import finish

DESCRIPTION = """\
The seeking environment (SeekerGym): an agent sees a document's title and abstract and
must retrieve its passages with queries; a query retrieves every passage whose embedding
cosine to it is above theta; completeness is the share retrieved. Every episode is a
canonical trace, so `seekbench annotate`, `metrics` and `report` read it unchanged.

Examples:
  seekbench env build-corpus --default -o corpus.jsonl
  seekbench env build-corpus docs/ -o corpus.jsonl --min-passages 8 --merge-short
  seekbench env run --corpus default --agent keyphrase,sentence --belief trajectory,deduplicated,oracle \\
      --steps 10 -o episodes.jsonl
  seekbench env run --corpus corpus.jsonl --agent llm:gpt-4.1-mini --belief oracle -o llm.jsonl
  seekbench env theta --corpus default --embedder tfidf
  seekbench report episodes.jsonl -o report/
"""


def _corpus_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--corpus",
        required=True,
        metavar="CORPUS",
        help="corpus JSONL (seekbench env build-corpus), or 'default' for the embedded default corpus",
    )
    p.add_argument("--documents", default=None, metavar="ID,...", help="only these doc_ids")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N documents")


def _embedder_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("retrieval")
    g.add_argument(
        "--embedder",
        default="tfidf",
        metavar="NAME",
        help="tfidf (default, always available), minilm (local all-MiniLM-L6-v2, needs the "
        "local-embed extra) or openai[:MODEL] (text-embedding-3-large by default)",
    )
    g.add_argument("--embed-base-url", default=None, metavar="URL", help="openai embedder: endpoint")
    g.add_argument(
        "--embed-cache",
        default=None,
        metavar="PATH",
        help="embedding cache (default $SEEKBENCH_EMBED_CACHE or ~/.cache/seekbench/embeddings.sqlite)",
    )


def _llm_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM agent (--agent llm or llm:MODEL)")
    add_llm_options(
        g,
        "base_url",
        helps={"base_url": "OpenAI-compatible endpoint of the agent (default $OPENAI_BASE_URL, else OpenAI)"},
    )
    g.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="variable holding the key (default OPENAI_API_KEY; a local endpoint needs none)",
    )
    g.add_argument("--temperature", type=float, default=0.0, help="decoding temperature (default 0)")
    g.add_argument(
        "--max-tokens-param",
        default="max_completion_tokens",
        choices=["max_completion_tokens", "max_tokens"],
        help="how the token limit is sent",
    )
    g.add_argument("--response-format", default="json_object", choices=["json_object", "json_schema"])
    g.add_argument(
        "--prompt", default=None, metavar="FILE", help="agent prompt (default judges/prompts/seeker_agent_v1.md)"
    )
    add_llm_options(g, "cache")


def _episode_args(p: argparse.ArgumentParser, *, steps_default: int = 10) -> None:
    p.add_argument(
        "--steps", type=int, default=steps_default, metavar="M", help=f"steps per episode (default {steps_default})"
    )
    p.add_argument("--queries-per-step", type=int, default=2, metavar="K", help="queries per step (default 2)")
    add_seed(p, of="episodes (the agents' and the environment's draws)")


def register(sub) -> None:
    esub = add_command_group(
        sub,
        "env",
        help="seeking environment: build a corpus, run episodes, choose theta",
        description=DESCRIPTION,
        dest="env_command",
    )

    b = esub.add_parser(
        "build-corpus",
        help="corpus JSONL from a JSONL corpus, a folder of Markdown/HTML, or the embedded default",
        description="Build a corpus (docs/environment.md) and "
        "report every document the quality filters reject (SeekerGym's: minimum passages, "
        "short-passage ratio).",
    )
    b.add_argument("source", nargs="?", metavar="SOURCE", help="corpus JSONL file or folder of .md/.html files")
    b.add_argument("--default", action="store_true", help="build the embedded default corpus (Python's own docs)")
    add_output(b, metavar="CORPUS.jsonl", help="corpus JSONL to write")
    b.add_argument("--format", default="auto", choices=["auto", "jsonl", "markdown", "html"])
    b.add_argument(
        "--topic",
        default="general",
        help="topic of files directly in the folder (default general; files in a subfolder take its name)",
    )
    g = b.add_argument_group("quality filters (SeekerGym's Wikipedia values by default)")
    g.add_argument("--min-passages", type=int, default=None, metavar="N", help="default 12 (8 for --default)")
    g.add_argument("--max-passages", type=int, default=None, metavar="N")
    g.add_argument(
        "--short-tokens", type=int, default=48, metavar="T", help="short passage: < T tokens (len/4; default 48)"
    )
    g.add_argument(
        "--max-short-ratio",
        type=float,
        default=None,
        metavar="R",
        help="reject above this share of short passages (default 0.1; 0.2 for --default)",
    )
    g.add_argument("--merge-short", action="store_true", help="join short paragraphs to the next one first")
    add_json(b, what="the report as one JSON object")
    b.set_defaults(run=run_build)

    r = esub.add_parser(
        "run",
        help="run episodes and write them as canonical traces",
        description="Run every (document, agent, belief, seed) episode and write the traces "
        "(JSONL). Prints final completeness per agent and belief.",
    )
    _corpus_arg(r)
    r.add_argument(
        "--agent",
        action="append",
        required=True,
        metavar="A[,B]",
        help="keyphrase, sentence (scripted, no LLM), llm or llm:MODEL; comma-separated or repeated",
    )
    r.add_argument(
        "--belief",
        action="append",
        default=None,
        metavar="B[,C]",
        help="trajectory, deduplicated (default), oracle; comma-separated or repeated",
    )
    _episode_args(r)
    r.add_argument("--seeds", type=int, default=1, metavar="N", help="episodes per setting, seeds SEED..SEED+N-1")
    r.add_argument("--theta", type=float, default=None, help="retrieval threshold (default: the embedder's)")
    add_output(r, metavar="TRACES.jsonl", help="episodes to write, as canonical traces (JSONL)")
    add_llm_options(r, "no_progress", aliases={"no_progress": "--quiet"})
    _embedder_args(r)
    _llm_args(r)
    r.set_defaults(run=run_episodes_cmd)

    t = esub.add_parser(
        "theta",
        help="completeness against theta for one agent (to choose theta)",
        description="Run one agent (default keyphrase, deduplicated belief) over the corpus at "
        "several thresholds and print mean final completeness, passages per query and the "
        "share of queries returning nothing at each.",
    )
    _corpus_arg(t)
    t.add_argument("--agent", default="keyphrase", metavar="A", help="agent (default keyphrase)")
    t.add_argument("--belief", default="deduplicated", choices=["trajectory", "deduplicated", "oracle"])
    t.add_argument(
        "--thetas", default=None, metavar="X,Y,...", help="thresholds (default: around the embedder's default)"
    )
    _episode_args(t)
    add_json(t, what="one JSON object instead of the table")
    _embedder_args(t)
    _llm_args(t)
    t.set_defaults(run=run_theta)

    _synth_beliefs.register(esub)


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def _load_corpus(args):
    from ..env import default_corpus, load_corpus

    docs = default_corpus().documents if args.corpus == "default" else load_corpus(args.corpus)
    if args.documents:
        wanted = _split([args.documents])
        known = {d["doc_id"] for d in docs}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise UserInputError(f"no document {unknown[0]!r} in the corpus", file=args.corpus)
        docs = [d for d in docs if d["doc_id"] in wanted]
    check_at_least(args, ("limit", 1))
    if args.limit is not None:
        docs = docs[: args.limit]
    return docs


def _embedder(args):
    from ..env import EmbeddingCache, make_embedder

    kind = args.embedder.split(":")[0].lower()
    cache = None if kind in ("tfidf", "tf-idf") else EmbeddingCache(args.embed_cache)
    kw = {"base_url": args.embed_base_url} if kind == "openai" and args.embed_base_url else {}
    return make_embedder(args.embedder, cache=cache, **kw)


def _agents(specs: list[str], args) -> list:
    from ..env import make_agent

    out = []
    for spec in specs:
        opts = {}
        if spec.split(":")[0] == "llm":
            opts = {
                "base_url": args.base_url,
                "api_key_env": args.api_key_env,
                "temperature": args.temperature,
                "max_tokens_param": args.max_tokens_param,
                "response_format": args.response_format,
                "prompt": args.prompt,
                "cache": args.cache,
            }
        out.append(make_agent(spec, **opts))
    return out


def run_build(args: argparse.Namespace) -> int:
    from ..env import QualityFilter, build_corpus, default_corpus, write_corpus

    if args.default == bool(args.source):
        raise UserInputError("give a SOURCE (JSONL file or folder) or --default, not both and not neither")
    defaults = (8, 0.2) if args.default else (12, 0.1)
    filters = QualityFilter(
        min_passages=args.min_passages or defaults[0],
        max_passages=args.max_passages,
        short_tokens=args.short_tokens,
        max_short_ratio=defaults[1] if args.max_short_ratio is None else args.max_short_ratio,
    )
    build = (
        default_corpus(filters=filters)
        if args.default
        else build_corpus(
            args.source, fmt=args.format, filters=filters, default_topic=args.topic, merge_short=args.merge_short
        )
    )
    if not build.documents:
        raise UserInputError(
            f"every document was rejected ({len(build.rejected)}): first: "
            f"{build.rejected[0]['doc_id']}: {build.rejected[0]['reason']}; loosen the filters"
        )
    write_corpus(args.output, build.documents)
    out = {"output": args.output, "kept": len(build.documents), "n_input": build.n_input, "rejected": build.rejected}
    return finish(args, out, lambda: f"{build.summary()}\nwrote {len(build.documents)} documents to {args.output}")


def run_episodes_cmd(args: argparse.Namespace) -> int:
    from .._io import write_jsonl
    from ..env import BELIEFS, completeness_summary, run_episodes
    from ..report import fmt

    beliefs = _split(args.belief) or ["deduplicated"]
    bad = [b for b in beliefs if b not in BELIEFS]
    if bad:
        raise UserInputError(f"unknown belief {bad[0]!r}; use {', '.join(BELIEFS)}")
    check_at_least(args, ("seeds", 1))
    docs = _load_corpus(args)
    embedder = _embedder(args)
    agents = _agents(_split(args.agent), args)
    total = len(docs) * len(agents) * len(beliefs) * args.seeds
    done = [0]
    start = time.monotonic()

    live = not args.no_progress and sys.stderr.isatty()

    def progress(trace: dict) -> None:
        done[0] += 1
        if live:
            print(
                f"\r{done[0]}/{total} episodes ({time.monotonic() - start:.0f} s)", end="", file=sys.stderr, flush=True
            )

    try:
        traces = run_episodes(
            docs,
            agents,
            beliefs,
            embedder=embedder,
            theta=args.theta,
            max_steps=args.steps,
            seeds=range(args.seed, args.seed + args.seeds),
            queries_per_step=args.queries_per_step,
            corpus_name="default" if args.corpus == "default" else args.corpus,
            on_episode=progress,
        )
    finally:
        for a in agents:
            if hasattr(a, "close"):
                a.close()
        if live and done[0]:
            print(file=sys.stderr)
    write_jsonl(args.output, traces)
    failed = _failed_episodes(agents)
    ok = [t for t in traces if t["trace_id"] not in failed]
    theta = traces[0]["env"]["theta"]
    print(
        f"{len(traces)} episodes, {len(docs)} documents, embedder {embedder.name} (theta {theta:g}), "
        f"{args.steps} steps x {args.queries_per_step} queries, {time.monotonic() - start:.1f} s"
    )
    if ok:
        summary = completeness_summary(ok)
        print(f"{'agent':<22} {'belief':<13} {'episodes':>8}  completeness [95% CI]   self-est. error")
        for _, r in summary.iterrows():
            ci = fmt([r["ci_low"], r["ci_high"]])
            print(
                f"{r['agent']!s:<22} {r['belief']:<13} {r['n_episodes']:>8}  {r['completeness']:.3f} {ci:<14}  "
                f"{fmt(r['self_estimate_error'])}"
            )
    print(f"wrote {args.output}")
    return _report_failed(failed, agents, len(traces))


def _failed_episodes(agents) -> dict[str, str]:
    """Episode id -> first request failure, over the LLM agents (scripted agents never fail)."""
    return {k: v for a in agents for k, v in getattr(a, "failed_episodes", {}).items()}


def _report_failed(
    failed: dict[str, str],
    agents,
    total: int,
    *,
    what: str = "episodes",
    outcome: str = "they are written but left out of the completeness table above",
) -> int:
    """Exit 3 with the count and the first error in full when some episodes ran without their model."""
    if not failed:
        return EXIT_OK
    first = next(a.first_error for a in agents if getattr(a, "first_error", None))
    print(
        f"seekbench: {len(failed)} of {total} {what} failed (the agent's requests failed; {outcome}); "
        "re-run once the endpoint works",
        file=sys.stderr,
    )
    print(f"seekbench: first error: {first}", file=sys.stderr)
    return EXIT_FAILURES


def run_theta(args: argparse.Namespace) -> int:
    from ..env import default_thetas, theta_sweep

    docs = _load_corpus(args)
    embedder = _embedder(args)
    try:
        thetas = [float(x) for x in _split([args.thetas])] if args.thetas else default_thetas(embedder.default_theta)
    except ValueError as e:
        raise UserInputError(f"--thetas must be numbers separated by commas ({e})") from None
    (agent,) = _agents([args.agent], args)
    try:
        table = theta_sweep(
            docs,
            agent,
            embedder=embedder,
            thetas=thetas,
            belief=args.belief,
            max_steps=args.steps,
            seed=args.seed,
            queries_per_step=args.queries_per_step,
        )
    finally:
        if hasattr(agent, "close"):
            agent.close()
    failed = _failed_episodes([agent])
    if failed:  # an episode id names the document, not theta: count documents; the sweep writes nothing
        return _report_failed(failed, [agent], len(docs), what="documents", outcome="no table is printed")
    out = {
        "embedder": embedder.name,
        "default_theta": embedder.default_theta,
        "agent": agent.name,
        "belief": args.belief,
        "steps": args.steps,
        "rows": table.to_dict(orient="records"),
    }
    return finish(args, out, lambda: _theta_text(args, agent, embedder, table, len(docs)))


def _theta_text(args: argparse.Namespace, agent, embedder, table, n_docs: int) -> str:
    """The sweep as a table with a bar per theta, the embedder's default marked."""
    lines = [
        f"agent {agent.name}, {args.belief} belief, {n_docs} documents, {args.steps} steps x "
        f"{args.queries_per_step} queries; embedder {embedder.name} (default theta {embedder.default_theta:g})",
        f"{'theta':>6}  {'completeness':>12}  {'std':>6}  {'passages/query':>14}  {'empty queries':>13}",
    ]
    for _, r in table.iterrows():
        mark = "  <- default" if abs(r["theta"] - embedder.default_theta) < 1e-9 else ""
        bar = "#" * round(40 * r["completeness"])
        lines.append(
            f"{r['theta']:>6.3f}  {r['completeness']:>12.3f}  {r['std']:>6.3f}  {r['passages_per_query']:>14.2f}  "
            f"{r['empty_query_share']:>13.2f}  {bar}{mark}"
        )
    lines.append(
        "too low: queries return much of the document whatever they say; too high: good queries return "
        "nothing (SeekerGym appendix A.2)"
    )
    return "\n".join(lines)
