"""ERF plotting: renders with Agg, returns the Axes, draws the CI band; computing never imports matplotlib."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection

from seekbench.metrics._erf import EvidenceRecoveryFitter
from seekbench.metrics._erf_plot import plot_erf

EV = pd.DataFrame({"duration": [0, 1, 1, 2, 3, 3, 4, 5],
                   "event": ["recovered", "recovered", "stopped", "recovered", "cut_off", "stopped", "recovered",
                             "cut_off"]})


def _bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def test_plot_renders_png_with_ci_band(tmp_path):
    f = EvidenceRecoveryFitter().fit_events(EV, label="agent A")
    fig, ax = plt.subplots()
    out = f.plot(ax=ax)
    assert out is ax and isinstance(out, Axes)
    assert len(_bands(ax)) == 1
    assert [ln.get_label() for ln in ax.get_lines()] == ["agent A"]
    assert ax.get_xlabel() == "turn" and ax.get_ylim() == (0.0, 1.02)
    path = tmp_path / "erf.png"
    fig.savefig(path)
    plt.close(fig)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_plot_without_ax_uses_current_axes_and_overlays():
    plt.close("all")
    a = EvidenceRecoveryFitter().fit_events(EV, label="a")
    b = EvidenceRecoveryFitter(method="km").fit_events(EV, label="b")
    ax1 = a.plot()
    ax2 = b.plot(ci=False, color="red")
    assert ax1 is ax2 and len(ax1.get_lines()) == 2 and len(_bands(ax1)) == 1
    assert "Kaplan-Meier" in ax1.get_ylabel()
    plt.close("all")


def test_plot_raw_curve_option():
    fig, ax = plt.subplots()
    plot_erf(EvidenceRecoveryFitter().fit_events(EV, label="a"), ax=ax, ci=False, raw=True)
    assert [ln.get_label() for ln in ax.get_lines()] == ["a", "a raw (1/N)"] and not _bands(ax)
    plt.close(fig)


def test_computing_does_not_import_matplotlib():
    code = ("import sys, pandas as pd\n"
            "from seekbench.metrics._erf import EvidenceRecoveryFitter\n"
            "from seekbench.metrics import compare_recovery\n"
            "ev = pd.DataFrame({'duration': [1, 2, 2], 'event': ['recovered', 'stopped', 'cut_off']})\n"
            "f = EvidenceRecoveryFitter().fit_events(ev); f.summary\n"
            "EvidenceRecoveryFitter(method='km').fit_events(ev)\n"
            "compare_recovery({'a': ev, 'b': ev})\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
