"""Data flows one way: a lower layer never imports a higher one; computing never imports matplotlib."""

import subprocess
import sys

import pytest

# layer -> the packages it must not import
FORBIDDEN = {
    "seekbench.traces": ["seekbench.labels", "seekbench.metrics", "seekbench.report", "seekbench.annotate",
                         "seekbench.agreement", "seekbench.cli", "matplotlib"],
    "seekbench.labels": ["seekbench.metrics", "seekbench.report", "seekbench.agreement", "seekbench.cli",
                         "matplotlib"],
    "seekbench.metrics": ["seekbench.report", "seekbench.agreement", "seekbench.cli", "matplotlib"],
    "seekbench.agreement": ["seekbench.report", "seekbench.cli", "seekbench.annotate", "matplotlib"],
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layer_imports(package):
    code = (f"import sys, {package}; bad = [m for m in {FORBIDDEN[package]!r} if m in sys.modules]; "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"{package} imports {out}"


@pytest.mark.parametrize("package", ["seekbench", "seekbench.traces", "seekbench.labels", "seekbench.metrics", "seekbench.agreement",
                                     "seekbench.report"])
def test_public_api(package):
    mod = __import__(package, fromlist=["__all__"])
    assert mod.__all__, package
    for name in mod.__all__:
        assert hasattr(mod, name), f"{package}.{name} listed in __all__ but missing"
        assert not name.startswith("_") or name == "__version__"
