"""The one place that finds the files shipped inside the package.

Schemas, judge files with their prompts and the learned model, and the sample
data are package data: they live under ``seekbench/`` and are found with
:mod:`importlib.resources`, so a wheel installed anywhere finds them exactly as
a source checkout does. Nothing else in seekbench builds a path to shipped
files; user judge files found on ``$SEEKBENCH_JUDGES_PATH`` or in ``./judges``
take precedence over the shipped ones (see :func:`seekbench.annotate.judge_dirs`).

Layout inside the package::

    schemas/<name>.schema.json          trace, annotation, judge_output, corpus
    judges/<name>.toml                  shipped judge files
    judges/prompts/<name>.md            prompt templates
    judges/models/learned-seekbench190.json   the learned offline judge's model
    data/sample_traces.jsonl            48 sample traces with inline labels
    data/sample_human.jsonl             the same labels as an annotation set
    data/sample_second_annotator.jsonl  a second rater's annotation set
    data/sample_search_r1.jsonl         6 of the sample traces as a Search-R1 run (no labels)
    data/sample_release.jsonl           6 others in the SeekBench release format, labels inline
"""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

__all__ = ["judges_dir", "prompt_path", "resource_path", "sample_path", "schema_path"]

_PACKAGE = "seekbench"
_SAMPLES = {
    "traces": "sample_traces.jsonl",
    "human": "sample_human.jsonl",
    "second": "sample_second_annotator.jsonl",
    "search_r1": "sample_search_r1.jsonl",
    "release": "sample_release.jsonl",
}

# Holds files that importlib had to extract (a zipped install) until the interpreter exits.
_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def resource_path(*parts: str) -> Path:
    """A real filesystem path to a file or directory shipped in the package.

    Parameters
    ----------
    *parts : str
        Path components below ``seekbench/``, e.g. ``"schemas", "trace.schema.json"``.

    Returns
    -------
    Path
        The path; it may not exist if ``parts`` names nothing shipped.

    Examples
    --------
    >>> resource_path("schemas", "trace.schema.json").is_file()
    True
    """
    node: Traversable = resources.files(_PACKAGE).joinpath(*parts)
    if isinstance(node, Path):  # an ordinary install or checkout: already on disk
        return node
    # A zipped install: extract once, keep it for the life of the process.
    return _extracted.enter_context(resources.as_file(node))


def schema_path(name: str) -> Path:
    """Path of the shipped JSON Schema ``name`` (``trace``, ``annotation``, ``judge_output``, ``corpus``).

    Examples
    --------
    >>> schema_path("annotation").name
    'annotation.schema.json'
    """
    return resource_path("schemas", f"{name}.schema.json")


def judges_dir() -> Path:
    """The directory of shipped judge files (searched after the user's own directories).

    Examples
    --------
    >>> (judges_dir() / "rules.toml").is_file()
    True
    """
    return resource_path("judges")


def prompt_path(name: str) -> Path:
    """Path of a shipped prompt template, by name without ``.md`` (e.g. ``"coverage_v1"``).

    Examples
    --------
    >>> prompt_path("step_labels_v1").is_file()
    True
    """
    return resource_path("judges", "prompts", f"{name}.md")


def sample_path(which: str = "traces") -> Path:
    """Path of a shipped sample file: ``"traces"``, ``"human"``, ``"second"`` (the second rater),
    ``"search_r1"`` (a Search-R1 run) or ``"release"`` (the SeekBench release format).

    Examples
    --------
    >>> sample_path("human").name
    'sample_human.jsonl'
    """
    if which not in _SAMPLES:
        raise ValueError(f"unknown sample {which!r}; use one of {', '.join(_SAMPLES)}")
    return resource_path("data", _SAMPLES[which])
