"""Moved to :mod:`seekbench.metrics._reference_steps`.

"Coverage" alone also names conformal coverage (``seekbench.env.conformal``) and the
coverage judge, so the module is named for what it measures. This name stays only for
``_coverage_judge.py``, which another change is moving next to the answer judges; import
``SkeletonStep`` and ``public_history`` from :mod:`seekbench.metrics` and delete this file.
"""

from ._reference_steps import SkeletonStep, public_history

__all__ = ["SkeletonStep", "public_history"]
