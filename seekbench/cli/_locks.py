"""Which paths a command locks for its run (one writer per output: :mod:`seekbench._lock`).

A command that asks a model (an LLM judge, an LLM agent) locks its output and the judge cache it
writes, so that a second run on either stops at once instead of paying for the same requests; a
command that only reads the cache (``cache stats``) or asks no model locks nothing of it. Commands
that only replace whole files atomically lock nothing: two of them on one output end with one
run's whole file.
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections.abc import Callable
from pathlib import Path

Locks = list[tuple[str | os.PathLike, str]]


def _cache(args: argparse.Namespace) -> tuple[Path, str]:
    from ..llm import default_cache_path

    return (Path(args.cache) if getattr(args, "cache", None) else default_cache_path()), "--cache"


def _annotate(args: argparse.Namespace) -> Locks:
    from ..annotate import load_judge_config

    with warnings.catch_warnings():  # what the judge file says is the run's to say, once
        warnings.simplefilter("ignore")
        offline = isinstance(load_judge_config(args.judge), dict)  # rules, learned: no request, no cache
    return [(args.output, "-o")] + ([] if offline else [_cache(args)])


def _judge_answers(args: argparse.Namespace) -> Locks:
    asks = any(j != "em" for j in args.judge or ["em"])
    return [(args.output, "-o")] + ([_cache(args)] if asks else [])


def _coverage(args: argparse.Namespace) -> Locks:
    return [_cache(args)] if args.judge else []


def _env(args: argparse.Namespace) -> Locks:
    command = getattr(args, "env_command", None)
    if command == "run":
        specs = [v.strip() for item in args.agent or [] for v in item.split(",")]
        return [(args.output, "-o")] + ([_cache(args)] if any(s.split(":")[0] == "llm" for s in specs) else [])
    if command == "theta":
        return [_cache(args)] if str(args.agent).split(":")[0] == "llm" else []
    if command == "synth-beliefs":
        return [_cache(args)] if getattr(args, "judge", None) and not getattr(args, "no_cache", False) else []
    return []


def _cache_command(args: argparse.Namespace) -> Locks:
    return [_cache(args)] if args.cache_command == "clear" else []


#: Each command's locks, by the command's name.
LOCKS: dict[str, Callable[[argparse.Namespace], Locks]] = {
    "annotate": _annotate,
    "judge-answers": _judge_answers,
    "coverage": _coverage,
    "env": _env,
    "cache": _cache_command,
}


def run_locks(args: argparse.Namespace) -> Locks:
    """The ``(path, option)`` pairs the command of ``args`` locks for its run."""
    find = LOCKS.get(getattr(args, "command", None) or "")
    return find(args) if find is not None else []
