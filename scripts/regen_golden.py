#!/usr/bin/env python3
"""Rewrite the golden outputs under ``tests/golden/`` from the current code.

The golden test (``tests/golden/test_golden.py``) pins the exact numbers of
``seekbench metrics --json``, ``seekbench agree --json`` and the CSV tables of
``seekbench report``, on the bundled sample and on the 190 shared human-labeled
traces (``../shared/data/seekbench_human_190.jsonl``, read in place, never copied).
The cases, and the volatile fields they drop (file paths echoed in ``inputs``),
are defined once in ``tests/golden/golden_cases.py``.

Regenerate ONLY in a commit that changes a number on purpose (a spec fix), and
say in that commit which numbers moved and why; a refactor must leave them alone.

Usage (from the repository root, with this checkout first on the path)::

    PYTHONPATH=$PWD python scripts/regen_golden.py            # every case
    PYTHONPATH=$PWD python scripts/regen_golden.py --dataset sample
    PYTHONPATH=$PWD python scripts/regen_golden.py --check    # compare only, exit 1 on a difference
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "golden"))

from golden_cases import CASES, GOLDEN_DIR, SHARED_DATA, compare_file, golden_files, run_case  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", choices=["sample", "shared190"], help="only this dataset's cases")
    p.add_argument("--check", action="store_true", help="compare with the stored files; write nothing")
    args = p.parse_args(argv)
    cases = [c for c in CASES if args.dataset in (None, c.dataset)]
    if any(c.dataset == "shared190" for c in cases) and not SHARED_DATA.exists():
        print(f"regen_golden: {SHARED_DATA} not found; pass --dataset sample", file=sys.stderr)
        return 2
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            fresh = run_case(case, Path(tmp))
            if args.check:
                stored = golden_files(case)
                diffs = [f"missing or extra files: {sorted(set(stored) ^ set(fresh))}"] if set(stored) != set(fresh) \
                    else [d for n in fresh for d in compare_file(n, stored[n], fresh[n])]
                failed |= bool(diffs)
                print(f"{case.dataset}/{case.name}: " + ("ok" if not diffs else f"{len(diffs)} differences"))
                for d in diffs[:20]:
                    print("   ", d)
                continue
            target = GOLDEN_DIR / case.dataset
            if case.command == "report":  # a table that disappeared must not linger
                for old in (target / case.name).glob("*.csv"):
                    old.unlink()
            for name, text in fresh.items():
                path = target / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            print(f"wrote {target / case.name} ({len(fresh)} file{'s' * (len(fresh) != 1)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
