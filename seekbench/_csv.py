"""Tables as CSV text that a spreadsheet opens as data: no cell of text is run as a formula.

Every CSV file seekbench writes (the report's and the agreement report's ``tables/*.csv``, the
conformal report's, ``evidence --per-trace``, ``judge-answers --decisions``) goes through
:func:`csv_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: What a spreadsheet reads as the start of a formula (OWASP, CSV Injection): = + - @, tab, carriage return.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """One cell as written: text that a spreadsheet would run gets a leading ``'``; anything else is unchanged.

    A list, tuple or dict is written as its ``str``. Numbers are not text: ``-0.25`` as a float
    stays a number; the string ``"-0.25"`` is text and is prefixed like any other.

    Examples
    --------
    >>> csv_cell('=HYPERLINK("http://x")'), csv_cell("-2+3"), csv_cell("@SUM(A1)"), csv_cell("\\tx")
    ('\\'=HYPERLINK("http://x")', "'-2+3", "'@SUM(A1)", "'\\tx")
    >>> csv_cell("agent-a"), csv_cell(-0.25), csv_cell(None), csv_cell(["-x"])
    ('agent-a', -0.25, None, "['-x']")
    """
    if isinstance(value, (list, tuple, dict)):
        value = str(value)
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_text(table: pd.DataFrame) -> str:
    """``table`` as CSV text (no index): every text cell and column name through :func:`csv_cell`.

    Following the OWASP CSV Injection guidance, a text cell beginning with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return is written with a leading single quote, which a spreadsheet
    shows as text and does not run. Only columns of text (object, string or categorical dtype) are
    changed: numeric, boolean and date columns are written as they are, so a negative number stays
    a number. A cell holding the separator, a quote or a line break is
    quoted as RFC 4180 says (pandas' minimal quoting), so no cell can end early and start
    another; other cells are not quoted.

    Parameters
    ----------
    table : DataFrame

    Returns
    -------
    str
        What ``table.to_csv(index=False)`` gives, with the text cells made inert.

    Examples
    --------
    >>> import pandas as pd
    >>> print(csv_text(pd.DataFrame({"agent": ["=1+1", "b"], "diff": [-0.25, 0.5]})), end="")
    agent,diff
    '=1+1,-0.25
    b,0.5
    """
    from pandas.api.types import is_object_dtype, is_string_dtype

    out = table.copy(deep=False)
    out.columns = [csv_cell(c) for c in out.columns]
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if is_object_dtype(col.dtype) or is_string_dtype(col.dtype) or col.dtype == "category":
            out.isetitem(i, col.astype(object).map(csv_cell))
    return out.to_csv(index=False)
