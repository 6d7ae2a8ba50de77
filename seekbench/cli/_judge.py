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
    lp = jsub.add_parser(
        "list",
        help="the judges found, with model, endpoint, prices, whether a key is set, and each judge's "
        "validation record (Cohen's kappa with human labels per field: type = reasoning_type, ground = "
        "grounding of reasoning steps, search = judge-decided search_type, clar = clarity, suff = sufficiency)",
    )
    add_json(lp, what="one JSON array")
    lp.set_defaults(run=run_list)
    register_cli(jsub)
    register_plan(jsub)


def _features(kind: str) -> str | None:
    """The feature set a judge of ``kind`` labels with here (learned: with MiniLM when the extra is installed)."""
    if kind != "learned":
        return None
    from ..annotate.offline import LEXICAL, WITH_MINILM, embedding_available

    return WITH_MINILM if embedding_available() else LEXICAL


def run_list(args: argparse.Namespace) -> int:
    from ..llm import compact_kappas, list_judges, load_validation

    judges = list_judges()
    records = {j.name: (load_validation(j.path) if j.kind != "invalid" else None) for j in judges}
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
                "validation": records[j.name],
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
        if j.kind != "invalid" and not j.extra.get("judges") == "answers":  # answer judges label no steps
            print(f"{''.ljust(width)}  {'':8s}  {compact_kappas(records[j.name], _features(j.kind))}")
    return 0
