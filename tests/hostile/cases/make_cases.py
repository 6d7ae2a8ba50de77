"""Write the small malformed inputs of ``test_malformed_cases.py`` into this directory, one file per case.

    python tests/hostile/cases/make_cases.py

Run it after changing a case; the test checks the files match the builders.
Inputs over 64 KiB (10 MB strings, 10,000 steps, deep nesting) are built by
the test itself and never stored.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parents[2])]

from test_malformed_cases import CASES, SMALL  # noqa: E402


def main() -> int:
    for old in HERE.glob("*.jsonl"):
        old.unlink()
    n = 0
    for case in CASES:
        data = case.build()
        if data is not None and len(data) <= SMALL:
            (HERE / f"{case.name}.jsonl").write_bytes(data)
            n += 1
    print(f"wrote {n} cases to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
