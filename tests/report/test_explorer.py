"""The trace explorer's files (page, index and chunk scripts), the explore command and the report's links."""

from __future__ import annotations

import json
import re
from pathlib import Path

from seekbench.analysis import explorer_data
from seekbench.report import write_explorer


def _payload(path: Path):
    text = path.read_text()
    m = re.fullmatch(r'SEEKBENCH_DATA\("(\w+)",(\d+),(.*)\);\n', text, flags=re.S)
    assert m, text[:200]
    return m.group(1), int(m.group(2)), json.loads(m.group(3))


def test_write_explorer_chunks_and_stale_files(tmp_path, shared_traces, shared_tables):
    steps, traces = shared_tables
    data = explorer_data(shared_traces, steps, traces)
    stale = tmp_path / "explorer-data" / "chunk-00099.js"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    files = write_explorer(data, tmp_path, chunk_size=64)
    assert files.n_traces == 190 and files.n_chunks == 3  # ceil(190 / 64)
    assert not stale.exists()
    kind, key, index = _payload(tmp_path / "explorer-data" / "index.js")
    assert (kind, key) == ("index", 0) and len(index["index"]["id"]) == 190 and index["meta"]["n_chunks"] == 3
    total = 0
    for k in range(3):
        kind, key, chunk = _payload(tmp_path / "explorer-data" / f"chunk-{k:05d}.js")
        assert (kind, key) == ("chunk", k)
        assert [c["id"] for c in chunk] == index["index"]["id"][64 * k: 64 * (k + 1)]
        total += len(chunk)
    assert total == 190
    page = files.html.read_text()
    assert "SEEKBENCH_DATA" in page and "<style>" in page
    for banned in ("http://", "https://", "fetch(", "XMLHttpRequest"):  # no network, nothing blocked by file://
        assert banned not in page


def test_explore_cli(cli, tmp_path):
    res = cli("explore", "-o", tmp_path)
    assert res.code == 0, res
    assert (tmp_path / "explorer.html").exists() and (tmp_path / "explorer-data" / "chunk-00000.js").exists()
    assert "flagged" in res.out
    bad = cli("explore", "--chunk-size", "0", "-o", tmp_path / "x")
    assert bad.code == 2 and "--chunk-size" in bad.err


def test_report_links_agents_and_worst_traces_to_the_explorer(cli, tmp_path):
    res = cli("report", "-o", tmp_path, "--n-boot", "50", "--worst", "2", "--ungrounded-threshold", "0.5")
    assert res.code == 0, res
    html = (tmp_path / "report.html").read_text()
    assert "<script" not in html  # the report stays script-free; the explorer is its own page
    assert "href='explorer.html'" in html
    agent_links = re.findall(r"href='explorer\.html#agent=([^&']+)(?:&amp;flag=any&amp;sort=score)?'", html)
    trace_links = re.findall(r"href='explorer\.html#trace=([^']+)'", html)
    assert len(agent_links) == 4 and 0 < len(trace_links) <= 2 * 4
    assert "ungrounded_threshold = 0.5" in html
    assert (tmp_path / "explorer.html").exists()
    rates = (tmp_path / "tables" / "audit_rates.csv").read_text().splitlines()
    assert rates[0].startswith("agent,n_traces,flagged,ungrounded") and len(rates) == 5
    md = (tmp_path / "report.md").read_text()
    assert "(explorer.html#trace=" in md


def test_report_rejects_bad_thresholds(cli, tmp_path):
    res = cli("report", "-o", tmp_path, "--n-boot", "10", "--min-reasoning-labeled", "0")
    assert res.code == 2 and "min_reasoning_labeled" in res.err


def test_explorer_counts_traces_whose_evidence_is_unknown_per_agent(tmp_path, cli):
    """A trace with observations but none labeled has an unknown E (metrics.md section 2): the explorer
    shows, per agent, how many, with the reason, and agrees with the metrics summary's count."""
    from seekbench._resources import sample_path

    records = [json.loads(line) for line in sample_path("traces").read_text().splitlines() if line.strip()]
    erased = {r["trace_id"] for r in records if r["agent"] == "looper"}
    erased = set(sorted(erased)[:2])
    for r in records:
        if r["trace_id"] in erased:
            for s in r["steps"]:
                if s["kind"] == "search_result":
                    s["labels"] = {"clarity": None, "sufficiency": None}
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli("explore", path, "-o", tmp_path / "x").code == 0
    _, _, index = _payload(tmp_path / "x" / "explorer-data" / "index.js")
    counts = {r["agent"]: r["e_unknown"] for r in index["meta"]["agent_rates"]}
    assert counts == {"careful-planner": 0, "eager-answerer": 0, "looper": 2, "synthesizer": 0}
    assert "no labeled observation" in index["meta"]["e_unknown_reason"]
    res = cli("metrics", path, "--json")
    summary = json.loads(res.out)
    assert {g["agent"]: g["unlabeled"]["traces_with_all_observations_unlabeled"] for g in summary["groups"]} == counts
