"""Fixtures for the answer-judge tests: answer judges on the local server, tuned for speed."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def answer_cfg():
    """A factory: the shipped ``answer-local`` judge renamed, on its own model id, with test timings."""
    from seekbench.annotate import load_judge_config

    base = load_judge_config("answer-local")

    def make(name: str, **changes):
        return base.with_overrides(name=name, model=f"model-{name}", backoff_base_s=0.01, backoff_max_s=0.05,
                                   timeout_s=2.0, **changes)

    return make
