"""Hostile names end in a written report, each output safe in its own format.

Agent, dataset, rater and trace-id slots, the question and the step texts carry mathtext, HTML, Markdown and
spreadsheet-formula payloads through ``report`` and ``agree``. Each run exits 0 with its figures written; report.md,
rendered by python-markdown (MkDocs' renderer), holds no tag or attribute of the input and still reads every name;
no CSV cell of text starts a formula (OWASP), while negative numbers stay numbers.
"""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pandas as pd
import pytest

from seekbench._resources import sample_path
from seekbench.data import sample_traces_path

#: Four agent names, then the dataset's and the two raters' names, per round.
ROUNDS = {
    "mathtext": (
        [r"$\x$", "$$", r"\frac{", "_^{}"],
        r"$\mathrm{d}$ <b>set</b>",
        [r"$\y$ <script>alert(1)</script>", "=cmd|' /C calc'!A0 $$"],
    ),
    "markup": (
        [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(2)>",
            '=HYPERLINK("http://x","y")',
            "-2+3 [a](javascript:alert(3)) | *b*",
        ],
        "@SUM(A1) {: onclick=alert(4) }",
        ["\tjudge <!-- c --> `x`", "+1 # h\n- item"],
    ),
}
TEXT = "<script>alert('step')</script> [x](javascript:alert(5)) =1+2"
#: What python-markdown may make of report.md: the report's own structure and nothing more.
TAGS = {
    "h1",
    "h2",
    "h3",
    "p",
    "ul",
    "li",
    "strong",
    "code",
    "a",
    "img",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "blockquote",
}
EXTENSIONS = ["tables", "toc", "attr_list"]


def _write_inputs(d: Path, agents: list[str], dataset: str, raters: list[str]) -> tuple[Path, list[Path]]:
    """The sample traces and the second annotator's labels, every name replaced by a hostile one."""
    rename: dict[str, str] = {}
    ids: dict[str, str] = {}
    traces = []
    for line in sample_traces_path().read_text().splitlines():
        t = json.loads(line)
        if t["agent"] not in rename:
            rename[t["agent"]] = agents[len(rename)]
        t["agent"] = rename[t["agent"]]
        ids[t["trace_id"]] = t["trace_id"] = f"{TEXT[:8]}|{t['trace_id']}"
        t["dataset"], t["question"] = dataset, f"{TEXT} {t['question']}"
        for s in t["steps"]:
            if s["kind"] == "reasoning":
                s["text"] = f"{TEXT} {s['text']}"
        traces.append(json.dumps(t))
    path = d / "traces.jsonl"
    path.write_text("\n".join(traces) + "\n")
    labels = [json.loads(x) for x in sample_path("second").read_text().splitlines()]
    raters_out = []
    for k, name in enumerate(raters):
        p = d / f"rater{k}.jsonl"
        recs = [
            {
                **r,
                "trace_id": ids.get(r["trace_id"], r["trace_id"]),
                "rater": name,
                "provenance": {
                    "kind": "judge",
                    "judge": name,
                    "model": "m",
                    "cost_usd": 0.002 * (k + 1),
                    "latency_s": 1.0,
                    "input_tokens": 800,
                    "output_tokens": 60,
                    "cache_key": f"{k}-{r['trace_id']}-{r['step']}-{r['field']}",
                },
            }
            for r in labels
        ]
        p.write_text("".join(json.dumps(r) + "\n" for r in recs))
        raters_out.append(p)
    return path, raters_out


@pytest.fixture(scope="module", params=sorted(ROUNDS))
def runs(request, tmp_path_factory, cli_module):
    agents, dataset, raters = ROUNDS[request.param]
    d = tmp_path_factory.mktemp(request.param)
    traces, rater_files = _write_inputs(d, agents, dataset, raters)
    report = cli_module(
        "report", traces, "--rater", rater_files[0], "--by", "agent,dataset", "--n-boot", "20", "-o", d / "report"
    )
    agree = cli_module(
        "agree",
        traces,
        "--reference",
        "inline",
        *(a for f in rater_files for a in ("--rater", f)),
        "--n-boot",
        "20",
        "-o",
        d / "agree",
    )
    return request.param, d, report, agree


