"""Each process trick of ``seekbench`` turned on or off from outside, for ``scripts/bench/tricks.py`` (not a test).

Python imports this module at start-up in every process of a benchmarked run (the command, the
fork server, its workers) when ``scripts/bench/tricks_site`` is on ``PYTHONPATH``. It reads
``SEEKBENCH_BENCH_TRICKS`` (JSON: trick name -> true/false; absent: nothing is done) and:

- turns a trick off by replacing, right after its module is imported, the function or constant
  that makes it (``seekbench`` as it was before issue 28 and as it is after: both names);
- turns on a trick ``seekbench`` may no longer have (``huge_pages_off``, ``early_fork_server``,
  ``forkserver_preload``) by doing it here, so the benchmark compares the same two settings on any
  version (where the code still does it too, doing it twice changes nothing).

The environment tricks (``openblas_timeout``, ``arrow_system_pool``) need nothing here:
tricks.py sets their variables to the trick's value or the library's default.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import sys

_TRICKS = json.loads(os.environ.get("SEEKBENCH_BENCH_TRICKS", "null") or "null")
# Said only to the command's own process (not inherited): where the fork server may be started early.
_DRIVER = os.environ.pop("SEEKBENCH_BENCH_DRIVER", None) is not None


def _noop(*args, **kwargs):
    return None


def _patches() -> dict[str, list[tuple[str, object]]]:
    """module -> (attribute, value) set right after the module runs, for each trick turned off."""
    off = {name for name, on in _TRICKS.items() if not on}
    out: dict[str, list[tuple[str, object]]] = {}

    def add(module: str, attr: str, value: object) -> None:
        out.setdefault(module, []).append((attr, value))

    if "paused_gc" in off:
        add("seekbench._io", "paused_gc", contextlib.nullcontext)
    if "forkserver_preload" in off:
        add("seekbench._workers", "PRELOAD", [])
    if "huge_pages_off" in off:
        add("seekbench.cli._huge_pages", "disable_huge_pages", _noop)  # before issue 28
        add("seekbench.cli._tune", "disable_huge_pages", _noop)
    if "early_fork_server" in off:
        add("seekbench.cli._scale", "start_workers_early", _noop)  # before issue 28
    return out


class _After(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of the modules to patch so the patch follows their code."""

    def __init__(self, patches: dict[str, list[tuple[str, object]]]) -> None:
        self.patches = patches

    def find_spec(self, name, path, target=None):
        if name not in self.patches:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run, sets = spec.loader.exec_module, self.patches[name]

        def exec_module(module):
            run(module)
            for attr, value in sets:
                setattr(module, attr, value)

        spec.loader.exec_module = exec_module
        return spec


def _huge_pages_off() -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE, inherited by children


#: What the fork server imported before issue 28 (``seekbench._workers.PRELOAD``).
_PRELOAD = ["seekbench.scale._work", "seekbench.metrics"]


def _preload() -> None:
    """The fork server (whenever it starts) imports what the workers need, once, before forking them."""
    import multiprocessing

    multiprocessing.set_forkserver_preload(_PRELOAD)


def _start_fork_server() -> None:
    """The fork server started now, importing what the workers need while the command imports the same."""
    from multiprocessing import forkserver

    forkserver.ensure_running()


if _TRICKS:
    sys.meta_path.insert(0, _After(_patches()))
    if _TRICKS.get("huge_pages_off"):
        _huge_pages_off()
    if _TRICKS.get("forkserver_preload") and _DRIVER:
        _preload()
    if _TRICKS.get("early_fork_server") and _DRIVER:
        _start_fork_server()
