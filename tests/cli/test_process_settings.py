"""The command's process settings (``tune_process``): made by ``main()`` before numpy and pyarrow load,
a user's own setting kept, and nothing set by importing seekbench (issue 28: no environment
variables set at import time)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# main() with no command prints the help and returns 2: the settings are made first all the same.
# What was loaded when tune_process ran is noted by a spy around it (main() imports it when it runs).
TUNED = (
    "import os, sys; from seekbench.cli import _tune, main; real = _tune.tune_process; seen = []; "
    "_tune.tune_process = lambda: (seen.extend(m in sys.modules for m in ('numpy', 'pyarrow')), real()); "
    "code = main([]); "
    "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), os.environ.get('ARROW_DEFAULT_MEMORY_POOL'), *seen, code)"
)
IMPORTED = (
    "import os, seekbench, seekbench.cli; "
    "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), os.environ.get('ARROW_DEFAULT_MEMORY_POOL'))"
)
ARROW = (
    "import sys; from seekbench.cli._tune import tune_process; tune_process(); "
    "import pyarrow as pa; print(pa.default_memory_pool().backend_name)"
)
VARS = ("OPENBLAS_THREAD_TIMEOUT", "ARROW_DEFAULT_MEMORY_POOL")


def _run(code: str, **given: str) -> str:
    """The last line ``code`` prints (main([]) prints the help before it)."""
    env = {k: v for k, v in os.environ.items() if k not in VARS} | given
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def test_main_sets_them_before_numpy_and_pyarrow_load():
    assert _run(TUNED).split() == ["4", "system", "False", "False", "2"]


def test_importing_seekbench_sets_nothing():
    assert _run(IMPORTED).split() == ["None", "None"]


def test_a_users_own_settings_win():
    out = _run(TUNED, OPENBLAS_THREAD_TIMEOUT="9", ARROW_DEFAULT_MEMORY_POOL="mimalloc")
    assert out.split()[:2] == ["9", "mimalloc"]


@pytest.mark.parametrize(("given", "expected"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_arrow_allocates_with_the_c_library_unless_told_otherwise(given, expected):
    out = _run(ARROW, **({} if given is None else {"ARROW_DEFAULT_MEMORY_POOL": given}))
    assert out.strip() == expected
