"""Plotting for the evidence recovery function (matplotlib imported lazily, inside the functions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from .._figure_text import figure_text

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

_METHOD_NAMES = {"aalen_johansen": "Aalen-Johansen", "km": "Kaplan-Meier (stops censored)"}


def plot_erf(
    fitter,
    ax: Axes | None = None,
    ci: bool = True,
    *,
    raw: bool = False,
    ci_alpha: float = 0.25,
    until: float | None = None,
    **kw: Any,
) -> Axes:
    """Draw a fitted ERF as a right-continuous step curve with its pointwise CI band.

    The band is drawn in the curve's colour and left out of the legend, so a legend names
    each curve once.

    Parameters
    ----------
    fitter : EvidenceRecoveryFitter
        A fitted estimator.
    ax : matplotlib Axes, optional
        Where to draw; default the current Axes (``plt.gca()``), so repeated calls overlay
        curves as in lifelines.
    ci : bool, default True
        Shade the band between ``curve_["lower"]`` and ``curve_["upper"]``.
    raw : bool, default False
        Also draw the raw curve (1/N) sum 1(T_i <= t), dashed.
    until : float, optional
        Draw the curve (and band) on to this time when the fit ends earlier: a cumulative
        incidence keeps its value after the group's last time, as
        :func:`seekbench.metrics.summarize` reads ``recovered_by_8``.
    ci_alpha : float, default 0.25
        Opacity of the band.
    **kw
        Passed to ``Axes.step`` for the curve (``color``, ``label``, ``linewidth``, ...). Without
        ``label`` the fitter's label is used, escaped so that matplotlib draws it as written
        (:func:`seekbench._figure_text.figure_text`); a ``label`` given is drawn as matplotlib reads it.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on; y runs over [0, 1] (share of traces recovered by t).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from seekbench.metrics._erf import EvidenceRecoveryFitter
    >>> ev = pd.DataFrame({"duration": [1, 2, 3], "event": ["recovered", "stopped", "recovered"]})
    >>> ax = plot_erf(EvidenceRecoveryFitter().fit_events(ev, label="agent"))
    >>> [float(y) for y in ax.get_ylim()]
    [0.0, 1.02]
    """
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.gca()
    curve = fitter.curve_
    if until is not None and len(curve) and until > curve.index.max():
        curve = pd.concat([curve, curve.iloc[[-1]].set_axis([until])])
    t = curve.index.to_numpy(dtype=float)
    kw.setdefault("label", figure_text(fitter.label_))
    (line,) = ax.step(t, curve["erf"].to_numpy(), where="post", **kw)
    color = line.get_color()
    if ci:
        ax.fill_between(
            t,
            curve["lower"].to_numpy(),
            curve["upper"].to_numpy(),
            step="post",
            alpha=ci_alpha,
            color=color,
            linewidth=0,
            label=f"_{kw['label']} {100 * (1 - fitter.alpha):g}% CI",
        )
    if raw:
        ax.step(
            t,
            fitter.raw_curve_.reindex(curve.index).ffill().to_numpy(),
            where="post",
            linestyle="--",
            color=color,
            alpha=0.8,
            label=f"{kw['label']} raw (1/N)",
        )
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("step" if fitter.time == "step" else "turn")
    ax.set_ylabel(f"ERF(t), {_METHOD_NAMES.get(fitter.method, fitter.method)}")
    if fitter.curve_.index.dtype.kind == "i":
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return ax
