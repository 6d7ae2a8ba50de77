"""``seekbench judge``: the judges available (``list``); offline judges add ``train``."""

from __future__ import annotations

import argparse
import sys

from .._io import dumps
from ._judge_offline import register_cli
from ._judge_plan import register_plan
from ._options import add_command_group, add_json

JUDGE_HELP = "judges: list, train offline judges, plan how many traces humans must label"

JUDGE_DESCRIPTION = (
    "Judges are TOML files in judges/ (or $SEEKBENCH_JUDGES_PATH): an LLM on an "
    "OpenAI-compatible endpoint, or an offline judge (rules, learned)."
)


def register(sub) -> None:
    jsub = add_command_group(sub, "judge", help=JUDGE_HELP, description=JUDGE_DESCRIPTION, dest="judge_command")
    lp = jsub.add_parser("list", help="the judges found, with model, endpoint, prices and whether a key is set")
    add_json(lp, what="one JSON array")
    lp.set_defaults(run=run_list)
    register_cli(jsub)
    register_plan(jsub)


def run_list(args: argparse.Namespace) -> int:
    from ..llm import list_judges

    judges = list_judges()
    if args.json:
        rows = [
            {
                "name": j.name,
                "kind": j.kind,
                "model": j.model,
                "file": str(j.path),
                "endpoint": j.endpoint,
                "api_key_env": j.key_env,
                "api_key_set": j.key_set,
                "published_default": j.published,
                "price_input_per_mtok": j.prices[0] if j.prices else None,
                "price_output_per_mtok": j.prices[1] if j.prices else None,
                **j.extra,
            }
            for j in judges
        ]
        sys.stdout.write(dumps(rows) + "\n")
        return 0
    if not judges:
        print("no judge files found (looked in $SEEKBENCH_JUDGES_PATH, ./judges and the package's judges/)")
        return 0
    width = max(len(j.name) for j in judges)
    for j in judges:
        if j.kind == "openai":
            assert j.prices is not None  # list_judges gives every openai judge its prices
            key = f"${j.key_env} {'set' if j.key_set else 'not set'}"
            price = f"${j.prices[0]:g}/${j.prices[1]:g} per Mtok in/out"
            tail = f"{j.model} @ {j.endpoint}; {price}; {key}" + ("; published default" if j.published else "")
        elif j.kind == "invalid":
            tail = j.extra.get("error", "")
        else:
            tail = "offline, no key needed" + (f"; model {j.model}" if j.model else "")
        print(f"{j.name.ljust(width)}  {j.kind:8s}  {tail}")
    return 0
