"""The one exceptions module: user errors, and typed warnings for undefined values."""

from __future__ import annotations

import unicodedata

#: Exit codes of every command (README "Exit codes", ``seekbench --help``).
EXIT_OK = 0
#: A user error: one line naming the file, line, trace id and field; nothing was written.
EXIT_USER_ERROR = 2
#: Done with failures: some traces, answers, episodes or estimates could not be judged or run;
#: the output is valid and a re-run of the same command resumes.
EXIT_FAILURES = 3


class SeekbenchError(Exception):
    """Base class of every error seekbench raises on purpose."""


class UserInputError(SeekbenchError, ValueError):
    """Bad input from the user: printed as one line by the CLI, exit code 2.

    A ``ValueError``, as scikit-learn's validation errors are, so callers of the Python API
    that catch ``ValueError`` for bad arguments catch this too.

    The message names the file, the line, the trace id and the JSON path of
    the offending field when they are known, then what is wrong and what to do.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        trace_id: str | None = None,
        path: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.trace_id = trace_id
        self.path = path
        super().__init__(self.one_line())

    def __reduce__(self):
        # Pickled whole (file, line, ...), not as its one line: errors come back from worker processes.
        return (_user_input_error, (type(self), self.message, self.file, self.line, self.trace_id, self.path))

    def one_line(self) -> str:
        where = []
        if self.file is not None:
            where.append(f"{self.file}:{self.line}" if self.line is not None else str(self.file))
        if self.trace_id is not None:
            where.append(f"trace {self.trace_id}")
        if self.path is not None:
            where.append(f"at {self.path}")
        prefix = ", ".join(where) + ": " if where else ""
        return _printable(prefix + self.message)


def _user_input_error(cls, message, file, line, trace_id, path) -> UserInputError:
    return cls(message, file=file, line=line, trace_id=trace_id, path=path)


class OutputWriteError(UserInputError):
    """An output could not be written mid-run (a full disk, a file size limit): one line, and the exit
    code says whether the run's output so far is valid and resumable (3, a judge run) or not (2).

    What was there before is intact either way: an atomic write leaves the earlier file, a failed append
    is cut back to the last whole record, a SQLite commit that fails is rolled back.
    """

    def __init__(self, message: str, *, file: str | None = None, resumable: bool = False) -> None:
        self.resumable = resumable
        super().__init__(message, file=file)

    def __reduce__(self):
        return (_output_write_error, (self.message, self.file, self.resumable))


def _output_write_error(message, file, resumable) -> OutputWriteError:
    return OutputWriteError(message, file=file, resumable=resumable)


def _printable(text: str) -> str:
    """One terminal line: newlines become spaces; other control, format and separator characters
    (ESC, CR, U+2028, ...) are escaped so a hostile trace id cannot rewrite the terminal."""
    out = []
    for ch in text.replace("\r\n", " ").replace("\n", " "):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


class UndefinedMetricWarning(UserWarning):
    """A metric could not be computed (no labeled steps, ACC = 0, ...); NaN was returned."""


class SeekbenchWarning(UserWarning):
    """Something was skipped or normalised and the user should know."""
