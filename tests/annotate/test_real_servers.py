"""The judge against servers that behave like real ones (over HTTP on 127.0.0.1, nothing patched):
small models that label only some steps, servers that refuse a response format, metadata of the model."""

from __future__ import annotations

import json

from annotate_support import make_trace, read_jsonl

from seekbench.annotate import JudgeCache, annotate
from seekbench.testing import OpenAIServer, PolicyError, ServerProfile, ShippedPrompts, StepLabeler


def chats(srv):
    return [r for r in srv.requests if r["path"] == "/v1/chat/completions"]


def bodies(log_path):
    return [json.loads(line) for line in log_path.read_text().splitlines()]


class Recording:
    """A policy that keeps each request body it answers (to look at what was asked)."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def __call__(self, request):
        self.seen.append(request)
        return self.inner(request)


def judged(recs):
    return {(r["step"], r["field"]): r for r in recs if r["provenance"]["kind"] == "judge"}


def test_partial_answer_keeps_its_labels_and_the_repair_asks_only_for_the_missing(tmp_path, judge_cfg):
    # make_trace("p", 10): steps 0-8 cycle reasoning, search, search_result; 9 is the answer. Step 1 is
    # InitialQuery and step 7 repeats its query (RepeatQuery): both by rule, they owe no label.
    # The labeler's first answer has entries for steps 0..8; omit_every=2 drops the 2nd, 4th, 6th
    # and 8th entries: steps 1, 3, 5, 7. Of those, 3 (reasoning) and 5 (search_result) owe labels.
    policy = Recording(ShippedPrompts(StepLabeler(omit_every=2)))
    tr = make_trace("p", 10)
    with OpenAIServer(policy=policy) as srv:
        s = annotate([tr], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        assert len(chats(srv)) == 2
    first = json.loads(policy.inner(policy.seen[0]))["labels"]
    missing = [3, 5]
    repair = policy.seen[1]["messages"][-1]["content"]
    assert f"Label only these steps: {', '.join(map(str, missing))}." in repair
    assert repair.count("REPAIR 1 of 2") == 1
    recs = read_jsonl(tmp_path / "o.jsonl")
    by = judged(recs)
    assert all(r["value"] is not None for r in by.values())
    assert {s for (s, _), r in by.items() if r["provenance"]["from_repair"] == 1} == set(missing)
    assert {s for (s, _), r in by.items() if r["provenance"]["from_repair"] == 0} == {
        lab["step"] for lab in first}
    assert s.labeled == 1 and s.repairs == 1 and s.repaired_labels == sum(
        1 for (st, _), r in by.items() if st in missing and r["provenance"]["kind"] == "judge")


def test_a_step_that_stays_missing_is_the_only_unscored_one(tmp_path, judge_cfg):
    cfg = judge_cfg.with_overrides(max_repairs=3)
    tr = make_trace("s", 7)  # 0 reasoning, 1 search (rule), 2 result, 3 reasoning, 4 search, 5 result, 6 answer
    with OpenAIServer(policy=ShippedPrompts(StepLabeler(never={3}))) as srv:
        s = annotate([tr], cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite", base_url=srv.base_url)
        sent = chats(srv)
    # the ask, repair 1 (answered {"labels": []}) and repair 2 (the same answer word for word): no repair 3
    assert len(sent) == 3 and len({r["body_sha256"] for r in sent}) == 3
    by = judged(read_jsonl(tmp_path / "o.jsonl"))
    unscored = {k for k, r in by.items() if r["value"] is None}
    assert unscored == {(3, "reasoning_type"), (3, "grounding")}
    reason = by[(3, "grounding")]["unscored_reason"]
    assert reason.startswith("invalid_output: step 3 (reasoning) lacks reasoning_type, grounding")
    assert "after 2 repairs" in reason
    assert s.unscored == 1 and s.partial == 1 and s.judge_labels == len(by) - 2


def test_llama_cpp_500_on_json_schema_falls_back_and_is_remembered(tmp_path, judge_cfg, capsys):
    assert judge_cfg.response_format == "auto"
    cache = tmp_path / "c.sqlite"
    traces = [make_trace(f"l{n}", n) for n in (4, 7)]
    with OpenAIServer(profile=ServerProfile.llama_cpp(context_tokens=32768, slots=1)) as srv:
        s = annotate(traces, judge_cfg, tmp_path / "o.jsonl", cache=cache, base_url=srv.base_url)
        sent = chats(srv)
        refused = [r for r in sent if r["status"] == 500]
        assert len(refused) == 1  # not retried: a refused parameter is no transient failure
        assert s.labeled == 2 and s.failed == 0 and s.concurrency == 1  # the server's one slot
        err = capsys.readouterr().err
        assert err.count("refused response_format json_schema") == 1
        assert 'response_format type must be one of "json_object" or "text", but got: json_schema' in err
        assert err.count("response_format auto -> json_object") == 1
        recs = read_jsonl(tmp_path / "o.jsonl")
        prov = next(iter(judged(recs).values()))["provenance"]
        assert prov["response_format"] == "json_object" and prov["model"] == "local-model"
        assert prov["served_model"] == "SmolLM2-135M-Instruct-Q8_0.gguf"
        assert prov["model_file"] == "SmolLM2-135M-Instruct-Q8_0.gguf"
        assert prov["server_models"] == ["seekbench-mock"]
        # the next run remembers: no json_schema request at all, and the cached answers are found
        with JudgeCache(cache) as jc:
            assert jc.format_verdicts(srv.base_url.rstrip("/"), "local-model")["json_schema"][0] is False
        n = len(sent)
        s2 = annotate(traces, judge_cfg, tmp_path / "o2.jsonl", cache=cache, base_url=srv.base_url)
        assert len(chats(srv)) == n and s2.from_cache == 2


def test_a_400_naming_response_format_falls_back_to_plain_text(tmp_path, judge_cfg):
    profile = ServerProfile(response_formats=("text",))
    with OpenAIServer(profile=profile) as srv:
        s = annotate([make_trace("t", 7)], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        statuses = [r["status"] for r in chats(srv)]
    assert statuses == [400, 400, 200] and s.labeled == 1
    prov = next(iter(judged(read_jsonl(tmp_path / "o.jsonl")).values()))["provenance"]
    assert prov["response_format"] == "text"


def test_a_fixed_format_refused_fails_at_once_with_the_whole_message(tmp_path, judge_cfg):
    cfg = judge_cfg.with_overrides(response_format="json_schema")
    with OpenAIServer(profile=ServerProfile.llama_cpp()) as srv:
        s = annotate([make_trace("f", 7)], cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=srv.base_url)
        assert len(chats(srv)) == 1
    assert s.failed == 1
    assert 'response_format type must be one of "json_object" or "text", but got: json_schema' in s.first_error


def test_error_lines_carry_the_whole_server_message(tmp_path, judge_cfg):
    long = "the server explains at length: " + "x" * 5000 + " END-OF-MESSAGE"

    def refuse(request):
        raise PolicyError(long, status=400)

    with OpenAIServer(policy=refuse) as srv:
        url = srv.base_url
        s = annotate([make_trace("e", 4)], judge_cfg, tmp_path / "o.jsonl", cache=tmp_path / "c.sqlite",
                     base_url=url)
    assert long in s.first_error and long in s.format()
    rec = next(r for r in read_jsonl(tmp_path / "o.jsonl") if r["value"] is None)
    assert rec["unscored_reason"].endswith("END-OF-MESSAGE (POST " + url + "/chat/completions)")
