"""The report's figures. matplotlib is imported lazily; every function takes ``ax=None`` and returns the Axes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes


def _axes(ax, figsize=(6.4, 4.0)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_erf_curves(fitters: dict, ax: Axes | None = None, *, ci: bool = True, title: str | None = None) -> Axes:
    """ERF curves of several agents on one Axes, each with its CI band (fitted estimators draw themselves)."""
    ax = _axes(ax)
    for label, fitter in fitters.items():
        fitter.plot(ax=ax, ci=ci, label=f"{label} (n={len(fitter.events_)})")
    ax.set_xlabel("turn")
    ax.set_ylabel("share of traces recovered (E = 2 or correct answer)")
    ax.set_ylim(0, 1.02)
    ax.set_title(title or "Evidence recovery function (Aalen-Johansen, 95% CI)")
    ax.legend(fontsize=8, loc="lower right")
    return ax


def plot_rqi_heatmap(table: pd.DataFrame, counts: pd.DataFrame | None = None, ax: Axes | None = None) -> Axes:
    """Heatmap of RQI by reasoning type (rows) x agent (columns); NaN cells are left blank and marked n/a."""
    ax = _axes(ax, figsize=(1.6 + 1.3 * max(len(table.columns), 1), 1.4 + 0.7 * max(len(table.index), 1)))
    values = table.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(table.columns)), [_short(c) for c in table.columns], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(table.index)), list(table.index), fontsize=8)
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
    """P(answer | E = k) per agent (columns) against the ideal policy pi*(k) = 1 iff k = 2."""
    ax = _axes(ax)
    ks = np.arange(3)
    width = 0.8 / max(len(table.columns), 1)
    # The ideal policy answers iff E = 2: one black bar-wide marker per state.
    ax.hlines(
        [0, 0, 1], ks - 0.45, ks + 0.45, colors="black", linestyles="--", linewidth=1.5, label="ideal policy", zorder=3
    )
    for j, agent in enumerate(table.columns):
        vals = table[agent].reindex(ks).to_numpy(dtype=float)
        ax.bar(ks - 0.4 + width * (j + 0.5), np.nan_to_num(vals), width=width, label=_short(agent), alpha=0.85)
    ax.set_xticks(ks, ["E = 0", "E = 1", "E = 2"])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("P(answer | E = k) at decision points")
    ax.set_title("Calibration of the decision to answer")
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_evidence_prevalence(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Stacked bars: share of decision points at E = 0, 1, 2 per agent (rows)."""
    ax = _axes(ax)
    left = np.zeros(len(table))
    colors = ("#d7301f", "#fdae61", "#1a9850")
    labels = [_short(a) for a in table.index]
    for k, color in zip(range(3), colors, strict=True):
        vals = table.get(k, pd.Series(0.0, index=table.index)).to_numpy(dtype=float)
        ax.barh(labels, vals, left=left, color=color, label=f"E = {k}")
        left += vals
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of decision points")
    ax.set_title("Evidence state prevalence")
    ax.legend(fontsize=8, ncol=3, loc="lower center", bbox_to_anchor=(0.5, -0.35))
    ax.invert_yaxis()
    return ax


def _short(name: object, width: int = 22) -> str:
    s = str(name)
    return s if len(s) <= width else s[: width - 1] + "…"


def figure_png(ax) -> bytes:
    """The Axes' (or Figure's) figure as PNG bytes, laid out tight; the figure is closed."""
    import io

    import matplotlib.pyplot as plt

    fig = ax.figure if hasattr(ax, "figure") and ax.figure is not None else ax
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
