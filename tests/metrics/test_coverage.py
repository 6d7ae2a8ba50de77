"""Reference-step coverage (PrimeSeeker) with the offline rule matcher and an LLM judge on the local server.

Sample skeleton (written for the embedded sample's questions q01 and q02):

    q01  s1 intermediate "Idris Pellam was born in Orlesk"  evidence "born in Orlesk"
         s2 answer       "Orlesk lies on the River Sallow" evidence ["River Sallow", "Orlesk"]
    q02  s1 intermediate "Idris Pellam built the first working tide clock" evidence "built the first working tide clock"
         s2 answer       "Idris Pellam died in 1863"  evidence "died in the winter of 1863" or "1794-1863"

Hand derivation from the sample's observations (doc ids vsy-*):
  q01 careful-planner: s1 (vsy-01) s2 (vsy-06) covered, correct -> 2/2 = 1, process min(.5, 1) = .5, reward 1.5
  q01 eager-answerer:  same documents, correct -> 1
  q01 looper:          s1 at its third search, s2 at its fourth, correct -> 1
  q01 synthesizer:     only vsy-01/03/39: s1 covered, s2 not; wrong answer -> 1/2, process .5, reward .5
  q02 careful-planner: s1 (vsy-02) s2 (vsy-03) covered, correct -> 1
  q02 eager-answerer:  vsy-36/02/20: s1 only; wrong -> 1/2
  q02 looper:          s1 and s2 covered but no answer (incorrect) -> 1/2 (the answer statement is not credited)
  q02 synthesizer:     s1 and s2, correct -> 1
"""

from __future__ import annotations

import json
import math

import pytest

from seekbench import UndefinedMetricWarning, UserInputError
from seekbench.data import sample_traces_path
from seekbench.metrics import (
    RuleMatcher,
    SkeletonStep,
    load_skeleton,
    public_history,
    reference_step_coverage,
    reference_step_coverage_score,
)
from seekbench.traces import read_traces

SKELETON = [
    {"question_id": "q01", "steps": [
        {"id": "s1", "role": "intermediate", "statement": "Idris Pellam was born in Orlesk", "evidence": ["born in Orlesk"]},
        {"id": "s2", "role": "answer", "statement": "Orlesk lies on the River Sallow",
         "evidence": [["River Sallow", "Orlesk"]]}]},
    {"question_id": "q02", "steps": [
        {"id": "s1", "role": "intermediate", "statement": "Idris Pellam built the first working tide clock",
         "evidence": ["built the first working tide clock"]},
        {"id": "s2", "role": "answer", "statement": "Idris Pellam died in 1863",
         "evidence": ["died in the winter of 1863", "1794-1863"]}]},
]
EXPECTED = {
    ("careful-planner", "q01"): 1.0, ("eager-answerer", "q01"): 1.0, ("looper", "q01"): 1.0,
    ("synthesizer", "q01"): 0.5, ("careful-planner", "q02"): 1.0, ("eager-answerer", "q02"): 0.5,
    ("looper", "q02"): 0.5, ("synthesizer", "q02"): 1.0,
}


@pytest.fixture(scope="module")
def sample():
    return read_traces(sample_traces_path()).traces


@pytest.fixture
def skeleton_file(tmp_path):
    p = tmp_path / "skeleton.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in SKELETON), encoding="utf-8")
    return p


def test_sample_coverage_offline(sample, skeleton_file):
    res = reference_step_coverage(sample, skeleton_file)
    pt = res.per_trace
    assert res.no_skeleton == 48 - 8 and len(pt) == 8
    got = {(r.agent, r.question_id): r.coverage for r in pt.itertuples()}
    assert got == EXPECTED
    syn = pt[(pt.agent == "synthesizer") & (pt.question_id == "q01")].iloc[0]
    assert (syn.covered_intermediate, syn.covered_answer, syn.process_score, syn.reward) == (1, 0, 0.5, 0.5)
    looper = pt[(pt.agent == "looper") & (pt.question_id == "q02")].iloc[0]
    assert looper.covered_answer == 1 and looper.credited == 1  # found, but not credited: wrong trajectory
    assert set(pt["intermediate_coverage"]) == {1.0}
    cp = pt[(pt.agent == "careful-planner") & (pt.question_id == "q01")].iloc[0]
    assert (cp.process_score, cp.reward) == (0.5, 1.5)
    s = res.summary().set_index("agent")
    assert s.loc["synthesizer", "coverage"] == 0.75 and s.loc["looper", "coverage"] == 0.75
    assert reference_step_coverage_score(sample, skeleton_file) == pytest.approx(sum(EXPECTED.values()) / 8)


