"""seekbench: process-level evaluation of LLM search agents.

Data flows one way: ``seekbench.traces`` (formats, importers, step tables) ->
``seekbench.labels`` (annotation sets) -> ``seekbench.metrics`` -> ``seekbench.report``.
"""

from ._errors import SeekbenchError, SeekbenchWarning, UndefinedMetricWarning, UserInputError
from ._version import SCHEMA_VERSION, __version__

__all__ = [
    "SCHEMA_VERSION",
    "SeekbenchError",
    "SeekbenchWarning",
    "UndefinedMetricWarning",
    "UserInputError",
    "__version__",
]
