"""The package version and the version of the records it reads and writes (documented together in CHANGELOG.md).

``__version__`` is the package version (semantic versioning; before 1.0 a minor
release may change the Python API). ``SCHEMA_VERSION`` is ``MAJOR.MINOR`` of the
canonical trace and annotation record formats (``seekbench/schemas/``), written
into every record: a new optional field raises MINOR, a change that an older
reader would misread raises MAJOR. A reader refuses records whose version is
newer than its own (:func:`seekbench._schema_version.check_schema_version`).
"""

__version__ = "0.1.0"
SCHEMA_VERSION = "1.0"