def test_cap_and_step_credit(sample, skeleton_file):
    pt = reference_step_coverage(sample, skeleton_file, cap=2.0, step_credit=1.0).per_trace
    # uncapped, one unit per credited statement: process = credited; reward = correct + credited
    assert list(pt["process_score"]) == list(pt["credited"])
    pt = reference_step_coverage(sample, skeleton_file, cap=0.25).per_trace
    assert set(pt["process_score"]) == {0.25}


def trace(steps, *, correct=True):
    t = {"trace_id": "t", "agent": "a", "question_id": "q", "question": "Q?", "steps": steps}
    if correct is not None:
        t["correct"] = {"value": correct, "source": "human"}
    return t


def test_queries_do_not_establish_coverage_by_default():
    sk = {"q": [SkeletonStep("s1", "Orlesk", "intermediate")]}
    t = trace([{"kind": "search", "query": "Idris Pellam Orlesk"}, {"kind": "search_result", "text": "nothing"}])
    assert reference_step_coverage([t], sk).per_trace["coverage"].iloc[0] == 0.0
    res = reference_step_coverage([t], sk, history="queries_and_observations")
    assert res.per_trace["coverage"].iloc[0] == 1.0
    assert public_history(t) == ["Idris Pellam Orlesk", "nothing"]


def test_exact_and_normalised_matching():
    m = RuleMatcher()
    obs = {"steps": [{"kind": "search_result", "documents": [{"title": "Pellam", "text": "Born in the town of Orlesk."}]}]}
    steps = [SkeletonStep("exact", "x", "intermediate", ("town of Orlesk",)),
             SkeletonStep("norm", "x", "intermediate", ("BORN IN THE TOWN OF ORLESK!",)),
             SkeletonStep("words", "x", "intermediate", ("own of Orl",)),  # exact substring counts
             SkeletonStep("wordsn", "x", "intermediate", ("OWN OF ORL",)),  # normalised: word boundaries only
             SkeletonStep("all", "x", "intermediate", (("Pellam", "Orlesk"),)),
             SkeletonStep("allmiss", "x", "intermediate", (("Pellam", "Kessarby"),)),
             SkeletonStep("stmt", "Pellam born in the town of Orlesk", "intermediate")]
    assert m.match_trace(obs, steps) == {"exact": True, "norm": True, "words": True, "wordsn": False, "all": True,
                                        "allmiss": False, "stmt": True}


def test_unknown_correctness():
    sk = {"q": [SkeletonStep("s1", "a", "intermediate"), SkeletonStep("s2", "b", "answer")]}
    found_both = [{"kind": "search_result", "text": "a b"}]
    found_a = [{"kind": "search_result", "text": "a"}]
    pt = reference_step_coverage([trace(found_both, correct=None)], sk).per_trace.iloc[0]
    assert math.isnan(pt.coverage) and math.isnan(pt.process_score) and pt.intermediate_coverage == 1.0
    pt = reference_step_coverage([trace(found_a, correct=None)], sk).per_trace.iloc[0]
    assert pt.coverage == 0.5 and math.isnan(pt.reward)  # defined: the answer statement was not found anyway
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(reference_step_coverage_score([trace(found_both, correct=None)], sk))


class _Undecided:
    """A matcher that could not decide some statements (a failed or abstaining judge): None."""

    def __init__(self, decided: dict):
        self.decided = decided

    def match(self, pairs):
        return {str(t["trace_id"]): dict(self.decided) for t, _ in pairs}


