"""`seekbench convert --to parquet`, and every command reading Parquet like JSONL."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from seekbench.data import sample_traces_path


@pytest.fixture
def sample_pq(cli, tmp_path):
    out = tmp_path / "sample.parquet"
    res = cli("convert", sample_traces_path(), "--to", "parquet", "-o", out)
    assert res.code == 0, res
    assert res.out.strip() == f"wrote 48 traces to {out} (Parquet)"
    assert out.read_bytes()[:4] == b"PAR1"
    return out


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_parquet_back_to_jsonl_is_the_same(cli, tmp_path, sample_pq):
    direct = tmp_path / "direct.jsonl"
    back = tmp_path / "back.jsonl"
    assert cli("convert", sample_traces_path(), "-o", direct).code == 0
    res = cli("convert", sample_pq, "--to", "jsonl", "-o", back)
    assert res.code == 0, res
    assert _lines(back) == _lines(direct)


def test_output_suffix_picks_parquet(cli, tmp_path):
    out = tmp_path / "x.parquet"
    assert cli("convert", sample_traces_path(), "-o", out).code == 0
    assert out.read_bytes()[:4] == b"PAR1"
    plain = tmp_path / "x.jsonl"
    assert cli("convert", sample_traces_path(), "-o", plain).code == 0
    assert plain.read_text().startswith("{")


def test_metrics_from_parquet_equal_metrics_from_jsonl(cli, sample_pq):
    a = json.loads(cli("metrics", sample_traces_path(), "--json", "--n-boot", "300").out)
    b = json.loads(cli("metrics", sample_pq, "--json", "--n-boot", "300").out)
    assert a["groups"] == b["groups"] and a["options"] == b["options"] and a["warnings"] == b["warnings"]


@pytest.mark.shared_data
def test_shared_data_through_parquet(cli, tmp_path, shared_data):
    out = tmp_path / "shared.parquet"
    assert cli("convert", shared_data, "--to", "parquet", "-o", out).code == 0
    a = json.loads(cli("metrics", shared_data, "--json", "--n-boot", "200").out)
    b = json.loads(cli("metrics", out, "--json", "--n-boot", "200").out)
    assert a["groups"] == b["groups"]
    res = cli("validate", out)
    assert res.code == 0 and res.out.strip() == "190 valid traces (1837 steps; format parquet)"


def test_labels_out_with_parquet(cli, tmp_path):
    out, labels = tmp_path / "s.parquet", tmp_path / "labels.jsonl"
    ref = tmp_path / "ref.jsonl"
    assert cli("convert", sample_traces_path(), "-o", out, "--labels-out", labels).code == 0
    assert cli("convert", sample_traces_path(), "-o", tmp_path / "s.jsonl", "--labels-out", ref).code == 0

    def key(rec):
        return rec["trace_id"], rec["step"], rec["field"], rec["value"]

    assert sorted(map(key, _lines(labels))) == sorted(map(key, _lines(ref)))


def test_invalid_parquet_trace_named_like_jsonl(cli, tmp_path, sample_pq):
    table = pq.read_table(sample_pq)
    kinds = table.column("kind").to_pylist()
    kinds[1] = "browse"
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("kind"), "kind", pa.array(kinds)), bad)
    res = cli("metrics", bad, "--n-boot", "0")
    assert res.code == 2
    assert f"{bad}:1, trace " in res.err and "at $.steps[1].kind: 'browse' is not allowed" in res.err
    res = cli("metrics", bad, "--n-boot", "0", "--json", "--skip-invalid")
    assert res.code == 0 and "skipped 1 invalid trace records" in res.err
    assert sum(g["n_traces"] for g in json.loads(res.out)["groups"]) == 47


def test_report_reads_parquet(cli, tmp_path, sample_pq):
    res = cli("report", sample_pq, "-o", tmp_path / "rep", "--n-boot", "50")
    assert res.code == 0, res
    assert (tmp_path / "rep" / "report.html").exists()


def test_no_traces_writes_nothing(cli, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    out = tmp_path / "out.parquet"
    res = cli("convert", empty, "--format", "canonical", "-o", out)
    assert res.code == 2 and "no traces found" in res.err
    assert not out.exists()


def test_bad_record_stops_before_writing(cli, tmp_path):
    lines = sample_traces_path().read_text().splitlines()
    src = tmp_path / "mixed.jsonl"
    src.write_text("\n".join([lines[0], "{oops", lines[1]]) + "\n")
    out = tmp_path / "out.parquet"
    res = cli("convert", src, "-o", out)
    assert res.code == 2 and ":2: malformed JSON" in res.err
    assert not out.exists()
    res = cli("convert", src, "-o", out, "--skip-invalid")
    assert res.code == 0 and "wrote 2 traces" in res.out
    assert len(pq.read_table(out).column("trace_id").unique()) == 2
