"""The command's process settings, made before numpy and pyarrow load, and a user's own setting kept:
OpenBLAS's idle-thread wait short, and Arrow's allocator the C library's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = "import os, sys, seekbench.cli; print(os.environ['OPENBLAS_THREAD_TIMEOUT'], 'numpy' in sys.modules)"
ARROW = (
    "import sys, seekbench.cli; loaded = 'pyarrow' in sys.modules; import pyarrow as pa; "
    "print(pa.default_memory_pool().backend_name, loaded)"
)


@pytest.mark.parametrize(("given", "expected"), [(None, "4 False"), ("9", "9 False")])
def test_the_wait_is_set_before_numpy_loads(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if given is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = given
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == expected


@pytest.mark.parametrize(("given", "expected"), [(None, "system False"), ("mimalloc", "mimalloc False")])
def test_arrow_allocates_with_the_c_library_unless_told_otherwise(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if given is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = given
    out = subprocess.run([sys.executable, "-c", ARROW], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == expected