def test_undecided_statements_leave_coverage_undefined():
    sk = {"q": [SkeletonStep("s1", "a", "intermediate"), SkeletonStep("s2", "b", "intermediate"),
                SkeletonStep("s3", "c", "answer")]}
    tr = trace([{"kind": "search_result", "text": "a b c"}])
    # every statement decided: 3 of 3 covered, the answer credited because the trace is correct
    pt = reference_step_coverage([tr], sk, matcher=_Undecided({"s1": True, "s2": True, "s3": True})).per_trace.iloc[0]
    assert pt.coverage == 1.0 and pt.unscored_statements == 0
    # s2 undecided: coverage is unknown (at least 2/3, at most 3/3), not 2/3; intermediate coverage too
    pt = reference_step_coverage([tr], sk, matcher=_Undecided({"s1": True, "s2": None, "s3": True})).per_trace.iloc[0]
    assert math.isnan(pt.coverage) and math.isnan(pt.process_score) and math.isnan(pt.intermediate_coverage)
    assert pt.unscored_statements == 1
    # all undecided (a dead endpoint): undefined, never 0.0
    res = reference_step_coverage([tr], sk, matcher=_Undecided({"s1": None, "s2": None, "s3": None}))
    assert math.isnan(res.per_trace.iloc[0].coverage)
    row = res.summary().iloc[0]
    assert row.undefined_coverage == 1 and row.unscored_statements == 3 and math.isnan(row.coverage)


def test_skeleton_errors(tmp_path):
    def load(recs):
        p = tmp_path / "s.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        return load_skeleton(p)

    with pytest.raises(UserInputError, match="'statement'"):
        load([{"question_id": "q", "steps": [{"role": "answer"}]}])
    with pytest.raises(UserInputError, match="role is 'final answer'"):
        load([{"question_id": "q", "steps": [{"statement": "x", "role": "final answer"}]}])
    with pytest.raises(UserInputError, match="appears twice"):
        load([{"question_id": "q", "steps": [{"statement": "x"}]}] * 2)
    with pytest.raises(UserInputError, match="question_id' or 'question"):
        load([{"steps": [{"statement": "x"}]}])
    sk = load([{"question": "The Question?", "steps": [{"statement": "x", "role": "answer_supporting"}]}])
    assert sk["text:question"][0].role == "answer"
    t = trace([{"kind": "search_result", "text": "x"}])
    t.pop("question_id")
    t["question"] = "the question"
    assert reference_step_coverage([t], sk).per_trace["coverage"].iloc[0] == 1.0


def test_llm_coverage_judge_on_the_local_server(tmp_path, sample, skeleton_file):
    from seekbench.annotate import load_judge_config
    from seekbench.answers import LLMCoverageMatcher
    from seekbench.testing import OpenAIServer

    def policy(request):
        user = request["messages"][-1]["content"]
        hist = json.loads(user.split("<<<HISTORY_JSON\n", 1)[1].split("\nHISTORY_JSON>>>", 1)[0])
        stmts = json.loads(user.split("<<<STATEMENTS_JSON\n", 1)[1].split("\nSTATEMENTS_JSON>>>", 1)[0])
        text = " ".join(h["text"] for h in hist if h["kind"] == "observation")
        # scripted judge: a statement is covered when its last word occurs in an observation
        return json.dumps({"covered": {s["id"]: s["statement"].split()[-1] in text for s in stmts}})

    cfg = load_judge_config("answer-local").with_overrides(backoff_base_s=0.01, timeout_s=2.0)
    with OpenAIServer(policy=policy) as srv:
        m = LLMCoverageMatcher(cfg, cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        res = reference_step_coverage(sample, skeleton_file, matcher=m)
        n = len([r for r in srv.requests if r["path"] == "/v1/chat/completions"])
    assert n == 8 and res.options["matcher"] == "llm:answer-local"
    got = {(r.agent, r.question_id): r.coverage for r in res.per_trace.itertuples()}
    # last words: "Orlesk", "Sallow", "clock", "1863": the same coverage as the rule matcher on the sample
    assert got == EXPECTED
    assert all(v.status == "scored" for v in m.votes.values())


def test_old_coverage_names_still_work_with_a_future_warning():
    import seekbench.metrics as m

    for old, new in (("coverage_score", reference_step_coverage_score),
                     ("CoverageResult", m.ReferenceStepCoverageResult)):
        with pytest.warns(FutureWarning, match=f"seekbench.metrics.{old} is renamed"):
            assert getattr(m, old) is new
    with pytest.raises(AttributeError):
        m.no_such_name  # noqa: B018
