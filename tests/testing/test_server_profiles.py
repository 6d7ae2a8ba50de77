"""The mock server playing real servers (ServerProfile), over HTTP with the official openai client."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import openai
import pytest

from seekbench.testing import OpenAIServer, ServerProfile, StepLabeler, render_steps_block

STEPS = [{"step": 0, "kind": "reasoning", "text": "plan"}, {"step": 1, "kind": "search_result", "text": "[1] doc"},
         {"step": 2, "kind": "reasoning", "text": "so the answer"}]


def ask(client, **extra):
    return client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": render_steps_block(STEPS)}], **extra)


def get(url):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer sk-test"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def test_llama_cpp_profile():
    # by count_tokens, STEPS' block is 86 prompt tokens (fits 150) and the five 20-word steps 224 (do not)
    with OpenAIServer(profile=ServerProfile.llama_cpp(context_tokens=150, slots=4)) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0)
        with pytest.raises(openai.InternalServerError) as e:
            ask(client, response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {}}})
        assert 'response_format type must be one of "json_object" or "text", but got: json_schema' in str(e.value)
        reply = ask(client, response_format={"type": "json_object"})
        assert reply.model == "SmolLM2-135M-Instruct-Q8_0.gguf"  # what the server serves, not what was asked
        props = get(srv.url + "/props")
        assert props["default_generation_settings"]["n_ctx"] == 150 and props["total_slots"] == 4
        assert props["model_path"].endswith(".gguf")
        assert get(srv.base_url + "/models")["data"][0]["meta"]["n_ctx_train"] >= 150
        long = [{"step": i, "kind": "reasoning", "text": "word " * 20} for i in range(5)]
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": render_steps_block(long)}])
        assert "exceeds the available context size" in str(e.value)


def test_vllm_and_openai_profiles():
    with OpenAIServer(profile=ServerProfile.vllm(context_tokens=150)) as srv:  # 86 + 100 answer tokens > 150
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0)
        assert get(srv.base_url + "/models")["data"][0]["max_model_len"] == 150
        with pytest.raises(openai.BadRequestError) as e:
            ask(client, max_tokens=100)
        assert "maximum context length is 150 tokens" in str(e.value)
        with pytest.raises(urllib.error.HTTPError):
            get(srv.url + "/props")  # not a llama.cpp server
    with OpenAIServer(profile=ServerProfile(response_formats=("text",))) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0)
        with pytest.raises(openai.BadRequestError) as e:
            ask(client, response_format={"type": "json_object"})
        assert "response_format" in str(e.value)
        assert ask(client).choices[0].message.content


def test_partial_labeler_and_only_steps():
    labeler = StepLabeler(omit_every=2, never={2})
    first = json.loads(labeler({"messages": [{"role": "user", "content": render_steps_block(STEPS)}]}))
    assert [lab["step"] for lab in first["labels"]] == [0]  # 1 omitted (2nd entry), 2 never labeled
    again = render_steps_block(STEPS) + "\n\nREPAIR 1 of 2: ...\n\nLabel only these steps: 1, 2."
    second = json.loads(labeler({"messages": [{"role": "user", "content": again}]}))
    assert [lab["step"] for lab in second["labels"]] == [1]


def test_command_line_profile():
    proc = subprocess.Popen([sys.executable, "-m", "seekbench.testing.openai_server", "--port", "0", "--profile",
                             "llama.cpp", "--slots", "2", "--context-tokens", "4096", "--quiet"],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" on ")[1].split(" ")[0]
        props = get(url[: -len("/v1")] + "/props")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert props["total_slots"] == 2 and props["default_generation_settings"]["n_ctx"] == 4096
