"""The one place old spellings of renamed keywords, keys and attributes are accepted (issue 26).

Each old name works for one release with a ``FutureWarning`` naming the new one; the CHANGELOG
lists them under "Deprecated".
"""

from __future__ import annotations

import warnings
from typing import Any

from ._errors import UserInputError

#: Old keyword -> new keyword, for every renamed keyword argument.
RENAMED_KEYWORDS = {"horizon": "overcautious_window"}


def renamed_keyword(where: str, old: str, old_value: Any, new_value: Any, *, default: Any, stacklevel: int = 3) -> Any:
    """The value of a renamed keyword: ``new_value`` unless the old spelling was given (not None).

    The old spelling warns (``FutureWarning``); giving both spellings is a user error.
    """
    if old_value is None:
        return new_value
    new = RENAMED_KEYWORDS[old]
    warnings.warn(
        f"{where}({old}=...) is renamed {new}=...; the old name will be removed in the next release",
        FutureWarning,
        stacklevel=stacklevel,
    )
    if new_value is not default and new_value != default:
        raise UserInputError(f"{where}: pass {new} only (not both {new} and its old name {old})")
    return old_value


def renamed_options(where: str, options: dict, *, stacklevel: int = 3) -> dict:
    """``options`` (keyword arguments) with old keyword spellings replaced by the new ones, each warned once."""
    old = [k for k in options if k in RENAMED_KEYWORDS]
    if not old:
        return options
    out = dict(options)
    for k in old:
        new = RENAMED_KEYWORDS[k]
        warnings.warn(
            f"{where}({k}=...) is renamed {new}=...; the old name will be removed in the next release",
            FutureWarning,
            stacklevel=stacklevel,
        )
        if new in out:
            raise UserInputError(f"{where}: pass {new} only (not both {new} and its old name {k})")
        out[new] = out.pop(k)
    return out


def renamed_attribute(obj: object, old: str, new: str) -> Any:
    """The value of ``obj.new`` read under its old name ``old``, with a ``FutureWarning`` (for a property)."""
    warnings.warn(
        f"{type(obj).__name__}.{old} is renamed {new}; the old name will be removed in the next release",
        FutureWarning,
        stacklevel=3,
    )
    return getattr(obj, new)
