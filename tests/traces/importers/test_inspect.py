"""Inspect AI logs (``.eval`` zip and ``.json``) written by inspect_ai, read with it and without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from seekbench import UserInputError
from seekbench.metrics import pass_at_k_by_agent
from seekbench.traces import build_tables, detect_format, read_traces
from seekbench.traces.importers._inspect import iter_records

from _importer_support import load_records
from _inspect_logs import write_logs

pytest.importorskip("inspect_ai")
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return write_logs(tmp_path_factory.mktemp("inspect"))


def _by_id(traces: list[dict]) -> dict[str, dict]:
    """Traces keyed by id, without the sample's position (the two readers list samples in different orders)."""
    out = {}
    for t in traces:
        at = t["source"]["path"]
        t = {**t, "source": {**t["source"], "line": None, "path": None},
             "steps": [{**s, "source_ref": {**s["source_ref"], "line": None,
                                            "path": s["source_ref"]["path"].removeprefix(at)}} for s in t["steps"]]}
        out[t["trace_id"]] = t
    return out


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_log_is_detected_and_each_sample_epoch_is_a_trace(logs, fmt):
    path = logs[fmt]
    assert detect_format(path) == "inspect"
    traces = read_traces(path).traces
    assert len(traces) == 4  # 2 samples x 2 epochs
    assert sorted((t["question_id"], t["metadata"]["inspect"]["epoch"]) for t in traces) == [
        ("q1", 1), ("q1", 2), ("q2", 1), ("q2", 2)]
    q1 = next(t for t in traces if t["question_id"] == "q1")
    assert q1["agent"] == "mockllm/model" and q1["dataset"] == "capitals"
    assert q1["question"] == "What is the capital of France?"
    assert q1["gold_answers"] == ["Paris"] and q1["final_answer"] == "Paris"
    assert q1["correct"] == {"value": True, "source": "source_data",
                             "detail": {"scorer": "includes", "value": "C", "scorers": ["includes", "match"]}}
    # mockllm's tool-call message carries the text "tool call for tool web_search": reasoning beside the call
    assert [s["kind"] for s in q1["steps"]] == ["reasoning", "search", "search_result", "reasoning", "answer"]
    search, result, reasoning = q1["steps"][1:4]
    assert search["tool"] == "web_search" and search["query"] == "search: What is the capital of France?"
    assert [d["title"] for d in result["documents"]] == ["Paris", "Lyon"]
    assert result["documents"][0]["url"] == "https://en.wikipedia.org/wiki/Paris"
    assert result["depends_on"] == [1]
    assert reasoning["text"] == "The first result names Paris."
    q2 = next(t for t in traces if t["question_id"] == "q2")
    assert q2["gold_answers"] == ["Paris", "City of Paris"] and q2["final_answer"] == "Lyon"
    assert q2["correct"]["value"] is False
    assert set(q2["metadata"]["inspect"]["scores"]) == {"includes", "match"}


def test_epochs_are_repeated_runs_for_pass_at_k(logs):
    _, table = build_tables(read_traces(logs["eval"]).traces)
    # q1 right in both epochs, q2 wrong in both: Pass@1 = (2/2 + 0/2) / 2 = 0.5; Pass@2 = (1 + 0) / 2 = 0.5
    row = pass_at_k_by_agent(table, ks=(1, 2)).iloc[0]
    assert (row["pass@1"], row["pass@2"], row["runs_min"]) == (0.5, 0.5, 2)


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_builtin_reader_matches_inspect_ai(logs, fmt):
    ours = load_records(iter_records, logs[fmt], reader="builtin")
    theirs = load_records(iter_records, logs[fmt], reader="inspect")
    assert all(isinstance(t, dict) for t in ours + theirs)
    assert _by_id(ours) == _by_id(theirs)


def test_builtin_reader_reads_deflate_members(logs, tmp_path):
    # The documented layout before Zstandard: the same members, deflated.
    import inspect_ai._util.zipfile  # noqa: F401  (teaches zipfile Zstandard, to read the original)

    src, dst = logs["eval"], tmp_path / "deflate.eval"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            zout.writestr(name, zin.read(name))
    ours = {k: {**v, "source": {**v["source"], "file": None}} for k, v in
            _by_id(load_records(iter_records, dst, reader="builtin")).items()}
    ref = {k: {**v, "source": {**v["source"], "file": None}} for k, v in
           _by_id(load_records(iter_records, src, reader="builtin")).items()}
    for t in list(ours.values()) + list(ref.values()):
        for s in t["steps"]:
            s["source_ref"]["file"] = None
    assert ours == ref


