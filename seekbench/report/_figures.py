"""The report's figures. matplotlib is imported lazily; every function takes ``ax=None`` and returns the Axes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._figure_text import figure_text

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes


#: The turn the report's tables read the recovery curve at (ERF(8)); figures draw at least this far.
ERF_HORIZON = 8


def _axes(ax, figsize=(6.4, 4.0)):
    """``ax``, or the Axes of a new figure of ``figsize`` inches."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def wrap_name(name: object, width: int = 20) -> str:
    r"""A name whole, broken into lines of about ``width`` characters after ``-``, ``_``, ``/`` or a space,
    and escaped by :func:`~seekbench._figure_text.figure_text` so matplotlib draws it as written.

    >>> wrap_name("SearchR1-nq_hotpotqa_train-qwen2.5-7b-em-ppo-v0.3")
    'SearchR1-nq_\nhotpotqa_train-\nqwen2.5-7b-em-ppo-\nv0.3'
    >>> wrap_name("looper"), wrap_name("$$")
    ('looper', '\\$\\$')
    """
    import re

    pieces = re.findall(r"[^-_/ ]*[-_/ ]?", str(name))
    lines, line = [], ""
    for piece in (p for p in pieces if p):
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    return figure_text("\n".join([*lines, line] if line else lines) or str(name))


def legend_outside(ax: Axes, *, where: str = "right", ncol: int = 1, **kw):
    """The Axes' legend placed outside the data area (right of it, or below it), or None without labelled artists.

    ``figure_png`` saves with a tight bounding box, so the legend is part of the image and never covers a curve.
    """
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    if where == "below":
        # Below the tick labels and the x label: measure how far they reach under the Axes, in inches.
        from matplotlib.transforms import ScaledTranslation

        fig: Any = ax.figure
        renderer = fig.canvas.get_renderer()
        tight = ax.get_tightbbox(renderer)
        reach = (ax.get_window_extent(renderer).y0 - tight.y0) / fig.dpi if tight is not None else 0.5
        shift = ScaledTranslation(0, -(reach + 0.08), fig.dpi_scale_trans)
        return ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            bbox_transform=ax.transAxes + shift,
            fontsize=8,
            ncol=ncol,
            frameon=False,
            **kw,
        )
    return ax.legend(
        handles,
        labels,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        fontsize=8,
        frameon=False,
        **kw,
    )


def plot_erf_curves(
    fitters: dict, ax: Axes | None = None, *, ci: bool = True, title: str | None = None, horizon: int = ERF_HORIZON
) -> Axes:
    """ERF curves of several agents on one Axes, each with its CI band, each agent once in the legend (outside).

    Every curve is drawn on to ``max(horizon, last time of any group)``, the time the tables read.
    """
    ax = _axes(ax, figsize=(6.4, 4.0))
    last = max((int(f.curve_.index.max()) for f in fitters.values() if len(f.curve_)), default=0)
    until = max(horizon, last)
    for label, fitter in fitters.items():
        fitter.plot(ax=ax, ci=ci, label=f"{wrap_name(label, 24)} (n={len(fitter.events_)})", until=until)
    ax.set_xlim(0, until + 0.2)
    return curves_axes(ax, _ERF_LABELS, title=title, ylim=(0, 1.02), legend="agent (shaded: 95% CI)")


_ERF_LABELS = {
    "x": "turn",
    "y": "share of traces recovered\n(E = 2 or correct answer)",
    "title": "Evidence recovery function (Aalen-Johansen, 95% CI)",
}


def curves_axes(
    ax: Axes, labels: dict, *, title: str | None = None, ylim: tuple = (0.0, 1.0), legend: str = "agent / belief"
) -> Axes:
    """Label a plot of curves over time: ``labels`` gives ``x``, ``y`` and ``title`` (``title`` overrides it),
    then the y range and the legend, titled ``legend``, right of the data."""
    ax.set_xlabel(labels["x"])
    ax.set_ylabel(labels["y"])
    ax.set_ylim(*ylim)
    ax.set_title(title or labels["title"], fontsize=10)
    legend_outside(ax, title=legend, title_fontsize=8)
    return ax


def plot_rqi_heatmap(table: pd.DataFrame, counts: pd.DataFrame | None = None, ax: Axes | None = None) -> Axes:
    """Heatmap of RQI by reasoning type (rows) x agent (columns); NaN cells are left blank and marked n/a."""
    ax = _axes(ax, figsize=(1.6 + 1.3 * max(len(table.columns), 1), 1.4 + 0.7 * max(len(table.index), 1)))
    values = table.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(table.columns)), [wrap_name(c, 14) for c in table.columns], fontsize=7)
    ax.set_yticks(range(len(table.index)), [figure_text(i) for i in table.index], fontsize=8)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = values[i, j]
            n = "" if counts is None else f"\nn={int(counts.iloc[i, j])}"
            ax.text(
                j,
                i,
                ("n/a" if np.isnan(v) else f"{v:.2f}") + n,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if not np.isnan(v) and v < 0.6 else "black",
            )
    ax.figure.colorbar(im, ax=ax, label="RQI (share of grounded reasoning)")
    ax.set_title("RQI by reasoning type and agent")
    return ax


