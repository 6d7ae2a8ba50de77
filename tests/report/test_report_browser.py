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
    assert pngs == ["calibration.png", "comparison.png", "erf.png", "erf_km.png", "prevalence.png", "rqi_heatmap.png"]
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
    assert len(images) == 6
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
    # A second human annotator records no cost, model time or tokens: the page says so instead of a fake axis.
    assert not (tmp_path / "figures" / "agreement_kappa_cost.png").exists() and "No kappa-versus-cost plot" in html


# Measured in the page at 1280 px: the document does not scroll sideways, no table overflows its box, every
# value with its CI sits on one line, every header has a definition on hover and in the glossary, every image
# loaded and no figure section is an empty frame.
LAYOUT_JS = """() => {
  const tables = Array.from(document.querySelectorAll('table')).map(t => {
    const box = t.closest('.tw') || t.parentElement;
    return {head: Array.from(t.querySelectorAll('th')).slice(0, 4).map(h => h.textContent).join('|'),
            width: t.getBoundingClientRect().width, room: box.clientWidth,
            overflow: box.scrollWidth > box.clientWidth + 1};
  });
  // Lines of text in a cell: text boxes that do not overlap vertically (the smaller CI sits lower on its line).
  const lines = el => {
    const r = document.createRange(); r.selectNodeContents(el);
    const boxes = Array.from(r.getClientRects()).filter(q => q.width > 0).sort((a, b) => a.top - b.top);
    let n = 0, bottom = -Infinity;
    for (const q of boxes) { if (q.top >= bottom - 1) { n += 1; } bottom = Math.max(bottom, q.bottom); }
    return n;
  };
  const ciCells = Array.from(document.querySelectorAll('td.v')).map(td => [td.textContent, lines(td)]);
  const heads = Array.from(document.querySelectorAll('thead th')).map(th => {
    const abbr = th.querySelector('abbr[title]');
    return [th.textContent, th.getAttribute('data-term'), abbr ? abbr.title : null];
  });
  const glossary = Array.from(document.querySelectorAll('#glossary dt')).map(dt => dt.textContent);
  const images = Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth]);
  return {scrollWidth: document.documentElement.scrollWidth, tables, ciCells, heads, glossary, images};
}"""


def _layout(report_html):
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS[1:])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(report_html.as_uri())
        page.wait_for_load_state("load")
        out = page.evaluate(LAYOUT_JS)
        browser.close()
    return out


def _assert_reads_well(layout):
    assert layout["scrollWidth"] <= 1280
    assert not [t for t in layout["tables"] if t["overflow"]], [t for t in layout["tables"] if t["overflow"]]
    assert layout["ciCells"], "no value with a CI found"
    assert not [c for c in layout["ciCells"] if c[1] != 1], [c for c in layout["ciCells"] if c[1] != 1]
    undefined = [h for h in layout["heads"] if not h[1] or not h[2]]
    assert not undefined, f"headers without a definition: {undefined}"
    assert {h[1] for h in layout["heads"]} <= set(layout["glossary"])
    assert layout["images"] and all(ok and w > 100 for _, ok, w in layout["images"]), layout["images"]


@pytest.mark.browser
def test_sample_report_reads_well_at_1280px(tmp_path):
    from seekbench.cli import main

    assert main(["report", "--rater", str(sample_path("second")), "-o", str(tmp_path), "--n-boot", "100"]) == 0
    layout = _layout(tmp_path / "report.html")
    _assert_reads_well(layout)
    heads = {h[0] for h in layout["heads"]}
    assert {"RQI", "ERF(8)", "overconfident", "overcautious", "pass@1", "runs", "flagged"} <= heads
    # The value and CI of ERF(8) and of both rates share one cell: one line each (checked above).
    assert sum(c[0].count("[") for c in layout["ciCells"]) >= 6 * 4


@pytest.mark.browser
def test_shared_report_reads_well_at_1280px(tmp_path, shared_data):
    from seekbench.cli import main

    rules = tmp_path / "rules.jsonl"
    assert main(["annotate", str(shared_data), "--judge", "rules", "-o", str(rules),
                 "--cache", str(tmp_path / "cache.sqlite"), "--no-progress"]) == 0
    out = tmp_path / "report"
    assert main(["report", str(shared_data), "--rater", str(rules), "-o", str(out), "--n-boot", "100"]) == 0
    layout = _layout(out / "report.html")
    _assert_reads_well(layout)
    heads = [h[0] for h in layout["heads"]]
    assert "pass@1" in heads and "runs" in heads and "duplicate-query rate" in heads
    html = (out / "report.html").read_text()
    # The rules judge records no cost, time or tokens: a note, not a plot on a made-up -0.04..0.04 USD axis.
    assert "No kappa-versus-cost plot" in html and not (out / "figures" / "agreement_kappa_cost.png").exists()
