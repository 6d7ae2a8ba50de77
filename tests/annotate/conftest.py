"""Fixtures for the annotate tests: the local judge tuned for speed, small synthetic traces, a CLI runner.

Every test talks to the real mock server of :mod:`seekbench.testing` over
HTTP with the official ``openai`` client; nothing is patched.
"""

from __future__ import annotations

import pytest
from annotate_support import make_trace


@pytest.fixture(scope="session")
def judge_cfg():
    """The shipped ``local`` judge with test timings: fast backoff, short per-request timeout."""
    from seekbench.annotate import load_judge_config

    return load_judge_config("local").with_overrides(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=1.0,
                                                     poll_interval_s=0.0)


@pytest.fixture
def small_traces():
    return [make_trace(f"t{n}", n) for n in (2, 4, 7, 10, 16, 31)]


