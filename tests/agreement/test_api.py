"""The agreement package's public API, and what it may import (spec: one-way data flow)."""

import subprocess
import sys

from seekbench import agreement


def test_public_api_is_listed_and_present():
    assert agreement.__all__
    for name in agreement.__all__:
        assert hasattr(agreement, name), name
        assert not name.startswith("_")
    for scalar, rich in (("cohen_kappa_score", "cohen_kappa"), ("gwet_ac1_score", "gwet_ac1"),
                         ("fleiss_kappa_score", "fleiss_kappa"), ("krippendorff_alpha_score", "krippendorff_alpha")):
        assert scalar in agreement.__all__ and rich in agreement.__all__


def test_agreement_imports_no_higher_layer_and_no_matplotlib():
    code = ("import sys, seekbench.agreement; "
            "print(','.join(m for m in ('seekbench.report', 'seekbench.cli', 'seekbench.annotate', 'matplotlib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_rich_results_have_a_summary_frame():
    res = agreement.cohen_kappa(["a", "b", "a"], ["a", "b", "b"], n_boot=10)
    assert list(res.summary.index) == ["cohen_kappa", "gwet_ac1"]
    assert {"estimate", "lower", "upper", "n"} <= set(res.summary.columns)
    for fn in (agreement.fleiss_kappa, agreement.krippendorff_alpha):
        out = fn([["a", "a", "b"], ["b", "b", "b"], ["a", "a", "a"]], n_boot=10)
        assert {"estimate", "lower", "upper"} <= set(out.summary.columns)
