"""Scale: metrics over corpora larger than memory, on this machine's cores or on a Ray cluster.

The input is cut into fragments (:func:`seekbench.traces.plan_fragments`); each is read in
chunks of complete traces (:func:`seekbench.traces.iter_fragment_tables`) and every chunk is
reduced by one function to a row per trace; the driver merges the rows in input order
(:func:`reduce_traces`). The ``local`` engine runs fragments on ``jobs`` processes, the
``ray`` engine as Ray Data tasks; both give the same rows.
"""

from ._local import default_jobs, local_workers
from ._ray import NO_RAY, ray_available
from ._reduce import ENGINES, Reduction, merge, reduce_traces
from ._work import FragmentResult, FragmentWork

__all__ = [
    "ENGINES",
    "FragmentResult",
    "FragmentWork",
    "NO_RAY",
    "Reduction",
    "default_jobs",
    "local_workers",
    "merge",
    "ray_available",
    "reduce_traces",
]
