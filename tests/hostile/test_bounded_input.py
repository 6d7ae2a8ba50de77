"""Bounded input (issue 25, item 4): compression bombs, endless lines, numbers past a float, and streams.

Each bomb is a small file built here that expands hugely; the command runs in a subprocess, whose peak
resident memory it reports itself (``VmHWM``), and must end with exit 2 and one line naming the
limit and the option that raises it, no traceback, in under 1 GiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from hostile_support import FIXTURES, REPO, canonical_trace, write_jsonl

from seekbench import UserInputError
from seekbench._limits import DEFAULT_LIMITS, ReadLimits, parse_size
from seekbench.traces import read_traces, spool_stream

GiB = 2**30
INSPECT_JSON = FIXTURES / "capitals.inspect.json"
OPENAI = FIXTURES / "same.openai.jsonl"
EVAL = FIXTURES / "capitals.eval"

#: Runs the CLI, then writes its peak resident memory (bytes) to the file named by SEEKBENCH_TEST_RSS.
# The peak is this process image's own high-water mark (VmHWM). ru_maxrss is not: Linux carries it
# across fork and exec, so a child of a big pytest worker would report the worker's peak.
_RUN = (
    "import os, resource, sys; sys.path.insert(0, {repo!r})\n"
    "from seekbench.cli import main\n"
    "def _peak():\n"
    "    try:\n"
    "        with open('/proc/self/status') as fh:\n"
    "            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith('VmHWM:'))\n"
    "    except (OSError, StopIteration):\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
    "try:\n    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    open(os.environ['SEEKBENCH_TEST_RSS'], 'w').write(str(_peak()))\n"
    "sys.exit(code)\n"
)


def run(*args: object, tmp: Path, stdin=None, input: bytes | None = None) -> tuple[int, str, int]:
    """``seekbench ARGS`` in a subprocess: exit code, stderr, peak resident bytes."""
    rss = tmp / "rss.txt"
    proc = subprocess.run(
        [sys.executable, "-c", _RUN.format(repo=str(REPO)), *map(str, args)],
        capture_output=True,
        stdin=stdin,
        input=input,
        cwd=tmp,
        timeout=300,
        env={**os.environ, "SEEKBENCH_TEST_RSS": str(rss)},
    )
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), int(rss.read_text() or 0)


def assert_one_line(code: int, err: str, *, option: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err and "MemoryError" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("seekbench: error:")]
    assert len(lines) == 1, err
    assert "past the limit" in lines[0] and option in lines[0], err


# ---- compression bombs -------------------------------------------------------------------------------

_HEADER = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}


def _deflate_bomb(path: Path, size: int) -> Path:
    """An .eval zip whose one sample inflates to ``size`` zero bytes (deflate: about 1 KB per MB)."""
    block = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(_HEADER))
        with zf.open("samples/q1_epoch_1.json", "w", force_zip64=True) as fh:
            for _ in range(size >> 20):
                fh.write(block)
    return path


def _zstd_bomb(path: Path, size: int) -> Path:
    """An .eval zip whose one sample is ``size`` zero bytes in Zstandard (zip method 93), as Inspect writes.

    zipfile cannot write method 93 before Python 3.14: the sample is written stored, then its method
    fields are set to 93 in its local and central headers (the second of each: header.json comes first)."""
    import zstandard

    comp = zstandard.ZstdCompressor().compressobj()
    block = b"\0" * (1 << 20)
    payload = b"".join(comp.compress(block) for _ in range(size >> 20)) + comp.flush()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("header.json", json.dumps(_HEADER))
        zf.writestr("samples/q1_epoch_1.json", payload)
    data = bytearray(path.read_bytes())
    for sig, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        pos = data.find(sig, data.find(sig) + 4)  # the sample's header
        data[pos + at : pos + at + 2] = (93).to_bytes(2, "little")
        size_at = pos + (22 if sig == b"PK\x03\x04" else 24)  # the declared uncompressed size: the bomb's
        data[size_at : size_at + 4] = size.to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("build", [_deflate_bomb, _zstd_bomb], ids=["deflate", "zstd"])
def test_an_eval_bomb_stops_at_the_member_limit_in_bounded_memory(tmp_path, build):
    bomb = build(tmp_path / "bomb.eval", 300 << 20)  # 300 MiB of zeros: past the 256 MiB default
    assert bomb.stat().st_size < 1 << 20
    for command in ("validate", "convert"):
        code, err, rss = run(command, bomb, *(["-o", "out.jsonl"] if command == "convert" else []), tmp=tmp_path)
        assert_one_line(code, err, option="--max-member-bytes")
        assert "samples/q1_epoch_1.json" in err
        assert rss < GiB, f"{command}: peak {rss / 2**20:.0f} MiB"


def test_the_member_limit_is_an_option(tmp_path):
    code, err, _ = run("validate", "--max-member-bytes", "1K", EVAL, tmp=tmp_path)
    assert_one_line(code, err, option="--max-member-bytes")
    assert run("validate", "--max-member-bytes", "1M", EVAL, tmp=tmp_path)[0] == 0


def test_a_parquet_row_group_past_the_limit_is_refused_before_it_is_read(tmp_path):
    from seekbench.traces.importers._parquet import write_parquet

    path = tmp_path / "t.parquet"
    write_parquet(path, [canonical_trace("p1", 5), canonical_trace("p2", 8)])
    for command in ("validate", "metrics", "convert"):
        extra = ["-o", "o.jsonl"] if command == "convert" else []
        code, err, _ = run(command, "--max-row-group-bytes", "1K", path, *extra, tmp=tmp_path)
        assert_one_line(code, err, option="--max-row-group-bytes")
        assert "row group 0" in err, err
    assert run("metrics", path, tmp=tmp_path)[0] == 0  # the default holds real row groups


def _dictionary_bomb(path: Path, *, rows: int, size: int, column: str = "question") -> Path:
    """A seekbench Parquet file of one trace of ``rows`` steps whose ``column`` holds one ``size``-byte string
    on every row, dictionary-encoded: the file stores it once (and declares it once), a read decodes it
    ``rows`` times. ``documents``: the string is the text of a document on each step (a nested leaf)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from seekbench.traces.importers._parquet import rows_table
    from seekbench.traces.importers._parquet_layout import SCHEMA

    t = rows_table([canonical_trace("b1", rows)])
    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["x" * size]))
    if column == "documents":
        fields = {f.name: pa.nulls(rows, f.type) for f in SCHEMA.field("documents").type.value_type}
        fields["text"] = text
        docs = pa.StructArray.from_arrays(list(fields.values()), names=list(fields))
        text = pa.ListArray.from_arrays(pa.array(np.arange(rows + 1, dtype=np.int32)), docs)
    t = t.set_column(t.schema.get_field_index(column), column, text)
    # store_schema=False: the Arrow schema would say "dictionary", and a plain read would keep it one.
    pq.write_table(t, path, compression="zstd", store_schema=False)
    return path


