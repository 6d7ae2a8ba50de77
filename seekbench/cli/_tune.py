"""The command's process settings, in one place: :func:`tune_process`, called first by ``main()``.

Each setting is a speed trick kept because it buys at least 10% of the wall time of
``seekbench metrics`` on the 1x corpus (issue 28); the figure beside each comes from
``scripts/bench/tricks.py`` (results in ``scripts/bench/results/tricks.md``), which turns each
one off in turn. None changes a number: only where memory comes from or how threads wait.
Each holds for this process and the worker processes it starts (they inherit the
environment and the flag), and a user's own environment setting wins. Nothing is set when
``seekbench`` is imported: a program using the Python API keeps its process as it is.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: ``prctl`` option (linux/prctl.h): no transparent huge pages for this process and its children.
PR_SET_THP_DISABLE = 41


def tune_process() -> None:
    """Make the command's process settings; before numpy and pyarrow load (they read them then)."""
    # OpenBLAS's idle threads spin for 2**28 cycles after each matrix product before sleeping, taking
    # the CPU the bootstrap's resample draws need; 2**4: they sleep at once (the number of threads,
    # which decides the last bits of a product, is unchanged).
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    # Arrow's default allocator (mimalloc) gives freed pages back to the kernel and faults them in
    # again for the next batch; the C library's keeps them.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # The kernel zeroes (and may compact memory for) each 2 MiB huge page numpy and Arrow touch.
    disable_huge_pages()


def disable_huge_pages() -> bool:
    """Ask Linux for no transparent huge pages in this process and its children (``PR_SET_THP_DISABLE``,
    inherited by the fork server and its workers); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc symbol: the kernel's default stays
        return False
