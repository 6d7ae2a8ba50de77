"""`seekbench metrics --correct` and `seekbench report --correct` on the shipped sample (human labels inline)."""

import json

import pytest


@pytest.fixture(scope="module")
def rules_labels(tmp_path_factory):
    from seekbench.cli._main import main
    from seekbench.data import sample_traces_path

    out = tmp_path_factory.mktemp("correct") / "rules.jsonl"
    assert main(["annotate", str(sample_traces_path()), "--judge", "rules", "-o", str(out)]) == 0
    return out


def test_metrics_correct_json_has_the_corrected_block(cli, rules_labels):
    res = cli("metrics", "--labels", str(rules_labels), "--correct", "--n-boot", "50", "--json")
    assert res.code == 0, res
    block = json.loads(res.out)["corrected"]
    metrics = {r["metric"] for r in block["summary"]}
    assert {"rqi", "ce", "overconfident", "overcautious", "flag_ungrounded"} <= metrics
    # every sample trace is human-labeled inline: the corrected value is the human one
    for r in block["summary"]:
        if r["corrected"] is not None:
            assert r["corrected"] == pytest.approx(r["human_only"]) and r["lam"] == 0.0
    assert "random sample" in res.err


def test_metrics_correct_table_and_errors(cli, rules_labels, tmp_path):
    res = cli("metrics", "--labels", str(rules_labels), "--correct", "--n-boot", "0")
    assert res.code == 0 and "judge-corrected metrics" in res.out and "corrected [95% CI]" in res.out
    assert cli("metrics", "--correct").code == 2  # no judge labels
    other = tmp_path / "other.jsonl"
    other.write_text(rules_labels.read_text().replace('"trace_id": "', '"trace_id": "zz-'))
    res = cli("metrics", "--labels", str(rules_labels), "--reference", str(other), "--correct", "--n-boot", "0")
    assert res.code == 2 and "fit no trace" in res.err


def test_report_correct_writes_the_section(cli, rules_labels, tmp_path):
    res = cli("report", "--labels", str(rules_labels), "--correct", "--n-boot", "50", "-o", str(tmp_path / "r"))
    assert res.code == 0, res
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Judge-corrected metrics (PPI++)" in md and "human n" in md
    assert (tmp_path / "r" / "tables" / "corrected.csv").exists()


def test_reference_of_the_first_traces_is_called_not_random(cli, rules_labels, tmp_path):
    from seekbench.data import sample_traces_path
    from seekbench.labels import AnnotationSet
    from seekbench.traces import read_traces

    traces = read_traces([str(sample_traces_path())]).traces
    first = {t["trace_id"] for t in traces[:10]}
    human = AnnotationSet.from_traces(traces).records
    ref = tmp_path / "first10.jsonl"
    AnnotationSet.from_records(human[human["trace_id"].isin(first)].to_dict("records"), name="h").save(ref)
    res = cli("metrics", "--labels", str(rules_labels), "--reference", str(ref), "--correct", "--n-boot", "0")
    assert res.code == 0, res
    line = [x for x in res.err.splitlines() if "--correct" in x]
    assert len(line) == 1 and "first 10 traces of the file" in line[0] and "random sample" in line[0]
