"""Episodes as canonical traces: monotone completeness, determinism by seed, env fields, downstream tools."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _env_helpers import make_document

from seekbench._errors import UserInputError
from seekbench.env import BELIEFS, DocumentIndex, KeyphraseAgent, make_agent, make_embedder, run_episode, run_episodes
from seekbench.traces import build_tables, validate_trace


@pytest.fixture(scope="module")
def episodes(default_docs):
    docs = default_docs[:4]
    return run_episodes(docs, [make_agent("keyphrase"), make_agent("sentence")], list(BELIEFS),
                        embedder=make_embedder("tfidf"), max_steps=6, seeds=[0, 1], corpus_name="default")


def test_every_episode_is_a_valid_trace_with_env(episodes):
    assert len(episodes) == 4 * 2 * 3 * 2
    assert len({t["trace_id"] for t in episodes}) == len(episodes)
    for t in episodes:
        validate_trace(t)
        env = t["env"]
        assert set(env) == {"document_id", "n_goal_passages", "belief", "max_steps", "theta", "embedder",
                            "final_completeness", "seed"}
        assert env["embedder"] == "tfidf" and env["theta"] == 0.15 and env["max_steps"] == 6
        retrieved = {pid for s in t["steps"] if s["kind"] == "search_result" for pid in s["passage_ids"]}
        assert env["final_completeness"] == round(len(retrieved) / env["n_goal_passages"], 6)
        assert t["metadata"]["retrieved"] == sorted(retrieved, key=lambda p: int(p[1:]))
        assert t["dataset"] == "default" and t["question_id"] == env["document_id"]


def test_completeness_is_monotone_over_steps(episodes):
    for t in episodes:
        values = [s["completeness"] for s in t["steps"]]
        assert all(v is not None for v in values)
        assert values == sorted(values), t["trace_id"]
        curve = t["metadata"]["completeness_curve"]
        assert curve[0] == 0.0 and curve == sorted(curve) and len(curve) == t["env"]["max_steps"] + 1
        assert curve[-1] == t["env"]["final_completeness"]


def test_identical_episodes_with_the_same_seed(default_docs, episodes):
    again = run_episodes(default_docs[:4], [make_agent("keyphrase"), make_agent("sentence")], list(BELIEFS),
                         embedder=make_embedder("tfidf"), max_steps=6, seeds=[0, 1], corpus_name="default")
    assert json.dumps(again, sort_keys=True) == json.dumps(episodes, sort_keys=True)


def test_different_seeds_give_different_queries(episodes):
    by_setting: dict = {}
    for t in episodes:
        key = (t["env"]["document_id"], t["agent"], t["env"]["belief"])
        by_setting.setdefault(key, []).append([s["query"] for s in t["steps"] if s["kind"] == "search"])
    assert any(q[0] != q[1] for q in by_setting.values())


def test_step_layout(episodes):
    t = next(t for t in episodes if t["agent"] == "keyphrase" and t["env"]["belief"] == "trajectory")
    steps = t["steps"]
    assert [s["index"] for s in steps] == list(range(len(steps)))
    for s in steps:
        if s["kind"] == "search_result":
            search = steps[s["depends_on"][0]]
            assert search["kind"] == "search" and search["query"]
            assert [d["id"] for d in s["documents"]] == s["passage_ids"]
            assert [d["rank"] for d in s["documents"]] == list(range(1, len(s["documents"]) + 1))
            assert all(d["score"] > t["env"]["theta"] for d in s["documents"])
    # one self-estimate per step, on the step's first trace step (a reasoning step), paired with the true c
    estimated = [s for s in steps if s.get("self_estimate") is not None]
    assert len(estimated) == t["env"]["max_steps"] and all(s["kind"] == "reasoning" for s in estimated)
    div = t["metadata"]["query_diversity"]
    assert div[0] is None and all(d is not None and 0 <= d <= 2 for d in div[1:])
    assert len(div) == len(t["metadata"]["query_step"]) == sum(s["kind"] == "search" for s in steps)


def test_oracle_self_estimate_is_exact(episodes):
    for t in (t for t in episodes if t["env"]["belief"] == "oracle"):
        for s in t["steps"]:
            if s.get("self_estimate") is not None:
                assert s["self_estimate"] == pytest.approx(s["completeness"], abs=1e-4)


def test_downstream_tables_and_metrics_read_episodes(episodes):
    from seekbench.metrics import summarize

    steps, traces = build_tables(episodes)
    assert set(traces["agent"]) == {"keyphrase", "sentence"}
    with pytest.warns(Warning):
        summary = summarize(steps, traces, n_boot=0)
    assert {g["agent"] for g in summary.groups} == {"keyphrase", "sentence"}
    assert all(math.isnan(g["rqi"]) for g in summary.groups)  # no labels yet: undefined, not zero


def test_agent_without_reasoning_puts_estimate_on_first_search(pets_doc):
    emb = make_embedder("tfidf").fit([p["text"] for s in pets_doc["sections"] for p in s["passages"]])
    t = run_episode(pets_doc, KeyphraseAgent(reasoning=False), index=DocumentIndex(pets_doc, emb), theta=0.1,
                    max_steps=3, belief="deduplicated")
    firsts = [s for s in t["steps"] if s.get("self_estimate") is not None]
    assert len(firsts) == 3 and all(s["kind"] == "search" for s in firsts)
    assert not any(s["kind"] == "reasoning" for s in t["steps"])


def test_argument_errors(pets_doc):
    emb = make_embedder("tfidf").fit(["cats and dogs"])
    index = DocumentIndex(pets_doc, emb)
    with pytest.raises(UserInputError, match="unknown belief"):
        run_episode(pets_doc, KeyphraseAgent(), index=index, theta=0.1, belief="full")
    with pytest.raises(UserInputError, match="at least 1"):
        run_episode(pets_doc, KeyphraseAgent(), index=index, theta=0.1, max_steps=0)
    with pytest.raises(UserInputError, match="share a name"):
        run_episodes([pets_doc], [KeyphraseAgent(), KeyphraseAgent()], ["oracle"], embedder=make_embedder("tfidf"))
    with pytest.raises(UserInputError, match="unknown agent"):
        make_agent("random")
    with pytest.raises(UserInputError, match="cannot fit"):
        make_embedder("tfidf").fit(["a", "the"])


def test_multiple_queries_per_step_capped():
    class Chatty:
        name = "chatty"

        def act(self, belief, **kw):
            from seekbench.env import Action

            return Action(["cats", "dogs", "birds", "cats"], None, None)

    doc = make_document()
    (t,) = run_episodes([doc], [Chatty()], ["trajectory"], embedder=make_embedder("tfidf"), theta=0.1,
                        max_steps=2, queries_per_step=3)
    assert [s["query"] for s in t["steps"] if s["kind"] == "search"] == ["cats", "dogs", "birds"] * 2
    assert t["metadata"]["query_step"] == [1, 1, 1, 2, 2, 2]
    assert t["metadata"]["query_diversity"][3] == 0.0  # an exact repeat
    assert t["metadata"]["self_estimates"] == [None, None]
    assert not any("self_estimate" in s for s in t["steps"])
    assert np.all(np.diff(t["metadata"]["completeness_curve"]) >= 0)


def test_agent_sees_each_step_of_its_episode():
    from seekbench.env import Action, EpisodeStep

    seen: list[EpisodeStep] = []

    class Recorder:
        name = "recorder"

        def act(self, belief, *, step):
            seen.append(step)
            return Action(["cats"])

    doc = make_document()
    (t,) = run_episodes([doc], [Recorder()], ["trajectory"], embedder=make_embedder("tfidf"), theta=0.1,
                        max_steps=3, queries_per_step=2)
    assert [s.number for s in seen] == [1, 2, 3]
    assert {(s.max_steps, s.queries_per_step, s.episode_id) for s in seen} == {(3, 2, t["trace_id"])}
    assert len({id(s.rng) for s in seen}) == 1  # one seeded generator for the whole episode
