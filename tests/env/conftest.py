"""Fixtures for the seeking-environment tests: small corpora, the default corpus, an ``env`` CLI runner."""

from __future__ import annotations

import types

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
def env_cli(capsys):
    """Run ``seekbench ARGS`` in-process."""
    from seekbench.cli import _main

    def call(*args):
        try:
            code = _main.main([str(a) for a in args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
        cap = capsys.readouterr()
        return types.SimpleNamespace(code=code, out=cap.out, err=cap.err)

    return call
