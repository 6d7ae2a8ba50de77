"""Fixtures for the hostile-input tests: the local judge tuned for speed."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def judge_cfg():
    """The shipped ``local`` judge with test timings (fast backoff, short timeout), as in tests/annotate."""
    from seekbench.annotate import load_judge_config

    return load_judge_config("local").with_overrides(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=2.0,
                                                     poll_interval_s=0.0)


@pytest.fixture(scope="session")
def template(judge_cfg):
    from seekbench.annotate import PromptTemplate

    return PromptTemplate.load(judge_cfg.prompt_path, version=judge_cfg.prompt_version)
