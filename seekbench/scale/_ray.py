"""The Ray engine: the same fragment work as Ray Data tasks on a Ray cluster (or a local Ray instance).

The fragments become a Ray Data dataset of one row each, mapped by :class:`FragmentWork`;
the results come back to the driver, which merges them exactly as the local engine's.
Workers open the fragments' files themselves, so on a cluster the inputs must be
readable from every node: object storage (``s3://...``, ``gs://...``) or a shared file system.
``ray.init()`` joins the cluster named by ``RAY_ADDRESS`` when it is set, else starts a local instance.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Iterator, Sequence

from .._errors import UserInputError
from ..traces import Fragment
from ._work import FragmentResult, FragmentWork

#: The one line a missing Ray install gets (exit code 2).
NO_RAY = "--engine ray needs Ray Data: pip install 'seekbench[ray]'"


def ray_available() -> bool:
    try:
        import ray.data  # noqa: F401
    except ImportError:
        return False
    return True


class _Task:
    """One dataset row (a pickled fragment) to one row holding the pickled result."""

    def __init__(self, work: FragmentWork) -> None:
        self.work = work

    def __call__(self, row: dict) -> dict:
        result = self.work(pickle.loads(row["fragment"]))
        return {"order": row["order"], "result": pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)}


def run_ray(fragments: Sequence[Fragment], work: FragmentWork) -> Iterator[FragmentResult]:
    """The results of ``work`` on each fragment, computed by Ray tasks, in fragment order."""
    if not ray_available():
        raise UserInputError(NO_RAY)
    import ray
    import ray.data

    if not ray.is_initialized():
        ray.init(logging_level=logging.ERROR, log_to_driver=False)
    items = [{"order": f.order, "fragment": pickle.dumps(f)} for f in fragments]
    if not items:
        return
    # Ray Data logs its progress (and that progress bars are off) on stderr, between our notes.
    logger = logging.getLogger("ray.data")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map(_Task(work))
        del items
        done: dict[int, FragmentResult] = {}
        want = 0
        for row in ds.iter_rows():
            done[int(row["order"])] = pickle.loads(row["result"])
            while want in done:  # in fragment order, holding only what arrived early
                yield done.pop(want)
                want += 1
    finally:
        logger.setLevel(level)
    if want != len(fragments):  # a fragment lost would make the totals silently short: say so
        raise RuntimeError(f"Ray returned {want} of {len(fragments)} fragments in order (then {sorted(done)[:5]})")
