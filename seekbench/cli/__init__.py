"""The ``seekbench`` command: a thin shell over the Python API."""

import os

# OpenBLAS keeps its idle threads spinning for about 2**28 cycles after each matrix product before
# they sleep. The bootstrap makes a few small products per group, so on a few cores the spinning
# threads take the CPU the resample draws need (about 1 of 5 CPU seconds of the aggregation at 1x).
# 2**4 cycles: they sleep at once. Only the wait changes, never the number of threads (which decides
# the last bits of a product). OpenBLAS reads it as numpy loads, in this process and in the worker
# processes it starts; the user's own setting wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
# Arrow's default allocator (mimalloc) hands freed pages back to the kernel and faults them in again
# for the next batch: measured with huge pages off, 10x Parquet (`seekbench metrics --json`) spent 2.5
# system CPU s against 1.3-1.4 with the C library's allocator, whose peak RSS was also lower (320 vs
# 344-365 MiB); at 100x (huge pages off in numpy only) 50 against 7.5 system CPU s, the same peak RSS
# and user time. It changes where memory comes from, never a number. Arrow reads it when it first
# allocates, in this process and in the workers; the user's own setting wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

from ._huge_pages import disable_huge_pages  # noqa: E402
from ._main import main  # noqa: E402  (after the setting: nothing above imports numpy)

disable_huge_pages()  # before any worker process starts: they inherit it (see _huge_pages)

__all__ = ["main"]
