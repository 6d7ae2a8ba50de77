"""``seekbench cache stats|clear``: inspect or empty the judge cache."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._errors import UserInputError
from .._io import dumps
from ._options import add_command_group, add_json, add_judge_option, add_llm_options

CACHE_HELP = "judge cache: stats or clear"

CACHE_DESCRIPTION = (
    "The SQLite cache of judge completions (every paid answer, with its usage "
    "and cost). `stats` shows what it holds; `clear --yes` deletes entries."
)


def register(sub) -> None:
    csub = add_command_group(sub, "cache", help=CACHE_HELP, description=CACHE_DESCRIPTION, dest="cache_command")
    stats = csub.add_parser("stats", help="entries, tokens and cost per judge")
    add_llm_options(stats, "cache")
    add_json(stats, what="one JSON object")
    clear = csub.add_parser("clear", help="delete cached entries")
    add_llm_options(clear, "cache")
    add_judge_option(clear, help="delete only this judge's entries (default: every judge's)")
    clear.add_argument("--yes", action="store_true", help="really delete (cached answers were paid for)")
    for action in (stats, clear):
        action.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..llm import JudgeCache, default_cache_path

    path = Path(args.cache) if args.cache else default_cache_path()
    if not path.exists():
        if args.cache_command == "stats" and getattr(args, "json", False):
            sys.stdout.write(dumps({"path": str(path), "entries": 0, "exists": False}) + "\n")
        else:
            print(f"no judge cache at {path} (0 entries)")
        return 0
    with JudgeCache(path) as cache:
        stats = cache.stats()
        if args.cache_command == "stats":
            if args.json:
                sys.stdout.write(dumps(stats) + "\n")
                return 0
            print(
                f"{stats['path']}: {stats['entries']} completions, {stats['bytes'] / 1e6:.1f} MB, "
                f"{stats['prompt_tokens']} prompt + {stats['completion_tokens']} completion tokens, "
                f"${stats['cost_usd']:.4f} paid, {stats['rejected_answers']} answers rejected"
            )
            for j in stats["judges"]:
                print(
                    f"  {j['judge']} ({j['model']}, {j['prompt_version']}): {j['entries']} completions for "
                    f"{j['traces']} traces, ${j['cost_usd']:.4f}"
                )
            return 0
        # a judge has one row per (model, prompt version) in the stats: count them all, as clear deletes them all
        n = (
            stats["entries"]
            if args.judge is None
            else sum(j["entries"] for j in stats["judges"] if j["judge"] == args.judge)
        )
        if not args.yes:
            raise UserInputError(
                f"refusing to delete {n} cached completions (paid answers) without --yes", file=str(path)
            )
        deleted = cache.clear(judge=args.judge)
    print(f"deleted {deleted} cached completions from {path}")
    return 0
