"""scripts/bench/judge_kappa.py writes the judge's validation record in the format seekbench reads."""

from __future__ import annotations

import pytest

from seekbench.llm import compact_kappas, read_record


@pytest.mark.shared_data
def test_judge_kappa_writes_a_record(shared_data, tmp_path, bench_script):
    mod = bench_script("judge_kappa")
    record_path = tmp_path / "judges" / "validation" / "local.json"
    code = mod.main(["--judge", "local", "--mock-server", "--limit", "3", "--n-boot", "10", "--no-progress",
                     "--data", str(shared_data), "--out-dir", str(tmp_path / "out"),
                     "--cache", str(tmp_path / "c.sqlite"), "--record", str(record_path)])
    assert code == 0
    record = read_record(record_path)  # follows schemas/judge_validation.schema.json
    assert record == read_record(tmp_path / "out" / "judge_kappa-local-mock-trace.validation.json")
    assert record["judge"] == "local" and record["model"] == "local-model" and record["method"] == "in-sample"
    assert record["data"]["n_traces"] == 3 and "mock server" in record["method_detail"]
    assert compact_kappas(record).endswith("(in-sample, 3 traces)")
