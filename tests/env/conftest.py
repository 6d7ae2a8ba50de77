"""Fixtures for the seeking-environment tests: small corpora, the default corpus, an ``env`` CLI runner."""

from __future__ import annotations


import pytest
from _env_helpers import make_document


@pytest.fixture
def pets_doc() -> dict:
    return make_document()


@pytest.fixture(scope="session")
def default_docs() -> list[dict]:
    from seekbench.env import default_corpus

    return default_corpus().documents


@pytest.fixture
def env_cli(cli):
    """``seekbench ARGS`` in-process (the shared fixture of tests/conftest.py)."""
    return cli
