"""The judges' validation records in report.md / report.html, beside the metrics their labels feed."""

from __future__ import annotations

from seekbench.analysis import JudgeRecord
from seekbench.data import sample_traces_path
from seekbench.report._judge_records_section import TITLE, judge_records_html, judge_records_markdown

RECORD = {
    "format": "seekbench.judge_validation", "format_version": 1, "judge": "x", "model": "x@1",
    "method": "held-out", "method_detail": "50 traces set aside.", "data": {"name": "invented", "n_traces": 50},
    "results": [{"features": None, "rows": [{"field": "clarity", "step_kind": "search_result", "n": 40,
                                             "kappa": 0.35, "kappa_ci": [0.2, 0.5], "ac1": None,
                                             "ac1_ci": [None, None]}]}],
    "cost_per_trace_usd": 0.002,
}


def test_no_judge_no_section():
    assert judge_records_markdown([]) == "" and judge_records_html([]) == ""


def test_record_rendered_with_its_notice_and_hostile_names_escaped():
    hostile = "<img src=x onerror=alert(1)>|*x*"
    md = judge_records_markdown([JudgeRecord(hostile, "x@1", None, RECORD)])
    html = judge_records_html([JudgeRecord(hostile, "x@1", None, RECORD)])
    assert f"## {TITLE}" in md
    assert "| clarity | search\\_result | 40 | 0.35 (0.20, 0.50) | n/a (n/a, n/a) |" in md
    assert "held-out; 50 traces set aside. Data: invented, 50 traces. Cost per trace: $0.002." in md
    assert "below 0.4 on clarity (search\\_result) 0.35" in md
    assert "<img" not in md and "<img" not in html and "&lt;img" in html
    missing = judge_records_markdown([JudgeRecord("gpt-x", "gpt-x", None, None)])
    assert "- judge 'gpt-x' has no validation record" in missing


def test_report_from_rules_labels_shows_the_rules_record(cli, tmp_path):
    labels = tmp_path / "rules.jsonl"
    assert cli("annotate", sample_traces_path(), "--judge", "rules", "-o", labels).code == 0
    out = tmp_path / "rep"
    res = cli("report", sample_traces_path(), "--labels", labels, "-o", out, "--n-boot", "50")
    assert res.code == 0, res
    md = (out / "report.md").read_text()
    section = md[md.index(f"## {TITLE}"):md.index("## Per-group metrics")]  # right before the metrics
    assert "rules: in-sample; no training (fixed thresholds); measured on all the traces." in section
    assert "190 traces" in section
    # The shipped record has reasoning_type, clarity and sufficiency below 0.4 (README's table).
    assert "judge 'rules': Cohen's kappa with human labels below 0.4 on reasoning\\_type (reasoning)" in section
    assert "Validation of the judges behind these labels" in (out / "report.html").read_text()