def _convert_without(modules, log, out_path):
    blocked = "; ".join(f"sys.modules[{m!r}] = None" for m in modules)
    code = f"import sys; {blocked}; from seekbench.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, "convert", str(log), "-o", str(out_path)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_zstd_log_on_the_default_install(logs, tmp_path):
    # The default install: no inspect extra (inspect_ai not importable), but zstandard is a core
    # requirement below Python 3.14, so the built-in reader reads Zstandard-compressed .eval logs.
    out = _convert_without(["inspect_ai"], logs["eval"], tmp_path / "o.jsonl")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == len(_by_id(load_records(iter_records, logs["eval"])))


def test_zstd_log_on_a_broken_install_names_the_missing_package(logs, tmp_path):
    # zstandard removed by hand (Python < 3.14): one line naming the package, no traceback.
    out = _convert_without(["inspect_ai", "zstandard"], logs["eval"], tmp_path / "o.jsonl")
    if sys.version_info >= (3, 14):  # zipfile reads Zstandard itself
        assert out.returncode == 0, out.stderr
        return
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "zip archive compressed with Zstandard" in out.stderr and "pip install zstandard" in out.stderr


def test_zip_forced_through_a_text_format_is_told_it_is_a_zip(logs):
    for fmt in ("openai_chat", "canonical", "search_r1"):
        with pytest.raises(UserInputError) as e:
            read_traces(logs["eval"], format=fmt)
        assert "zip archive" in str(e.value) and "UTF-8" not in str(e.value), fmt


def test_not_an_inspect_log(tmp_path):
    bad = tmp_path / "other.eval"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(UserInputError, match="without header.json"):
        list(iter_records(bad, reader="builtin"))


def _log(samples: list) -> dict:
    """A .json log in the documented layout (the shape inspect_ai writes), built by hand for edge cases."""
    return {"version": 2, "status": "success",
            "eval": {"eval_id": "E1", "run_id": "R1", "task": "quiz", "model": "openai/gpt-test",
                     "scorers": [{"name": "model_graded_qa"}, {"name": "exact"}]},
            "samples": samples}


def test_edge_cases_of_the_documented_layout(tmp_path):
    msgs = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Who wrote Hamlet?"}]},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "function": "search", "arguments": {"query": "Hamlet author"}, "type": "function"}]},
            {"role": "tool", "tool_call_id": "c1", "function": "search", "content": "",
             "error": {"type": "timeout", "message": "search timed out"}},
            {"role": "assistant", "content": "attachment://abc"}]
    samples = [
        {"id": 7, "epoch": 1, "input": [{"role": "user", "content": "Who wrote Hamlet?"}], "target": "Shakespeare",
         "messages": msgs, "attachments": {"abc": "William Shakespeare"},
         "scores": {"exact": {"value": 1.0}, "model_graded_qa": {"value": "P", "explanation": "partly"}}},
        {"id": 8, "epoch": 1, "input": "Unscored?", "target": "", "messages": [], "scores": None,
         "error": {"message": "sample failed", "traceback": "..."}},
        "not a sample"]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_log(samples)))
    assert detect_format(path) == "inspect"
    first, second, bad = load_records(iter_records, path, reader="builtin")
    assert first["trace_id"] == "E1:7:1" and first["question_id"] == "7" and first["question"] == "Who wrote Hamlet?"
    assert first["metadata"]["system"] == ["Be brief."] and "prompt" not in first["metadata"]
    assert [s["kind"] for s in first["steps"]] == ["search", "search_result", "answer"]
    assert first["steps"][1]["text"] == "[tool error: search timed out]"
    assert first["final_answer"] == "William Shakespeare"  # the attachment resolved
    # the first scorer in eval.scorers order decides; "P" (partial) is no yes / no
    assert first["correct"] == {"value": None, "source": "source_data",
                                "detail": {"scorer": "model_graded_qa", "value": "P",
                                           "scorers": ["model_graded_qa", "exact"]}}
    assert second["correct"] is None and second["gold_answers"] == [] and second["steps"] == []
    assert second["metadata"]["inspect"]["error"] == "sample failed"
    assert isinstance(bad, UserInputError) and bad.line == 3 and "sample must be object" in str(bad)
