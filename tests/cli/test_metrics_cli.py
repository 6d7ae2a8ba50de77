"""`seekbench metrics`: JSON shape on the gold data, options, label-free traces."""

import json

import pytest


@pytest.mark.shared_data
def test_metrics_json_on_shared_data(cli, shared_data):
    res = cli("metrics", shared_data, "--json", "--n-boot", "200")
    assert res.code == 0, res
    out = json.loads(res.out)
    assert out["options"]["evidence_mapping"] == "sum" and out["options"]["seed"] == 0
    groups = out["groups"]
    assert len(groups) == 5 and sum(g["n_traces"] for g in groups) == 190
    assert sum(g["n_steps"] for g in groups) == 1837
    for g in groups:
        for key in ("agent", "rqi", "rqi_ci", "ce", "ce_ci", "overconfident", "overcautious", "erf", "erf_raw",
                    "median_recovery_turn", "accuracy", "em", "f1", "tool_calls", "duplicate_query_rate",
                    "unlabeled"):
            assert key in g, key
        lo, hi = g["rqi_ci"]
        assert lo <= g["rqi"] <= hi
        assert all(0 <= v <= 1 for v in g["erf"].values())
        # ERF on every integer turn 0..8: the old output stopped at the last event time (erf["8"]
        # missing while recovered_by_8 existed), and ERF(8) and the two rates had no CI.
        assert list(g["erf"]) == [str(t) for t in range(9)] and g["erf"]["8"] == g["recovered_by_8"]
        for key in ("recovered_by_8", "overconfident", "overcautious"):
            lo, hi = g[f"{key}_ci"]
            assert lo <= g[key] <= hi, key


@pytest.mark.shared_data
def test_metrics_table_shows_the_new_cis_and_never_none_or_nan(cli, shared_data):
    res = cli("metrics", shared_data, "--n-boot", "200", "--by", "agent,dataset")
    assert res.code == 0, res
    header = res.out.splitlines()[0]
    for col in ("overconf [95% CI]", "overcaut [95% CI]", "ERF@8 [95% CI]"):
        assert col in header
    assert "None" not in res.out and "nan" not in res.out.lower().replace("n/a", "")


@pytest.mark.shared_data
def test_by_agent_dataset(cli, shared_data):
    out = json.loads(cli("metrics", shared_data, "--json", "--n-boot", "0", "--by", "agent,dataset").out)
    keys = {(g["agent"], g["dataset"]) for g in out["groups"]}
    assert len(keys) == len(out["groups"]) > 5


def test_option_flag_changes_number(cli):
    # On the sample, the released code's pooled CE differs from the paper's per-trace CE.
    base = json.loads(cli("metrics", "--json", "--n-boot", "0").out)
    pooled = json.loads(cli("metrics", "--json", "--n-boot", "0", "--ce-aggregate", "pooled").out)
    assert pooled["options"]["ce_aggregate"] == "pooled"
    assert [g["ce"] for g in base["groups"]] != [g["ce"] for g in pooled["groups"]]
    assert [g["rqi"] for g in base["groups"]] == [g["rqi"] for g in pooled["groups"]]


def test_seed_reproducible(cli):
    a = json.loads(cli("metrics", "--json", "--n-boot", "300", "--seed", "7").out)
    b = json.loads(cli("metrics", "--json", "--n-boot", "300", "--seed", "7").out)
    c = json.loads(cli("metrics", "--json", "--n-boot", "300", "--seed", "8").out)
    assert a["groups"] == b["groups"]
    assert [g["rqi_ci"] for g in a["groups"]] != [g["rqi_ci"] for g in c["groups"]]


def test_unlabeled_traces_are_undefined_not_zero(cli, tmp_path):
    from seekbench.data import sample_traces_path

    lines = []
    for line in sample_traces_path().read_text().splitlines():
        tr = json.loads(line)
        for st in tr["steps"]:
            st.pop("labels", None)
        tr.pop("inline_labels", None)
        lines.append(json.dumps(tr))
    p = tmp_path / "nolabels.jsonl"
    p.write_text("\n".join(lines) + "\n")
    res = cli("metrics", p, "--json", "--n-boot", "0")
    assert res.code == 0, res
    out = json.loads(res.out)
    for g in out["groups"]:
        assert g["rqi"] is None and g["ce"] is None
        assert g["unlabeled"]["reasoning_steps_without_grounding"] > 0
        assert g["tool_calls"] is not None and g["accuracy"] is not None  # label-free metrics still computed
    table = cli("metrics", p, "--n-boot", "0")
    assert "n/a" in table.out and "seekbench annotate" in table.out
    # n/a comes with the reason, and never as None or nan.
    assert "n/a = undefined: RQI is undefined (no reasoning step has a grounding label)" in table.out
    assert "None" not in table.out and "nan" not in table.out