@pytest.mark.parametrize("column", ["question", "documents"])
def test_a_parquet_dictionary_bomb_is_refused_as_decoded_in_bounded_memory(tmp_path, column):
    import pyarrow.parquet as pq

    bomb = _dictionary_bomb(tmp_path / "bomb.parquet", rows=2400, size=1 << 20, column=column)  # 2.3 GiB decoded
    assert bomb.stat().st_size < 1 << 20
    assert pq.ParquetFile(bomb).metadata.row_group(0).total_byte_size < 8 << 20  # what the metadata declares
    for command in ("validate", "metrics", "convert"):
        extra = ["-o", "o.jsonl"] if command == "convert" else []
        code, err, rss = run(command, bomb, *extra, tmp=tmp_path)
        assert rss < GiB, f"{command}: peak {rss / 2**20:.0f} MiB"
        if command == "metrics" and column == "documents":
            assert code == 0, err  # its tables read no document text: only each document's rank
            continue
        assert_one_line(code, err, option="--max-row-group-bytes")
        assert "row group 0 (2.3" in err and "GiB decoded)" in err, err
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("command", ["validate", "metrics", "convert"])
def test_the_decoded_row_group_limit_is_an_option(tmp_path, command):
    bomb = _dictionary_bomb(tmp_path / "small.parquet", rows=200, size=100 << 10)  # 20 MB decoded
    extra = ["-o", "o.jsonl"] if command == "convert" else []
    code, err, _ = run(command, "--max-row-group-bytes", "8M", bomb, *extra, tmp=tmp_path)
    assert_one_line(code, err, option="--max-row-group-bytes")
    code, err, _ = run(command, "--max-row-group-bytes", "64M", bomb, *extra, tmp=tmp_path)
    assert code == 0, err


