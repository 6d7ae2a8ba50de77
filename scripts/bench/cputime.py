"""Run a command and print its wall time and the CPU time of it and every process it started.

``/usr/bin/time`` counts only the processes the command waits for; seekbench's worker processes
are started by a fork server and are never waited for by the command, so their CPU is missing
there. This script becomes a child subreaper (Linux), so orphaned workers are reaped here and
their CPU counted.

Usage::

    python scripts/bench/cputime.py OUT.json seekbench metrics corpus_1x.jsonl --json

prints one line: wall seconds, user and system CPU seconds of all processes, the largest peak
RSS among them, and the load average before and after.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def _load() -> list[str]:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[:3]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    before = _load()
    t0 = time.perf_counter()
    with open(argv[0], "w") as out:
        code = subprocess.call(argv[1:], stdout=out, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    while True:  # the orphaned workers, re-parented to this process
        try:
            os.wait()
        except ChildProcessError:
            break
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"{wall:.2f} s wall, {r.ru_utime:.2f} s user + {r.ru_stime:.2f} s sys (all processes), "
        f"largest peak RSS {r.ru_maxrss / 1024:.0f} MiB, exit {code}, load before {before} after {_load()}"
    )
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
