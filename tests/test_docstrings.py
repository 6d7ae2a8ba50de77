"""Every docstring example in seekbench/ runs as a test, so no example can go stale unnoticed.

One test per docstring that has examples, found with :mod:`doctest` over every
module of the package (the same examples ``pytest --doctest-modules seekbench``
would run; done here so the README's test command runs them without pulling the
tests' own ``conftest.py`` files into doctest collection). ``# doctest: +SKIP``
marks the few examples that need an API key or the network.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import seekbench

# Importing __main__ would run the CLI.
_NOT_IMPORTABLE = {"seekbench.__main__"}


def _modules() -> list[str]:
    names = ["seekbench"]
    for info in pkgutil.walk_packages(seekbench.__path__, prefix="seekbench."):
        if info.name not in _NOT_IMPORTABLE:
            names.append(info.name)
    return sorted(names)


def _docstring_tests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = []
    for name in _modules():
        found += [t for t in finder.find(importlib.import_module(name)) if t.examples]
    return sorted(found, key=lambda t: t.name)


DOCTESTS = _docstring_tests()


def test_the_examples_were_found():
    # A walk that silently found nothing would make every docstring test vanish.
    n_examples = sum(len(t.examples) for t in DOCTESTS)
    assert len(DOCTESTS) > 100 and n_examples > 250, (len(DOCTESTS), n_examples)


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_example(test: doctest.DocTest, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    out: list[str] = []
    runner = doctest.DocTestRunner()
    runner.run(test, out=out.append, clear_globs=True)
    result = runner.summarize(verbose=False)
    if result.failed:
        pytest.fail("".join(out), pytrace=False)