def test_a_parquet_run_of_repeated_numbers_counts_its_values():
    # A constant column encodes in a few bytes per page and decodes to 8 bytes a value.
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from seekbench._limits import check_row_groups

    buf = io.BytesIO()
    pq.write_table(pa.table({"pos": pa.array([7] * 200_000, pa.int64())}), buf)
    meta = pq.ParquetFile(io.BytesIO(buf.getvalue())).metadata
    assert meta.row_group(0).total_byte_size < 100_000  # declared
    check_row_groups(meta, ReadLimits(row_group_bytes=2 << 20), file="n.parquet")
    with pytest.raises(UserInputError, match=r"n.parquet:1: row group 0 \(1.52588 MiB\).*--max-row-group-bytes"):
        check_row_groups(meta, ReadLimits(row_group_bytes=1 << 20), file="n.parquet")


# ---- records without end -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [None, "canonical"])
def test_dev_zero_stops_at_the_record_limit(tmp_path, fmt):
    args = ["validate", "--max-record-bytes", "8M", "/dev/zero"] + (["--format", fmt] if fmt else [])
    code, err, rss = run(*args, tmp=tmp_path)
    assert_one_line(code, err, option="--max-record-bytes")
    assert "/dev/zero" in err and rss < GiB


@pytest.mark.parametrize("command", ["validate", "metrics", "convert"])
def test_the_record_limit_names_the_line_and_is_an_option(tmp_path, command):
    tr = canonical_trace("long")
    tr["question"] = "q" * 8000
    path = write_jsonl(tmp_path / "long.jsonl", [canonical_trace("short"), tr])
    extra = ["-o", "o.jsonl"] if command == "convert" else []
    code, err, _ = run(command, "--max-record-bytes", "4K", path, *extra, tmp=tmp_path)
    assert_one_line(code, err, option="--max-record-bytes")
    assert "long.jsonl:2:" in err
    assert run(command, "--max-record-bytes", "64K", path, *extra, tmp=tmp_path)[0] == 0


def test_a_whole_file_document_counts_as_one_record(tmp_path):
    limits = ReadLimits(record_bytes=1000)
    with pytest.raises(UserInputError, match="--max-record-bytes"):
        read_traces(INSPECT_JSON, limits=limits)
    assert read_traces(INSPECT_JSON).traces


def test_the_record_limit_holds_past_skip_invalid():
    with pytest.raises(UserInputError, match="per record"):
        read_traces(OPENAI, skip_invalid=True, limits=ReadLimits(record_bytes=100))


def test_sizes_read_as_the_options_give_them():
    assert parse_size("256M") == DEFAULT_LIMITS.record_bytes
    assert (parse_size("64k"), parse_size("2GiB"), parse_size("100")) == (64 << 10, 2 << 30, 100)
    for bad in ("0", "-1", "12X", "", "1.5G"):
        with pytest.raises(UserInputError, match="not a size"):
            parse_size(bad)


# ---- numbers past a float ----------------------------------------------------------------------------


def test_1e999_in_canonical_jsonl_is_refused_at_its_path_by_every_command(tmp_path):
    path = tmp_path / "inf.jsonl"
    path.write_text(json.dumps(canonical_trace()).replace('"score": 0.5', '"score": -1e999') + "\n")
    for args in (["validate"], ["convert", "-o", "o.jsonl"], ["convert", "--to", "parquet", "-o", "o.parquet"],
                 ["metrics"]):
        code, err, _ = run(*args, path, tmp=tmp_path)
        assert code == 2 and "Traceback" not in err, err
        assert "inf.jsonl:1, trace c1, at $.steps[2].documents[0].score: the number -1e999" in err, err
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "o.parquet").exists()


