"""The report of seeking episodes: each agent's completeness, q_hat and coverage filled, no empty calibration plot."""

from __future__ import annotations

import re

import pytest

from seekbench.analysis import analyze
from seekbench.report import write_report
from seekbench.traces import build_tables


@pytest.fixture(scope="module")
def episode_report(tmp_path_factory):
    from seekbench.env import default_corpus, make_agent, make_embedder, run_episodes

    eps = run_episodes(default_corpus().documents[:4], [make_agent("keyphrase"), make_agent("sentence")],
                       ["deduplicated", "oracle"], embedder=make_embedder("tfidf"), max_steps=3)
    with pytest.warns(Warning):  # unlabeled episodes: RQI, CE and ERF are undefined, and say so
        a = analyze(*build_tables(eps), trace_dicts=eps, n_boot=0, explorer=False)
    out = tmp_path_factory.mktemp("episodes")
    write_report(a, out)
    return a, out


def test_per_agent_completeness_q_hat_and_coverage_are_filled(episode_report):
    a, out = episode_report
    html = (out / "report.html").read_text()
    section = html[html.index("<h2 id='completeness'>"):]
    table = section[: section.index("</table>")]
    rows = re.findall(r"<tr><td class='l'>(keyphrase|sentence)</td>(.*?)</tr>", table)
    assert [r[0] for r in rows] == ["keyphrase", "sentence"]
    heads = re.findall(r"<abbr title='[^']*'>([^<]*)</abbr>", table)
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", rows[0][1])]
    shown = dict(zip(heads[1:], cells, strict=True))
    for col in ("completeness [95% CI]", "q_hat", "coverage [95% CI]", "interval width"):
        assert shown[col] != "n/a" and float(shown[col].split()[0]) >= 0, (col, shown)
    by = a.completeness.by_agent.set_index("agent")
    assert by["q_hat"].notna().all() and by["coverage"].between(0, 1).all()


def test_no_empty_calibration_plot(episode_report):
    _, out = episode_report
    html = (out / "report.html").read_text()
    # The episodes never answer: P(answer | E) is 0 everywhere, so the page says so instead of drawing empty bars.
    assert not (out / "figures" / "calibration.png").exists()
    assert "No calibration figure" in html and "No calibration figure" in (out / "report.md").read_text()