def plot_calibration(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """P(answer | E = k) per agent (columns) against the ideal policy pi*(k) = 1 iff k = 2.

    The ideal policy is drawn last, as a thick dashed line over each state's bars, and the y axis
    starts below 0 so its segments at 0 stay visible; the legend sits right of the data.
    """
    ax = _axes(ax, figsize=(6.4, 4.0))
    ks = np.arange(3)
    width = 0.8 / max(len(table.columns), 1)
    for j, agent in enumerate(table.columns):
        vals = table[agent].reindex(ks).to_numpy(dtype=float)
        ax.bar(ks - 0.4 + width * (j + 0.5), np.nan_to_num(vals), width=width, label=wrap_name(agent), alpha=0.85)
    ax.hlines([0, 0, 1], ks - 0.45, ks + 0.45, colors="black", linestyles="--", linewidth=2.2, zorder=5)
    ax.plot([], [], color="black", linestyle="--", linewidth=2.2, label="ideal policy\n(answer iff E = 2)")
    ax.set_xticks(ks, ["E = 0", "E = 1", "E = 2"])
    ax.set_ylim(-0.06, 1.08)
    ax.set_ylabel("P(answer | E = k) at decision points")
    ax.set_title("Calibration of the decision to answer", fontsize=10)
    legend_outside(ax)
    return ax


def calibration_is_empty(table: pd.DataFrame) -> bool:
    """True when no group answered at any decision point (episodes that never answer): nothing to calibrate."""
    values = table.to_numpy(dtype=float)
    return values.size == 0 or not bool(np.nansum(values) > 0)


def plot_evidence_prevalence(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Stacked bars: share of decision points at E = 0, 1, 2 per agent (rows); names whole, legend below."""
    ax = _axes(ax, figsize=(6.4, 1.6 + 0.55 * max(len(table), 1)))
    left = np.zeros(len(table))
    colors = ("#d7301f", "#fdae61", "#1a9850")
    labels = [wrap_name(a, 26) for a in table.index]
    for k, color in zip(range(3), colors, strict=True):
        vals = table.get(k, pd.Series(0.0, index=table.index)).to_numpy(dtype=float)
        ax.barh(labels, vals, left=left, color=color, label=f"E = {k}")
        left += vals
    ax.set_xlim(0, 1)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xlabel("share of decision points")
    ax.set_title("Evidence state prevalence", fontsize=10)
    legend_outside(ax, where="below", ncol=3)
    ax.invert_yaxis()
    return ax


#: Said instead of the calibration figure when no trace ever answered.
NO_CALIBRATION = (
    "No calibration figure: no trace answered at any decision point (these traces end without an answer), "
    "so there is no decision to answer to compare with the ideal policy."
)


def process_figures(process) -> dict[str, bytes]:
    """PNG bytes by name of the process figures of a :class:`~seekbench.analysis.ProcessAnalysis`.

    ``erf``, ``erf_km``, ``rqi_heatmap``, ``prevalence``, and ``calibration`` unless no trace
    answered (:func:`calibration_is_empty`; the page shows :data:`NO_CALIBRATION` instead).
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    made = {
        "erf": figure_png(plot_erf_curves(process.erf_fitters)),
        "erf_km": figure_png(
            plot_erf_curves(process.erf_km_fitters, title="1 - Kaplan-Meier, stopped traces censored (overstates)")
        ),
        "rqi_heatmap": figure_png(plot_rqi_heatmap(process.rqi_by_type, process.rqi_by_type_n)),
    }
    if not calibration_is_empty(process.calibration):
        made["calibration"] = figure_png(plot_calibration(process.calibration))
    made["prevalence"] = figure_png(plot_evidence_prevalence(process.prevalence))
    return made


def figure_html(figures: dict, name: str, alt: str, caption: str, *, note: str, caption_class: str = "") -> str:
    """``<figure>`` with the PNG ``figures[name]`` as a data URI, or, when there is no such figure, the note."""
    import base64
    import html

    if name not in figures:
        return f"<p class='note'>{html.escape(note)}</p>"
    data = base64.b64encode(figures[name]).decode("ascii")
    cls = f" class='{caption_class}'" if caption_class else ""
    return (
        f"<figure><img alt='{html.escape(alt, quote=True)}' src='data:image/png;base64,{data}'>"
        f"<figcaption{cls}>{caption}</figcaption></figure>"
    )


def figure_png(ax) -> bytes:
    """The Axes' (or Figure's) figure as PNG bytes, laid out tight; the figure is closed."""
    import io

    import matplotlib.pyplot as plt

    fig = ax.figure if hasattr(ax, "figure") and ax.figure is not None else ax
    fig.tight_layout()
    buf = io.BytesIO()
    # A tight bounding box keeps a legend placed outside the Axes inside the image.
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    return buf.getvalue()