@pytest.fixture(scope="module")
def cli_module():
    """``seekbench ARGS`` in-process, for module-scoped runs: (exit code, stderr)."""
    import contextlib
    import io

    from seekbench.cli import main

    def run(*args) -> tuple[int, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main([str(a) for a in args])
        return code, err.getvalue()

    return run


def test_report_and_agree_end_in_exit_0_with_every_figure(runs):
    _, d, (code, err), (agree_code, agree_err) = runs
    assert code == 0 and "Traceback" not in err, err[-2000:]
    assert agree_code == 0 and "Traceback" not in agree_err, agree_err[-2000:]
    figures = {p.stem for p in (d / "report" / "figures").glob("*.png")}
    assert {"erf", "erf_km", "rqi_heatmap", "calibration", "prevalence", "agreement_kappa_cost"} <= figures
    assert any(f.startswith("agreement_confusion_") for f in figures)
    agree_figures = {p.stem for p in (d / "agree" / "figures").glob("*.png")}
    assert "agreement_kappa_cost" in agree_figures and any(f.startswith("agreement_confusion_") for f in agree_figures)
    for p in [*(d / "report" / "figures").glob("*.png"), *(d / "agree" / "figures").glob("*.png")]:
        assert p.read_bytes().startswith(b"\x89PNG") and p.stat().st_size > 1000, p


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def _allowed_attribute(tag: str, name: str, value: str | None) -> bool:
    if name == "href":
        return tag == "a" and bool(re.match(r"(#|explorer\.html(#|$))", value or ""))
    if name in ("src", "alt"):
        return tag == "img" and (name == "alt" or re.fullmatch(r"figures/[\w-]+\.png", value or "") is not None)
    return name == "id" and tag in ("h1", "h2", "h3")


def test_report_md_renders_no_markup_of_the_input_and_reads_every_name(runs):
    name, d, _, _ = runs
    agents, dataset, raters = ROUNDS[name]
    page = _Page()
    page.feed(markdown.markdown((d / "report" / "report.md").read_text(encoding="utf-8"), extensions=EXTENSIONS))
    assert {t for t, _ in page.tags} <= TAGS, {t for t, _ in page.tags} - TAGS
    bad = [(t, a) for t, attrs in page.tags for a in attrs if not _allowed_attribute(t, *a)]
    assert not bad, bad[:5]
    text = " ".join("".join(page.text).split())
    for shown in [*agents, dataset, raters[0], TEXT]:
        assert " ".join(shown.split()) in text, shown  # escaped, not deleted


def _formula_cells(path: Path) -> list[str]:
    """Cells a spreadsheet would run: starting with = + - @, tab or CR, and not a number."""
    out = []
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            for cell in row:
                if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                    try:
                        float(cell)
                    except ValueError:
                        out.append(cell)
    return out


def test_no_csv_cell_starts_a_formula(runs):
    name, d, _, _ = runs
    agents, dataset, raters = ROUNDS[name]
    tables = [*(d / "report" / "tables").glob("*.csv"), *(d / "agree" / "tables").glob("*.csv")]
    assert len(tables) >= 30
    for p in tables:
        assert not _formula_cells(p), (p.name, _formula_cells(p)[:3])
    metrics = pd.read_csv(d / "report" / "tables" / "metrics.csv")
    risky = [a for a in agents if a.startswith(("=", "+", "-", "@", "\t"))]
    assert all("'" + a in set(metrics["agent"]) for a in risky)  # prefixed, not dropped
    comparison = pd.read_csv(d / "report" / "tables" / "comparison.csv")
    assert comparison["difference"].dtype == float and (comparison["difference"] < 0).any()  # numbers stay numbers
