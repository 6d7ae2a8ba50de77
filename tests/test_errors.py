"""The one exceptions module: what callers of the Python API can catch."""

from __future__ import annotations

import pickle

import pytest

from seekbench._errors import OutputWriteError, UserInputError
from seekbench._limits import InputLimitError
from seekbench.agreement import cohen_kappa_score


def test_user_input_error_is_a_value_error_as_in_scikit_learn():
    # sklearn-style callers write `except ValueError` around a call with bad arguments
    with pytest.raises(ValueError, match="same length, got 2 and 1") as info:
        cohen_kappa_score(["a", "b"], ["a"])
    assert isinstance(info.value, UserInputError)  # and still printed as one line by the CLI


@pytest.mark.parametrize("cls", [UserInputError, InputLimitError, OutputWriteError])
def test_every_user_error_is_a_value_error(cls):
    assert issubclass(cls, ValueError)


def test_one_line_survives_pickling():
    e = UserInputError("bad value", file="t.jsonl", line=3, trace_id="t1", path="$.steps[0]")
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == "t.jsonl:3, trace t1, at $.steps[0]: bad value" == e.one_line()
