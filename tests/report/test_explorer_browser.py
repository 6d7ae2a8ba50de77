"""The trace explorer in real headless Chromium, opened from file://: filters, search, a trace's steps and
labels, the judge-vs-reference view, a screenshot; and a 28,493-trace explorer (timings printed, not asserted)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_report_browser import CHROMIUM_FLAGS, _chromium

from seekbench._resources import sample_path

REPO = Path(__file__).resolve().parents[2]
RATER = sample_path("second")


@pytest.fixture(scope="module")
def explorer_dir(tmp_path_factory):
    from seekbench.cli import main

    out = tmp_path_factory.mktemp("explorer")
    assert main(["explore", "--rater", str(RATER), "-o", str(out)]) == 0
    return out


class Browser:
    """One Chromium page that records console errors and uncaught exceptions."""

    def __init__(self, pw):
        self.browser = pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_FLAGS[1:])
        self.page = self.browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, url: str) -> float:
        t0 = time.perf_counter()
        self.page.goto(url)
        self.page.wait_for_function("window.__explorerReady", timeout=120_000)
        return time.perf_counter() - t0

    def column(self, n: int) -> list[str]:
        return self.page.eval_on_selector_all(f"tr.trace-row td:nth-child({n})", "els => els.map(e => e.innerText)")

    def count(self) -> int:
        return int(self.page.inner_text("#count b"))


@pytest.fixture
def browser():
    _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = Browser(pw)
        yield b
        b.browser.close()


@pytest.mark.browser
def test_explorer_filters_search_steps_and_disagreements(explorer_dir, browser, tmp_path):
    url = (explorer_dir / "explorer.html").as_uri()
    browser.open(url)
    page = browser.page
    shot = tmp_path / "explorer_first_screen.png"
    page.screenshot(path=str(shot), full_page=False)
    print(f"\nscreenshot: {shot}")
    # how the page loads its data is told in the footer ("How this page works"), not on the first screen
    assert "sidecar script" in page.text_content("footer details #datanote")
    assert browser.count() == 48

    agents = page.eval_on_selector_all("#f-agent option", "os => os.map(o => [o.value, o.textContent])")
    looper = next(v for v, name in agents if name == "looper")
    page.select_option("#f-agent", looper)
    assert 0 < browser.count() < 48 and set(browser.column(2)) == {"looper"}
    page.select_option("#f-correct", "0")
    assert set(browser.column(4)) == {"incorrect"}
    n_looper_wrong = browser.count()
    page.select_option("#f-flag", "none")
    assert browser.count() < n_looper_wrong and all(not f for f in browser.column(7))
    page.select_option("#f-agent", "all")
    page.select_option("#f-flag", "all")
    page.select_option("#f-correct", "all")
    page.select_option("#f-E", "2")
    assert 0 < browser.count() < 48 and set(browser.column(5)) == {"2"}
    page.select_option("#f-E", "all")

    # Text that only a retrieved document holds (no question mentions it).
    page.fill("#f-q", "bell founder")
    page.wait_for_function("window.__explorerSearchDone === 'bell founder'")
    assert 0 < browser.count() < 48
    page.fill("#f-q", "")
    page.wait_for_function("document.querySelector('#count b').textContent === '48'")

    # Open a trace: every step with turn, kind, E after it and label chips naming field and rater.
    first = page.locator("tr.trace-row").first
    first.click()
    page.wait_for_selector(".detail[data-loaded]")
    heads = page.eval_on_selector_all(".detail .step .shead", "els => els.map(e => e.innerText)")
    assert len(heads) >= 3 and all("turn" in h and "E after" in h for h in heads)
    chips = page.eval_on_selector_all(".detail .chip", "els => els.map(e => e.innerText)")
    assert any(c.startswith("grounding: ") and "sample-annotator" in c for c in chips)

    # Agreement view: the traces where the judge disagrees, reference and judge side by side.
    page.evaluate("location.hash = 'dis=yes'")
    page.wait_for_function("document.querySelector('#f-dis').value === 'yes'")
    assert 0 < browser.count() < 48 and all(int(d) > 0 for d in browser.column(10))
    page.locator("tr.trace-row").first.click()
    page.wait_for_selector(".detail[data-loaded] table.dis-table")
    pairs = page.eval_on_selector_all("table.dis-table tbody tr",
                                      "rs => rs.map(r => [r.querySelector('td.ref').innerText, "
                                      "r.querySelector('td.jud').innerText])")
    assert pairs and all(not jud.startswith(ref + " ") for ref, jud in pairs)
    assert page.locator(".chip.disagree").count() >= 2

    # Per-agent drill-down from the agents panel.
    page.goto(url)
    page.wait_for_function("window.__explorerReady")
    # the agents' summary is open on the first screen (the explorer opens on the audit)
    assert page.evaluate("document.querySelector('details.agents').open")
    page.click("details.agents a:text-is('looper')")
    page.wait_for_function("document.querySelector('#f-agent').selectedOptions[0].textContent === 'looper'")
    assert set(browser.column(2)) == {"looper"}

    # A link from the report: #trace=ID opens that trace.
    page.goto(url + "#trace=sample-looper-q11")
    page.wait_for_selector(".detail[data-loaded]")
    assert browser.column(1) == ["sample-looper-q11"]
    assert browser.errors == []

    from matplotlib.image import imread

    pixels = imread(shot)
    assert (pixels[..., :3] < 0.9).mean() > 0.02  # not blank


@pytest.fixture(scope="module")
def two_judges_dir(tmp_path_factory):
    """An explorer with two judges: the second annotator, and "echo", the reference's labels but two grounding
    labels flipped on one trace where the second annotator agrees with the reference."""
    import json

    from seekbench.agreement import compare_annotations
    from seekbench.cli import main
    from seekbench.labels import load_annotations
    from seekbench.traces import read_traces

    traces = read_traces(sample_path("traces")).traces
    human = sample_path("human")
    second = compare_annotations(load_annotations(human), load_annotations(RATER), traces=traces, n_boot=0)
    disagreed = set(second.disagreements["trace_id"])
    records = [json.loads(line) for line in human.read_text(encoding="utf-8").splitlines() if line.strip()]
    tid = next(r["trace_id"] for r in records if r["trace_id"] not in disagreed and r["field"] == "grounding")
    flipped = 0
    for r in records:
        r["rater"] = "echo"
        if r["trace_id"] == tid and r["field"] == "grounding" and flipped < 2:
            r["value"] = "NotGrounded" if r["value"] == "Grounded" else "Grounded"
            flipped += 1
    out = tmp_path_factory.mktemp("two-judges")
    echo = out / "echo.jsonl"
    echo.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["explore", "--rater", str(RATER), "--rater", str(echo), "-o", str(out / "explorer")]) == 0
    return out / "explorer", tid


@pytest.mark.browser
def test_a_judges_disagreement_link_lists_that_judges_disagreements(two_judges_dir, browser):
    out, tid = two_judges_dir
    browser.open((out / "explorer.html").as_uri())
    page = browser.page
    rows = page.eval_on_selector_all(
        "section.agree tbody tr",
        "rs => rs.map(r => [r.dataset.rater, r.dataset.field, r.dataset.kind, r.querySelector('td:nth-child(5)')"
        ".innerText, !!r.querySelector('a.dislink')])",
    )
    assert all(kind != "all" or field == "all (pooled)" for _, field, kind, _, _ in rows)
    echo = [r for r in rows if r[0] == "echo" and r[1] != "all (pooled)" and r[4]]
    assert sum(int(r[3]) for r in echo) == 2  # the two flipped labels, in their step kinds' rows

    # echo's count lists the one trace it disagrees on, and that trace shows echo's disagreements only.
    _, field, kind, n, _ = echo[0]
    page.click(f"section.agree tr[data-rater='echo'][data-field='{field}'][data-kind='{kind}'] a.dislink")
    page.wait_for_function("document.querySelector('#f-dis').value.startsWith('r:')")
    assert browser.column(1) == [tid]
    page.locator("tr.trace-row").first.click()
    page.wait_for_selector(".detail[data-loaded] table.dis-table")
    raters = page.eval_on_selector_all("table.dis-table tbody tr", "rs => rs.map(r => r.dataset.rater)")
    assert raters and set(raters) == {"echo"} and len(raters) == int(n)

    # The second annotator's pooled count: its traces, never the one where only echo disagrees.
    page.click("section.agree tr[data-rater='sample-annotator-2'][data-field='all (pooled)'] a.dislink")
    page.wait_for_function("document.querySelector('#f-dis').selectedOptions[0].textContent.startsWith('sample-annotator-2')")
    ids = browser.column(1)
    assert ids and tid not in ids
    page.locator("tr.trace-row").first.click()
    page.wait_for_selector(".detail[data-loaded] table.dis-table")
    raters = page.eval_on_selector_all("table.dis-table tbody tr", "rs => rs.map(r => r.dataset.rater)")
    assert raters and set(raters) == {"sample-annotator-2"}
    assert browser.errors == []


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.shared_data
def test_explorer_at_paper_scale(shared_traces, tmp_path, browser, bench_script):
    """28,493 traces resampled from the shared 190: written, opened and filtered; timings printed."""
    import copy

    from seekbench.cli import main

    mc = bench_script("make_corpus")
    corpus = tmp_path / "corpus_1x.jsonl"
    t0 = time.perf_counter()
    n, n_steps = mc.write_corpus(corpus, [copy.deepcopy(t) for t in shared_traces], mc.PAPER_TRACES, seed=0,
                                 runs=4, tag="1x")
    t_corpus = time.perf_counter() - t0
    out = tmp_path / "explorer"
    t0 = time.perf_counter()
    assert main(["explore", str(corpus), "-o", str(out)]) == 0
    t_write = time.perf_counter() - t0
    corpus.unlink()
    n_chunks = len(list((out / "explorer-data").glob("chunk-*.js")))
    assert n == 28_493 and n_chunks == 143  # ceil(28,493 / 200)

    page = browser.page
    t_open = browser.open((out / "explorer.html").as_uri())
    assert browser.count() == 28_493
    t0 = time.perf_counter()
    page.select_option("#f-agent", "3")
    t_agent = time.perf_counter() - t0
    n_agent = browser.count()
    t0 = time.perf_counter()
    page.select_option("#f-flag", "any")
    t_flag = time.perf_counter() - t0
    n_flag = browser.count()
    t0 = time.perf_counter()
    page.locator("tr.trace-row").first.click()
    page.wait_for_selector(".detail[data-loaded]")
    t_trace = time.perf_counter() - t0
    page.select_option("#f-agent", "all")
    page.select_option("#f-flag", "all")
    t0 = time.perf_counter()
    page.fill("#f-q", "thames ditton")
    page.wait_for_function("window.__explorerSearchDone === 'thames ditton'", timeout=300_000)
    t_search = time.perf_counter() - t0
    n_search = browser.count()
    assert 0 < n_flag < n_agent < 28_493 and 0 < n_search < 28_493
    assert browser.errors == []
    print(f"\n28,493-trace explorer ({n_steps} steps): corpus {t_corpus:.1f} s, seekbench explore {t_write:.1f} s; "
          f"in Chromium: open {t_open:.2f} s, agent filter {t_agent:.3f} s ({n_agent} rows), flag filter "
          f"{t_flag:.3f} s ({n_flag}), open a trace {t_trace:.3f} s, full-text search over {n_chunks} chunks "
          f"{t_search:.1f} s ({n_search} traces)")


@pytest.mark.browser
def test_report_links_open_the_explorer(tmp_path, browser):
    from seekbench.cli import main

    assert main(["report", "-o", str(tmp_path), "--n-boot", "50"]) == 0
    page = browser.page
    page.goto((tmp_path / "report.html").as_uri())
    links = page.locator("a[href^='explorer.html#agent=']")
    assert links.count() == 4  # one per agent row
    agent = "looper"  # has flagged traces (careful-planner has none: its link lists all its traces)
    page.locator(f"a[href^='explorer.html#agent={agent}&']").click()
    page.wait_for_function("window.__explorerReady")
    names = set(browser.column(2))
    assert names == {agent} and all(browser.column(7))  # the agent's flagged traces, worst first
    scores = [float(s) for s in browser.column(8)]
    assert scores == sorted(scores, reverse=True)
    page.go_back()
    trace_link = page.locator("a[href^='explorer.html#trace=']").first
    tid = trace_link.inner_text()
    trace_link.click()
    page.wait_for_selector(".detail[data-loaded] .step")
    assert browser.column(1) == [tid]
    assert browser.errors == []
