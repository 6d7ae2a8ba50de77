"""The report's per-group table: CIs for ERF(8) and the two companion rates, n/a instead of None."""

from __future__ import annotations

from seekbench.report._tables import display_table


def test_display_table_shows_the_new_cis_and_no_none():
    g = {"agent": "a", "dataset": None, "n_traces": 3, "rqi": 0.5, "rqi_ci": [0.25, 0.75], "ce": None,
         "ce_ci": [None, None], "overconfident": 0.5, "overconfident_ci": [0.0, 1.0], "overcautious": 0.0,
         "overcautious_ci": [0.0, 0.0], "recovered_by_8": 2 / 3, "recovered_by_8_ci": [1 / 3, 1.0],
         "median_recovery_turn": None, "accuracy": 1.0, "accuracy_ci": [1.0, 1.0], "em": None, "f1": None,
         "tool_calls": 2.0, "duplicate_query_rate": 0.0}
    row = display_table([g], ("agent", "dataset")).iloc[0]
    assert row["ERF(8)"] == "0.667 [0.33, 1.00]"
    assert row["overconfident"] == "0.500 [0.00, 1.00]" and row["overcautious"] == "0.000 [0.00, 0.00]"
    assert row["CE"] == "n/a" and row["median recovery turn"] == "not reached"
    assert row["dataset"] == "n/a (not recorded)"
    assert "None" not in " ".join(map(str, row.tolist())) and "nan" not in " ".join(map(str, row.tolist()))
