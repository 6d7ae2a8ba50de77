"""The command sets OpenBLAS's idle-thread wait short (before numpy loads), and leaves a user's own setting."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = "import os, sys, seekbench.cli; print(os.environ['OPENBLAS_THREAD_TIMEOUT'], 'numpy' in sys.modules)"


@pytest.mark.parametrize(("given", "expected"), [(None, "4 False"), ("9", "9 False")])
def test_the_wait_is_set_before_numpy_loads(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if given is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = given
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == expected
