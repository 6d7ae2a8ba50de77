"""The ``seekbench`` command: a thin shell over the Python API."""

from ._main import main

__all__ = ["main"]
