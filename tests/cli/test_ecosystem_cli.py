"""The README's Inspect / OpenTelemetry / Phoenix examples, run as written, and the label-exchange errors."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.semconv")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces" / "importers"))
from _inspect_logs import write_logs  # noqa: E402
from _otel_files import OtlpJsonExporter, genai_event_run, genai_run, openinference_run, provider  # noqa: E402

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Inspect AI, OpenTelemetry, Phoenix and Langfuse"


def _examples() -> list[list[list[str]]]:
    """The section's bash blocks, as argument lists of their ``seekbench`` commands."""
    text = README.read_text(encoding="utf-8")
    body = text[text.index(SECTION):]
    body = body[:body.index("\n## ", len(SECTION))]
    blocks = []
    for chunk in body.split("```bash\n")[1:]:
        cmds = []
        for line in chunk.split("```", 1)[0].splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("seekbench "):
                cmds.append(shlex.split(line)[1:])
        blocks.append(cmds)
    return blocks


def _spans(path: Path) -> Path:
    tp = provider(OtlpJsonExporter(path, hex_ids=True))
    openinference_run(tp)
    openinference_run(tp, question="Capital of France?", qid="q2")
    genai_run(tp)
    genai_event_run(tp)
    return path


def _as_made_in_phoenix(labels: Path, traces: Path, out: Path) -> int:
    """A human's span annotations as Phoenix's API answers them: the judge's labels, every third changed."""
    from seekbench.traces import LABEL_VALUES, read_traces

    spans = {(t["trace_id"], s["index"]): s["source_ref"]["record_id"] for t in read_traces(traces).traces
             for s in t["steps"]}
    data = []
    for i, line in enumerate(labels.read_text().splitlines()):
        rec = json.loads(line)
        if rec["value"] is None or rec["field"] not in LABEL_VALUES:
            continue
        values = LABEL_VALUES[rec["field"]]
        value = values[(values.index(rec["value"]) + 1) % len(values)] if i % 3 == 0 else rec["value"]
        data.append({"id": f"ann-{i}", "span_id": spans[(rec["trace_id"], rec["step"])], "name": rec["field"],
                     "annotator_kind": "HUMAN", "result": {"label": value, "score": None, "explanation": None},
                     "metadata": {}, "identifier": "", "source": "APP", "user_id": "alice",
                     "created_at": "2026-01-05T10:00:00+00:00", "updated_at": "2026-01-05T10:00:00+00:00"})
    out.write_text(json.dumps({"data": data}, indent=2))
    return len(data)


def test_readme_examples_run(cli, tmp_path, monkeypatch):
    inspect_block, otel_block, phoenix_block = _examples()
    assert [c[0] for c in inspect_block] == ["convert", "annotate", "metrics"]
    shutil.copy(write_logs(tmp_path / "logs")["eval"], tmp_path / "capitals.eval")
    _spans(tmp_path / "spans.jsonl")
    monkeypatch.chdir(tmp_path)
    outs = []
    for cmd in inspect_block + otel_block:
        r = cli(*cmd)
        assert r.code == 0, (cmd, r)
        outs.append(r.out)
    assert "wrote 4 traces" in outs[0] and "mockllm/model" in outs[2]
    assert "4 valid traces" in outs[3] and "format otel" in outs[3]
    annotations = [json.loads(x) for x in Path("phoenix-annotations.jsonl").read_text().splitlines()]
    assert annotations and all(len(a["span_id"]) == 16 and a["annotator_kind"] in ("LLM", "CODE")
                               for a in annotations)
    n = _as_made_in_phoenix(Path("rules.jsonl"), Path("spans.jsonl"), Path("human-annotations.json"))
    r = cli(*phoenix_block[0])
    assert r.code == 0, r
    assert f"wrote {n} labels (alice)" in r.out
    r = cli(*phoenix_block[1])
    assert r.code == 0, r
    assert "rules" in r.out


def test_export_needs_traces_from_spans(cli, tmp_path):
    shutil.copy(write_logs(tmp_path / "logs")["json"], tmp_path / "capitals.json")
    assert cli("annotate", tmp_path / "capitals.json", "--judge", "rules", "-o", tmp_path / "r.jsonl").code == 0
    r = cli("export-labels", tmp_path / "r.jsonl", "--traces", tmp_path / "capitals.json", "--to", "langfuse",
            "-o", tmp_path / "out.jsonl")
    assert r.code == 2 and r.err.count("\n") == 1
    assert "not imported from spans (format inspect)" in r.err
    assert not (tmp_path / "out.jsonl").exists()


def test_import_errors_are_one_line_and_skippable(cli, tmp_path):
    spans = _spans(tmp_path / "spans.jsonl")
    bad = tmp_path / "scores.jsonl"
    bad.write_text(json.dumps({"traceId": "1" * 32, "observationId": "2" * 16, "name": "clarity",
                               "value": "Clear", "dataType": "CATEGORICAL"}) + "\n"
                   + json.dumps({"traceId": "1" * 32, "observationId": "2" * 16, "name": "toxicity",
                                 "value": 0.1, "dataType": "NUMERIC"}) + "\n")
    out = tmp_path / "set.jsonl"
    r = cli("import-labels", bad, "--from", "langfuse", "--traces", spans, "-o", out)
    assert r.code == 2 and r.err.count("\n") == 1 and f"{bad}:1" in r.err
    r = cli("import-labels", bad, "--from", "langfuse", "--traces", spans, "-o", out, "--skip-invalid")
    assert r.code == 2 and "skipped 1 invalid annotations" in r.err and "named 'toxicity'" in r.err
    assert "no labels imported" in r.err and not out.exists()


def test_help_explains(cli):
    for cmd in ("export-labels", "import-labels"):
        r = cli(cmd, "--help")
        assert r.code == 0 and "Example:" in r.out and "span" in r.out
