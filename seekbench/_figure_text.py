r"""Text from the input handed to matplotlib so that it is drawn as written, never parsed as mathtext.

Agent, dataset, rater, estimator and topic names, label values and anything else the input names
reach titles, tick labels, legends and annotations through :func:`figure_text` (in the report's
figures, often by way of ``wrap_name``, which ends with it; in an ERF plot, the fitter's label).
Text seekbench writes itself needs no escaping. No matplotlib import here: this is string work.
"""

from __future__ import annotations

import re

#: Put before a label that begins with ``_``, which a legend would otherwise leave out (matplotlib's
#: rule for artists it hides); the zero-width space draws nothing.
_SHOWN = "\u200b"
#: Whitespace other than a line break, which fonts have no glyph for: drawn as a space.
_SPACE = re.compile(r"[\t\r\v\f]")


def figure_text(value: object) -> str:
    r"""``str(value)`` escaped for matplotlib's text: every ``$`` as ``\$``, a leading ``_`` kept visible, a tab
    or carriage return as a space.

    matplotlib parses a string holding an even number of unescaped ``$`` as mathtext, so a
    name such as ``$\x$`` or ``$$`` raised ``ValueError`` when the figure was drawn. With every
    ``$`` escaped the string has none unescaped: matplotlib draws it as plain text and shows each
    ``\$`` as ``$``, so the name appears exactly as written (a backslash of the name, as in
    ``\frac{``, is drawn as it is). A label beginning with ``_`` gets a zero-width space before
    it, since matplotlib leaves such labels out of legends. A tab, carriage return, vertical tab
    or form feed is drawn as a space (the font has no glyph for it).

    Escape once: the result is for matplotlib only, and escaping it again would show the
    backslashes.

    Examples
    --------
    >>> figure_text(r"$\x$"), figure_text("$$"), figure_text(r"\frac{"), figure_text("agent-a")
    ('\\$\\x\\$', '\\$\\$', '\\frac{', 'agent-a')
    >>> figure_text("_^{}"), figure_text("a\tb")
    ('\u200b_^{}', 'a b')
    """
    s = _SPACE.sub(" ", str(value)).replace("$", r"\$")
    return _SHOWN + s if s.startswith("_") else s