def test_1e999_in_a_json_document_is_refused_at_its_path(tmp_path):
    text = (FIXTURES / "parallel.openai.json").read_text()
    doc = json.loads(text)
    where = "$[0].extra" if isinstance(doc, list) else "$.extra"
    path = tmp_path / "doc.json"
    path.write_text(text.replace("{", '{"extra": 1e999, ', 1))
    with pytest.raises(UserInputError) as e:
        read_traces(path)
    assert e.value.path == where and "the number 1e999" in e.value.message, e.value


def test_1e999_in_openai_chat_arguments_is_refused_at_its_path(tmp_path):
    rec = json.loads(OPENAI.read_text().splitlines()[0])
    msg = next(i for i, m in enumerate(rec["messages"]) if m.get("tool_calls"))
    rec["messages"][msg]["tool_calls"][0]["function"]["arguments"] = '{"query": "x", "top_k": 1e999}'
    path = write_jsonl(tmp_path / "chat.jsonl", [rec])
    with pytest.raises(UserInputError) as e:
        read_traces(path)
    assert e.value.path == f"$.messages[{msg}].tool_calls[0].function.arguments.top_k", e.value
    assert "1e999" in e.value.message


def test_1e999_in_an_eval_member_is_refused(tmp_path):
    doc = json.loads(INSPECT_JSON.read_text())
    path = tmp_path / "inf.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({k: v for k, v in doc.items() if k != "samples"}))
        for s in doc["samples"]:
            text = json.dumps({**s, "extra": 0.25}).replace('"extra": 0.25', '"extra": 1e999')
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", text)
    with pytest.raises(UserInputError, match=r"at \$\.extra: .*the number 1e999"):
        read_traces(path, reader="builtin")


# ---- streams -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["convert", "metrics", "validate"])
def test_stdin_is_read_whole(tmp_path, command):
    extra = ["-o", "o.jsonl"] if command == "convert" else []
    code, err, _ = run(command, "-", *extra, tmp=tmp_path, input=OPENAI.read_bytes())
    assert code == 0, err
    if command == "convert":
        assert len(read_traces(tmp_path / "o.jsonl").traces) == 3


@pytest.mark.parametrize("command", ["convert", "metrics"])
@pytest.mark.parametrize("source", [OPENAI, EVAL], ids=["jsonl", "eval"])
def test_a_fifo_is_read_whole(tmp_path, command, source):
    fifo = tmp_path / "traces.fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as fh:
            fh.write(source.read_bytes())

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    extra = ["-o", "o.jsonl"] if command == "convert" else []
    code, err, _ = run(command, fifo, *extra, tmp=tmp_path)
    t.join(timeout=10)
    assert code == 0, err


def test_process_substitution_is_read_whole(tmp_path):
    script = f'{sys.executable} -c "$RUN" convert <(cat {OPENAI}) -o o.jsonl'
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "RUN": _RUN.format(repo=str(REPO)),
                               "SEEKBENCH_TEST_RSS": str(tmp_path / "rss")})
    assert proc.returncode == 0, proc.stderr
    assert len(read_traces(tmp_path / "o.jsonl").traces) == 3


def test_spooling_stops_at_a_run_without_newline_across_blocks(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"{}\n" + b"x" * (3 << 20) + b"\n")  # one 3 MiB line, read in 1 MiB blocks
    with pytest.raises(UserInputError, match=r"src:2: .*--max-record-bytes"):
        spool_stream(src, tmp_path / "a", limits=ReadLimits(record_bytes=2 << 20))
    assert spool_stream(src, tmp_path / "b", limits=ReadLimits(record_bytes=4 << 20)).read_bytes() == src.read_bytes()


def test_a_parquet_file_without_seekbench_columns_is_one_line_in_the_scale_path(tmp_path):
    # Found while measuring the bombs: the fragment reader asked for dictionary columns the file lacks (KeyError).
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"trace_id": ["a", "b"]}), path)
    code, err, _ = run("metrics", path, tmp=tmp_path)
    assert code == 2 and "Traceback" not in err and "not a seekbench trace table" in err, err
