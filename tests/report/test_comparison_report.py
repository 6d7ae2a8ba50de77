"""The report opens with the comparison of the agents and, with judged labels, the agreement right after it:
its first screen in real headless Chromium, the Markdown twin, the tables and --baseline."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from test_report_browser import CHROMIUM_FLAGS, _chromium

from seekbench._resources import sample_path
from seekbench.report._markdown_text import md_text

VIEWPORT = {"width": 1280, "height": 800}


def _in_chromium(url: str, script: str, shot) -> tuple[object, list[str]]:
    """Open ``url`` in headless Chromium at 1280 x 800; return the value of ``script`` and the console errors,
    and save a screenshot of the first screen to ``shot``."""
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS[1:])
        page = browser.new_page(viewport=VIEWPORT)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(url)
        page.wait_for_load_state("load")
        value = page.evaluate(script)
        page.screenshot(path=str(shot), full_page=False)
        browser.close()
    return value, errors


@pytest.fixture(scope="module")
def shared_report(tmp_path_factory, shared_data):
    from seekbench.cli import main

    out = tmp_path_factory.mktemp("shared-report")
    assert main(["report", str(shared_data), "-o", str(out), "--n-boot", "1000"]) == 0
    return out


@pytest.fixture(scope="module")
def agreement_report(tmp_path_factory):
    from seekbench.cli import main

    out = tmp_path_factory.mktemp("agreement-report")
    assert main(["report", "--rater", str(sample_path("second")), "-o", str(out), "--n-boot", "100"]) == 0
    return out


def test_comparison_tables_and_manifest(shared_report):
    t = pd.read_csv(shared_report / "tables" / "comparison.csv")
    agents = sorted(t["agent"].unique())
    # the first agent of the input by default (the report's one order), under its full name in the CSV
    assert len(agents) == 5 and set(t["baseline"]) == {"fewshot-Qwen2.5-7B-Instruct"}
    assert set(t["metric"]) == {"rqi", "ce", "recovered_by_8", "accuracy", "overconfident", "overcautious",
                                "tool_calls", "duplicate_query_rate"}
    assert ((t["lower"] <= t["difference"] + 1e-12) & (t["difference"] <= t["upper"] + 1e-12)).all()
    s = pd.read_csv(shared_report / "tables" / "comparison_summary.csv").set_index("metric")
    assert s.loc["ce", "direction"] == "lower is better, 0 is best" and s.loc["rqi", "better"] == "higher"
    manifest = json.loads((shared_report / "seekbench-manifest.json").read_text())
    assert {"tables/comparison.csv", "tables/comparison_summary.csv"} <= set(manifest["report"])


def test_markdown_opens_with_the_same_sentences(shared_report):
    md = (shared_report / "report.md").read_text()
    s = pd.read_csv(shared_report / "tables" / "comparison_summary.csv")
    first = md.index("## Which agent is better")
    assert md.index("Contents: [Which agent is better](#which-agent-is-better)") < first < md.index("## Per-group")
    labels = pd.read_csv(shared_report / "tables" / "agents.csv")
    full = sorted(zip(labels["agent"], labels["label"], strict=True), key=lambda p: -len(p[0]))

    def shown(sentence: str) -> str:  # the page names agents by their labels; the CSV by their full names
        for name, label in full:
            sentence = sentence.replace(name, label)
        return md_text(sentence)

    assert all(shown(sentence) in md for sentence in s["sentence"])  # as Markdown shows the text itself
    assert "![Each agent's value with its 95% CI per metric, against the baseline](figures/comparison.png)" in md
    assert md.index("figures/comparison.png") < md.index("- **RQI** \u2191:") < md.index("Each verdict in a full")


@pytest.mark.browser
def test_first_screen_says_who_is_best_and_how_sure(shared_report, tmp_path):
    shot = tmp_path / "report-first-screen.png"
    (items, overflow, figure, width), errors = _in_chromium(
        (shared_report / "report.html").as_uri(),
        "[Array.from(document.querySelectorAll('#comparison .verdicts.short li'))"
        ".map(li => [li.innerText, li.getBoundingClientRect().top, li.getBoundingClientRect().bottom]),"
        " Array.from(document.querySelectorAll('#comparison div')).filter(d => d.scrollWidth > d.clientWidth + 1)"
        ".length, (i => [i.complete, i.naturalWidth, i.getBoundingClientRect().bottom])"
        "(document.querySelector('#comparison figure.forest img')), document.documentElement.scrollWidth]",
        shot,
    )
    print(f"first-screen screenshot: {shot}")
    assert not errors, errors
    assert len(items) == 8
    text = {t.split(":")[0].split(" ")[0]: t for t, _, _ in items}
    # The three statements of the Done-when (most grounded, best calibrated, recovers best), each with how
    # sure it is, are entirely above the fold of a 1280 x 800 window.
    # under the agents' short labels; "clearly ahead" is what the CI says of the best agent against the rest.
    for key, who in (("RQI", "fewshot-Qwen2.5-7B best (0.419); clearly ahead of every other agent"),
                     ("CE", "fewshot-Qwen2.5-7B best (0.211); not clearly ahead of"),
                     ("ERF(8)", "SearchR1-7b-ppo-v0.3 best (0.725); not clearly ahead of 3 of 4 others")):
        assert who in text[key], text[key]
    # The comparison figure and every verdict line are above the fold of a 1280 x 800 window.
    assert figure[0] and figure[1] >= 1200 and figure[2] <= VIEWPORT["height"], figure
    assert all(bottom <= VIEWPORT["height"] for _, _, bottom in items), items
    assert overflow == 0 and width <= VIEWPORT["width"]  # nothing scrolls sideways
    from matplotlib.image import imread

    assert (imread(shot)[..., :3] < 0.9).mean() > 0.02  # not blank


def test_baseline_option(cli, tmp_path, shared_data):
    r = cli("report", shared_data, "-o", tmp_path / "r", "--n-boot", "50", "--baseline", "DeepResearcher-7b")
    assert r.code == 0, r
    t = pd.read_csv(tmp_path / "r" / "tables" / "comparison.csv")
    assert set(t["baseline"]) == {"DeepResearcher-7b"}
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Differences against DeepResearcher-7b</h3>" in html


def test_unknown_baseline_is_a_user_error(cli, tmp_path, shared_data):
    r = cli("report", shared_data, "-o", tmp_path / "r", "--n-boot", "50", "--baseline", "gpt-9")
    assert r.code == 2
    lines = [ln for ln in r.err.splitlines() if "error" in ln]
    assert len(lines) == 1 and "'gpt-9' is not an agent" in lines[0] and "DeepResearcher-7b" in lines[0]
    assert "Traceback" not in r.err and not (tmp_path / "r" / "report.html").exists()


def test_agreement_sits_right_after_the_comparison(agreement_report):
    html = (agreement_report / "report.html").read_text()
    heads = re.findall(r"<h2 id='([^']+)'[^>]*>(.*?)</h2>", html)
    titles = [t for _, t in heads]
    assert titles[:3] == ["Which agent is better", "Judge agreement with the reference", "Per-group metrics"]
    nav = re.search(r"<nav class='toc'.*?</nav>", html).group(0)
    assert [h for h in re.findall(r"href='#([^']+)'", nav)] == [i for i, _ in heads]  # contents lists every h2
    assert "<h3 id='disagreements'>Disagreement examples</h3>" in html
    assert "href='explorer.html#trace=" in html.split("Disagreement examples")[1].split("</section>")[0]
    ex = pd.read_csv(agreement_report / "tables" / "agreement_disagreements.csv")
    assert len(ex) and (ex["reference"] != ex["judge"]).all()
    assert ex.groupby(["rater", "field", "step_kind"]).size().max() <= 3
    md = (agreement_report / "report.md").read_text()
    assert md.index("## Which agent is better") < md.index("## Judge agreement") < md.index("## Per-group")
    assert "### Disagreement examples" in md


@pytest.mark.browser
def test_agreement_view_shows_a_disagreement(agreement_report, tmp_path):
    (cells, top), errors = _in_chromium(
        (agreement_report / "report.html").as_uri() + "#disagreements",
        "(() => { const h = document.getElementById('disagreements');"
        " const td = h.parentElement.querySelectorAll('#disagreements ~ div table tbody tr')[0].children;"
        " const r = h.getBoundingClientRect(); return [Array.from(td).map(c => c.innerText), r.top]; })()",
        tmp_path / "agreement-examples.png",
    )
    assert not errors, errors
    assert -2 <= top < VIEWPORT["height"]  # the anchor scrolls to the examples (sub-pixel above 0)
    assert cells[2] != cells[3]  # reference and judge labels side by side, different


@pytest.mark.browser
def test_explorer_opens_on_the_audit(shared_report, tmp_path):
    # 1280 x 800: the agents' summary (one row per agent, under its label) and the worst traces are on the
    # first screen; how the page loads its data is in the footer, out of the way.
    (rows, first_trace, note_top, width), errors = _in_chromium(
        (shared_report / "explorer.html").as_uri(),
        "new Promise(r => { const t = setInterval(() => { if (window.__explorerReady) { clearInterval(t); r(["
        "Array.from(document.querySelectorAll('details.agents[open] tbody tr')).map(tr => "
        "[tr.cells[0].innerText, tr.getBoundingClientRect().bottom]),"
        "document.querySelector('tr.trace-row').getBoundingClientRect().top,"
        "document.querySelector('#datanote').closest('footer').getBoundingClientRect().top,"
        "document.documentElement.scrollWidth]); } }, 50); })",
        tmp_path / "explorer-first-screen.png",
    )
    assert not errors, errors
    labels = pd.read_csv(shared_report / "tables" / "agents.csv")["label"].tolist()
    assert [name for name, _ in rows] == labels  # the report's order and labels
    assert all(bottom <= VIEWPORT["height"] for _, bottom in rows)
    assert first_trace < VIEWPORT["height"] < note_top and width <= VIEWPORT["width"]


@pytest.mark.browser
def test_sample_first_screen_holds_the_figure_and_every_verdict(tmp_path):
    from seekbench.cli import main

    out = tmp_path / "sample"
    assert main(["report", "-o", str(out), "--n-boot", "200"]) == 0
    (figure, bottoms, width), errors = _in_chromium(
        (out / "report.html").as_uri(),
        "[(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().bottom])"
        "(document.querySelector('#comparison figure.forest img')),"
        "Array.from(document.querySelectorAll('#comparison .verdicts.short li')).map(li => "
        "li.getBoundingClientRect().bottom), document.documentElement.scrollWidth]",
        tmp_path / "sample-first-screen.png",
    )
    assert not errors, errors
    assert figure[0] and figure[2] <= VIEWPORT["height"]
    assert len(bottoms) == 8 and max(bottoms) <= VIEWPORT["height"] and width <= VIEWPORT["width"]
