"""One agent order in a report: the input's (first appearance), in every table, figure, CSV and the explorer."""

from __future__ import annotations

import csv
import json
import re

import pandas as pd
import pytest

from seekbench.report._agent_order import columns_in_order, rows_in_order

#: Tables whose rows are not one per agent: traces in input order, and examples grouped by judge and field.
_NOT_PER_AGENT = {"audit.csv", "agreement_disagreements.csv"}


def test_rows_and_columns_follow_the_order_stably():
    df = pd.DataFrame({"agent": ["b", "a", "c", "b"], "x": [1, 2, 3, 4]})
    assert rows_in_order(df, ["c", "b", "a"])["x"].tolist() == [3, 1, 4, 2]
    wide = pd.DataFrame({"type": ["t"], "a": [1], "c": [2], "b": [3]})
    assert columns_in_order(wide, ["c", "b", "a"]).columns.tolist() == ["type", "c", "b", "a"]
    assert rows_in_order(pd.DataFrame({"y": [2, 1]}), ["a"])["y"].tolist() == [2, 1]  # no agents: unchanged


@pytest.mark.slow
@pytest.mark.shared_data
def test_report_on_the_190_traces_uses_the_file_order(cli, tmp_path, shared_data):
    file_order = list(dict.fromkeys(str(json.loads(line).get("model")) for line in shared_data.open()))
    assert file_order != sorted(file_order)  # the data set tells the two orders apart
    res = cli("report", shared_data, "-o", tmp_path, "--n-boot", "50")
    assert res.code == 0, res
    checked = 0
    for path in sorted((tmp_path / "tables").glob("*.csv")):
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        if path.name in _NOT_PER_AGENT or not rows:
            continue
        key = "agent" if "agent" in rows[0] else "group" if "group" in rows[0] else None
        if key is not None:
            seen = list(dict.fromkeys(r[key] for r in rows if r[key] in file_order))
            assert seen == [a for a in file_order if a in seen], path.name
            checked += 1
        agent_cols = [c for c in rows[0] if c in file_order]
        assert agent_cols == [a for a in file_order if a in agent_cols], path.name
    assert checked >= 6
    # The page shows each agent under its label (tables/agents.csv, in the same order); map back.
    labels = {r["label"]: r["agent"] for r in csv.DictReader((tmp_path / "tables" / "agents.csv").open())}
    assert list(labels.values()) == file_order
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    for section in ("## Per-group metrics", "### Values and order"):
        part = md.split(section, 1)[1].split("\n#", 1)[0]
        cells = [a.replace("\\_", "_") for a in re.findall(r"^\| ([^|]+?) \|", part, flags=re.M)]
        shown = [labels[a] for a in cells if a in labels]
        assert shown == file_order, section
    index = (tmp_path / "explorer-data" / "index.js").read_text(encoding="utf-8")
    assert json.loads(re.search(r'"agents":(\[[^\]]*\])', index).group(1)) == file_order
    assert json.loads(re.search(r'"agent_labels":(\[[^\]]*\])', index).group(1)) == list(labels)
