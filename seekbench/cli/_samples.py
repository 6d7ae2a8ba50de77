"""``seekbench samples``: copy the shipped sample files into a folder, under the names the docs use."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._errors import UserInputError
from .._io import check_output, write_bytes
from .._resources import sample_path
from ._options import add_command, add_output

#: File written -> (shipped sample, what it is). The names are those of the README's Quickstart and
#: docs/getting-started.md, whose commands then run as written in that folder.
FILES: dict[str, tuple[str, str]] = {
    "traces.jsonl": ("traces", "48 canonical traces of four agents, a human's step labels inline"),
    "run.jsonl": ("search_r1", "6 traces as a Search-R1 run writes them (tagged text, no step labels)"),
    "release.jsonl": ("release", "6 traces in the SeekBench release format, step labels inline"),
}

SAMPLES_HELP = "write the shipped sample files into a folder, to try the commands of the docs"

SAMPLES_DESCRIPTION = (
    "Write the sample files shipped with seekbench (fictional questions and agents, written for "
    "this project) into a folder under the names the Quickstart uses: "
    + "; ".join(f"{name}: {what}" for name, (_, what) in FILES.items())
    + ". A file of those names already there is never replaced: the command stops before writing."
)


def register(sub) -> None:
    p = add_command(sub, "samples", help=SAMPLES_HELP, description=SAMPLES_DESCRIPTION)
    add_output(p, required=False, directory=True, metavar="DIR", help="folder to write into (default: this folder)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    folder = check_output(args.output or ".", directory=True)
    there = [name for name in FILES if (folder / name).exists()]
    if there:
        raise UserInputError(
            f"{', '.join(there)} already there; nothing was written (remove {'it' if len(there) == 1 else 'them'} "
            "or write into another folder with -o DIR)",
            file=str(folder),
        )
    for name, (which, _) in FILES.items():
        write_bytes(folder / name, Path(sample_path(which)).read_bytes())
        print(f"wrote {folder / name}: {FILES[name][1]}")
    return 0
