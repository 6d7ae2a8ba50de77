"""Render report.html in real headless Chromium: every figure loads and the page is not blank."""

from __future__ import annotations

import os
import shutil

import pytest

from seekbench._resources import sample_path

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path:
        return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("chromium not installed (.ci/run installs Debian's chromium)")
    pytest.skip("chromium not installed: apt-get install chromium")


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    from seekbench.cli import main

    out = tmp_path_factory.mktemp("report")
    assert main(["report", "-o", str(out), "--n-boot", "200"]) == 0
    return out


def test_report_files(sample_report):
    assert (sample_report / "report.html").stat().st_size > 10_000
    assert (sample_report / "report.md").exists()
    pngs = sorted(p.name for p in (sample_report / "figures").glob("*.png"))
    assert pngs == ["calibration.png", "erf.png", "erf_km.png", "prevalence.png", "rqi_heatmap.png"]
    tables = sorted(p.name for p in (sample_report / "tables").glob("*.csv"))
    assert "metrics.csv" in tables and "audit.csv" in tables
    html = (sample_report / "report.html").read_text()
    assert "<script" not in html and "http://" not in html and "https://" not in html  # opens offline


@pytest.mark.browser
def test_report_renders_in_chromium(sample_report, tmp_path):
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS[1:])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto((sample_report / "report.html").as_uri())
        page.wait_for_load_state("load")
        images = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])")
        text_len = page.evaluate("document.body.innerText.length")
        headings = page.evaluate("Array.from(document.querySelectorAll('h2')).map(h => h.textContent)")
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=False)
        browser.close()
    assert len(images) == 5
    assert all(complete and width > 100 for _, complete, width in images), images
    assert text_len > 2000
    assert "Per-group metrics" in headings and "Per-trace audit" in headings
    # Not blank: a real screenshot has many distinct colours.
    from matplotlib.image import imread

    pixels = imread(shot)
    assert (pixels[..., :3] < 0.9).mean() > 0.02


def test_report_with_agreement_section(tmp_path):
    from seekbench.cli import main

    rater = sample_path("second")
    assert main(["report", "--rater", str(rater), "-o", str(tmp_path),
                 "--n-boot", "100"]) == 0
    html = (tmp_path / "report.html").read_text()
    assert "Judge agreement with the reference" in html and "sample-annotator-2" in html
    assert (tmp_path / "tables" / "sensitivity.csv").exists()
    assert (tmp_path / "figures" / "agreement_kappa_cost.png").exists()
