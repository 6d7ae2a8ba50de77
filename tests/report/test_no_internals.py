"""No internals in what users read: the report, the explorer's data and the CLI's text carry no Python
reprs (``None``, ``['agent']``), no ``nan``/``NaN``, no negative zero (``-0.00``) and no reference to
the spec (users do not have it; the docs page is linked instead).

What is scanned, and what is left out on purpose:

- ``report.md`` and ``report.html``: the whole text except the "Disagreement examples" section, which
  quotes step text and the judge's explanation verbatim (a question or a document may well contain
  "None" or "NaN"; that is the trace's content, not the report's). In the HTML, ``<style>`` is dropped
  and tags are removed so attribute values (hover definitions) are scanned as text too.
- the explorer's data (``explorer-data/*.js``): every JSON value except the fields that carry trace
  content (question, gold, answer, step text, query, documents, the judge's explanation); the
  payload is parsed with a hook that fails on a bare ``NaN``/``Infinity`` token (invalid JSON that
  ``json.dumps`` writes for a float NaN). The explorer page itself is static code plus text: its text
  outside ``<script>``/``<style>`` is scanned.
- the CLI's stdout and stderr of ``metrics``, ``agree``, ``report`` and ``explore``: whole (they print
  numbers, agent names and notes, never trace text).

Agent and rater names come from the input and are scanned too: none of the sample's or the 190
traces' names trips a pattern.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from seekbench._resources import sample_path

#: (what, pattern): word-bounded so "Nonetheless", "isNaN" or "nanosecond" never match.
BANNED = [
    ("Python None", re.compile(r"\bNone\b")),
    ("nan", re.compile(r"(?<![\w.])[+-]?(?:nan|NaN)\b")),
    ("negative zero", re.compile(r"(?<![\w.])-0(?:\.0+)?(?![\d.])")),
    ("spec reference", re.compile(r"spec(?:ification)? section", re.I)),
    ("Python list/tuple repr", re.compile(r"[\[(]\\?\s*'[^'\n]{0,80}'\s*(?:,\s*'[^'\n]{0,80}'\s*)*,?\s*\\?[\])]")),
    ("Python dict repr", re.compile(r"\{'[^'\n]{1,80}': ")),
]

#: Explorer JSON keys whose values are trace content (what the agent, the documents or a judge wrote).
CONTENT_KEYS = {"question", "q", "gold", "answer", "text", "query", "docs", "title", "explanation", "id"}


def hits(text: str, where: str) -> list[str]:
    """Every banned pattern in ``text``, each with 40 characters of context."""
    out = []
    for what, pat in BANNED:
        for m in pat.finditer(text):
            ctx = text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
            out.append(f"{where}: {what}: ...{ctx}...")
    return out


def _without_examples_md(md: str) -> str:
    return re.sub(r"### Disagreement examples\n.*?(?=\n## )", "", md, flags=re.S)


def _html_text(page: str, *, examples: bool) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    if examples:  # from the examples' heading to the next section heading
        page = re.sub(r"<h3 id='disagreements'>.*?(?=<h2)", " ", page, flags=re.S)
    attrs = " ".join(re.findall(r"(?:title|aria-label|alt)='([^']*)'", page))  # hover text is read too
    return re.sub(r"<[^>]+>", " ", page) + " " + attrs


def _explorer_hits(data_dir: Path) -> list[str]:
    out: list[str] = []

    def bad_constant(token: str):
        out.append(f"{data_dir}: bare {token} in the JSON")
        return None

    def walk(value, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k not in CONTENT_KEYS:
                    walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for v in value:
                walk(v, where)
        elif isinstance(value, str):
            out.extend(hits(value, where))

    files = sorted(data_dir.glob("*.js"))
    assert files, data_dir
    for f in files:
        m = re.fullmatch(r'SEEKBENCH_DATA\("(\w+)",(\d+),(.*)\);\n', f.read_text(encoding="utf-8"), flags=re.S)
        assert m, f
        walk(json.loads(m.group(3), parse_constant=bad_constant), f.name)
    return out


def _scan_outputs(cli, tmp_path: Path, traces: list[str], reference: list[str], rater: list[str]) -> list[str]:
    found: list[str] = []
    runs = {
        "metrics": ("metrics", *traces),
        "metrics --by": ("metrics", *traces, "--by", "agent,dataset"),
        "agree": ("agree", *traces, *reference, *rater),
        "report": ("report", *traces, *reference, *rater, "-o", tmp_path / "report"),
        "explore": ("explore", *traces, *reference, *rater, "-o", tmp_path / "explore"),
    }
    for name, args in runs.items():
        res = cli(*args)
        assert res.code == 0, (name, res)
        found += hits(res.out, f"{name} stdout") + hits(res.err, f"{name} stderr")
    rep = tmp_path / "report"
    found += hits(_without_examples_md((rep / "report.md").read_text(encoding="utf-8")), "report.md")
    found += hits(_html_text((rep / "report.html").read_text(encoding="utf-8"), examples=True), "report.html")
    for d in (rep, tmp_path / "explore"):
        found += hits(_html_text((d / "explorer.html").read_text(encoding="utf-8"), examples=False), "explorer.html")
        found += _explorer_hits(d / "explorer-data")
    return found


def test_patterns_catch_what_they_should_and_nothing_else():
    bad = [
        "recovery_horizon = None",
        "returning NaN",
        "[-0.00, +0.15]",
        "-0.000",
        "see spec section 4",
        "by: ['agent']",
        r"by: \['agent'\]",
        "('agent', 'dataset')",
        "{'by': 1}",
        "value nan",
    ]
    good = [
        "Nonetheless",
        "isNaN(x)",
        "nanosecond",
        "[0.00, +0.15]",
        "-0.062 [-0.17, 0.00]",
        "n/a (undefined)",
        "agent, dataset",
        "0.05 [-0.01, 0.10]",
        "[sample-looper-q01](explorer.html#trace=sample-looper-q01)",
    ]
    assert all(hits(t, "t") for t in bad), [t for t in bad if not hits(t, "t")]
    assert not [h for t in good for h in hits(t, "t")]


def test_sample_outputs_have_no_internals(cli, tmp_path):
    found = _scan_outputs(
        cli,
        tmp_path,
        [str(sample_path("traces"))],
        ["--reference", str(sample_path("human"))],
        ["--rater", str(sample_path("second"))],
    )
    assert not found, "\n".join(found)


@pytest.mark.slow
@pytest.mark.shared_data
def test_shared_190_outputs_have_no_internals(cli, tmp_path, shared_data):
    rules = tmp_path / "rules.jsonl"
    res = cli(
        "annotate", shared_data, "--judge", "rules", "-o", rules, "--cache", tmp_path / "c.sqlite", "--no-progress"
    )
    assert res.code == 0, res
    found = _scan_outputs(cli, tmp_path, [str(shared_data)], ["--reference", "inline"], ["--rater", str(rules)])
    assert not found, "\n".join(found)
