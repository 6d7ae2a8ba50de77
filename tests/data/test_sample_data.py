"""The embedded sample data: reproducible from its script, valid, and showing the behaviours it promises."""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "make_sample_data.py"
FILES = {
    "traces": Path("seekbench") / "data" / "sample_traces.jsonl",
    "human": Path("seekbench") / "data" / "sample_human.jsonl",
    "second": Path("seekbench") / "data" / "sample_second_annotator.jsonl",
    "search_r1": Path("seekbench") / "data" / "sample_search_r1.jsonl",
    "release": Path("seekbench") / "data" / "sample_release.jsonl",
}
AGENTS = {"careful-planner", "eager-answerer", "looper", "synthesizer"}


def _read(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _validator(name: str):
    with open(REPO / "seekbench" / "schemas" / f"{name}.schema.json", encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _norm(text: str) -> str:
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _e_at_answer(trace: dict) -> int | None:
    """Cumulative E = max(C + Q) over labeled observations before the answer; None if no answer."""
    e = 0
    for st in trace["steps"]:
        if st["kind"] == "answer":
            return e
        lab = st.get("labels") or {}
        if st["kind"] == "search_result" and lab.get("clarity") and lab.get("sufficiency"):
            e = max(e, (lab["clarity"] == "Clear") + (lab["sufficiency"] == "Sufficient"))
    return None


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    subprocess.run([sys.executable, str(SCRIPT), "--out-dir", str(out)], check=True, capture_output=True,
                   text=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def traces() -> list[dict]:
    return _read(REPO / FILES["traces"])


def test_rerun_is_byte_identical(regenerated):
    for rel in FILES.values():
        assert (regenerated / rel).read_bytes() == (REPO / rel).read_bytes(), f"{rel} differs from a fresh run"


def test_rerun_twice_is_byte_identical(regenerated, tmp_path):
    subprocess.run([sys.executable, str(SCRIPT), "--out-dir", str(tmp_path)], check=True, capture_output=True,
                   text=True, timeout=300)
    for rel in FILES.values():
        assert (tmp_path / rel).read_bytes() == (regenerated / rel).read_bytes()


def test_sample_traces_path_points_at_the_file():
    from seekbench.data import __all__ as exported
    from seekbench.data import sample_traces_path

    assert "sample_traces_path" in exported
    path = sample_traces_path()
    assert isinstance(path, Path) and path.is_file()
    assert path.resolve() == (REPO / FILES["traces"]).resolve()


def test_every_trace_validates(traces):
    v = _validator("trace")
    for tr in traces:
        errors = sorted(v.iter_errors(tr), key=lambda e: list(e.absolute_path))
        assert not errors, f"{tr['trace_id']}: {errors[0].message}"


def test_every_annotation_record_validates():
    v = _validator("annotation")
    for key in ("human", "second"):
        recs = _read(REPO / FILES[key])
        assert recs
        for i, rec in enumerate(recs, start=1):
            errors = list(v.iter_errors(rec))
            assert not errors, f"{FILES[key]}:{i}: {errors[0].message}"


def test_shape_and_ids(traces):
    assert len(traces) == 48
    assert {t["agent"] for t in traces} == AGENTS
    assert Counter(t["agent"] for t in traces) == {a: 12 for a in AGENTS}
    assert len({t["question_id"] for t in traces}) == 12
    assert [t["trace_id"] for t in traces] == sorted(t["trace_id"] for t in traces)
    for t in traces:
        assert t["trace_id"] == f"sample-{t['agent']}-{t['question_id']}"
        assert t["schema_version"] == "1.0" and t["dataset"] == "sample-qa"
        assert t["inline_labels"] == {"rater": "sample-annotator", "kind": "human"}
        assert t["correct"]["source"] == "human"
        assert 5 <= len(t["steps"]) <= 20
        for i, st in enumerate(t["steps"]):
            assert st["index"] == i
            assert st["depends_on"] == ([i - 1] if i else [])
            if st["kind"] == "search_result":
                assert len(st["documents"]) == 3
                assert [d["rank"] for d in st["documents"]] == [1, 2, 3]


def test_required_situations(traces):
    cut_off = [t for t in traces if not any(s["kind"] == "answer" for s in t["steps"])]
    assert cut_off and all(t["final_answer"] is None for t in cut_off)
    assert all(len(t["steps"]) == 20 for t in cut_off)  # the step budget
    assert any(not any(s["kind"] == "search" for s in t["steps"]) for t in traces)
    answered_low = [t for t in traces if (e := _e_at_answer(t)) is not None and e < 2]
    assert answered_low
    assert any(not t["correct"]["value"] for t in answered_low)
    answered = [t for t in traces if t["final_answer"] is not None]
    em = [any(_norm(t["final_answer"]) == _norm(g) for g in t["gold_answers"]) for t in answered]
    judged = [t["correct"]["value"] for t in answered]
    assert any(e and j for e, j in zip(em, judged))  # correct and matching gold after normalisation
    assert any(j and not e for e, j in zip(em, judged))  # judged correct, but no exact match
    assert any(not j for j in judged)  # incorrect answers
    assert any(t["final_answer"] != g and _norm(t["final_answer"]) == _norm(g)
               for t in answered for g in t["gold_answers"])  # matches only after normalisation
    steps = [s for t in traces for s in t["steps"] if s["kind"] != "answer"]
    assert any("labels" not in s for s in steps if s["kind"] == "search_result")  # unlabeled observations
    assert any(None in (s.get("labels") or {}).values() for s in steps)  # a single missing field


def test_agent_behaviours(traces):
    by = {a: [t for t in traces if t["agent"] == a] for a in AGENTS}
    for t in by["careful-planner"]:
        assert t["correct"]["value"] and _e_at_answer(t) == 2
    assert sum(_e_at_answer(t) < 2 for t in by["eager-answerer"]) >= 6
    assert sum(not t["correct"]["value"] for t in by["eager-answerer"]) >= 6
    assert sum(t["final_answer"] is None for t in by["looper"]) >= 2
    assert all(t["final_answer"] is not None for a in AGENTS - {"looper"} for t in by[a])


def test_search_type_labels_follow_the_queries(traces):
    for t in traces:
        seen: list[str] = []
        for st in t["steps"]:
            if st["kind"] != "search" or "labels" not in st:
                continue
            stype = st["labels"]["search_type"]
            q = _norm(st["query"])
            if not seen:
                assert stype == "InitialQuery", t["trace_id"]
            elif q in seen:
                assert stype == "RepeatQuery", t["trace_id"]
            else:
                assert stype in ("RefinedQuery", "FollowUpQuery"), t["trace_id"]
            seen.append(q)


def test_annotation_sets_match_the_inline_labels(traces):
    human = _read(REPO / FILES["human"])
    second = _read(REPO / FILES["second"])
    inline = {}
    for t in traces:
        for st in t["steps"]:
            for f, v in (st.get("labels") or {}).items():
                inline[(t["trace_id"], st["index"], f)] = v
    for rec in human:
        assert rec["rater"] == "sample-annotator"
        assert rec["provenance"]["kind"] == "human" and rec["provenance"]["time"] == "2026-11-30T00:00:00Z"
        key = (rec["trace_id"], rec["step"], rec["field"])
        assert inline.get(key) == rec["value"]
        if rec["value"] is None:
            assert rec["unscored_reason"]
    labeled = {k for k, v in inline.items() if v is not None}
    assert labeled == {(r["trace_id"], r["step"], r["field"]) for r in human if r["value"] is not None}

    assert [(r["trace_id"], r["step"], r["field"]) for r in second] == \
        [(r["trace_id"], r["step"], r["field"]) for r in human]
    assert {r["rater"] for r in second} == {"sample-annotator-2"}
    pairs = [(a, b) for a, b in zip(human, second) if a["value"] is not None]
    assert all(a["value"] == b["value"] for a, b in pairs
               if a["field"] in ("reasoning_type", "search_type"))
    flippable = [(a, b) for a, b in pairs if a["field"] in ("grounding", "clarity", "sufficiency")]
    rate = sum(a["value"] != b["value"] for a, b in flippable) / len(flippable)
    assert 0.10 <= rate <= 0.20, rate


def _steps(trace: dict) -> list[tuple]:
    """What a source format can carry of a step: kind, text or query, documents' titles and texts."""
    return [
        (st["kind"], st.get("query") if st["kind"] == "search" else st.get("text") if st["kind"] != "search_result"
         else None, [(d["title"], d["text"]) for d in st.get("documents") or []])
        for st in trace["steps"]
    ]


@pytest.mark.parametrize("which,fmt,prefix", [("search_r1", "search_r1", "r1-"), ("release", "seekbench", "release-")])
def test_the_source_format_samples_import_to_the_sample_traces_they_render(traces, which, fmt, prefix):
    """Search-R1 and release files written from six sample traces each read back as those traces:
    same question, gold, answer and steps; the release file with the same labels, the Search-R1 run
    with none (it carries none)."""
    from seekbench.traces import read_traces

    by_id = {t["trace_id"]: t for t in traces}
    read = read_traces(REPO / FILES[which], format=fmt).traces
    assert len(read) == 6 and len({t["agent"] for t in read}) == 2
    for t in read:
        original = by_id[t["trace_id"].replace(prefix, "sample-", 1)]
        assert (t["agent"], t["question"], t["gold_answers"], t["final_answer"]) == (
            original["agent"], original["question"], original["gold_answers"], original["final_answer"])
        assert _steps(t) == _steps(original)
        labels = [{f: v for f, v in (st.get("labels") or {}).items() if v is not None} for st in original["steps"]]
        if which == "release":
            assert [st.get("labels") or {} for st in t["steps"]] == labels
            assert t["correct"]["value"] == original["correct"]["value"]
        else:
            assert any(labels) and not any(st.get("labels") for st in t["steps"])
