"""Inspect AI logs written by ``inspect_ai`` itself (mockllm model, a search tool, two epochs)."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = [{"title": "Paris", "text": "Paris is the capital of France.", "url": "https://en.wikipedia.org/wiki/Paris"},
           {"title": "Lyon", "text": "Lyon is a city in France.", "url": "https://en.wikipedia.org/wiki/Lyon"}]


def write_logs(log_dir: Path) -> dict[str, Path]:
    """Run a two-sample, two-epoch task under each log format; return {"eval": path, "json": path}.

    The model searches once, then answers: "Paris" for q1 (target Paris: correct), "Lyon" for q2
    (target Paris: incorrect), with its reasoning as a reasoning content part.
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (ChatMessageAssistant, ChatMessageTool, ContentReasoning, ContentText, ModelOutput,
                                  ModelUsage, get_model)
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def web_search():
        async def execute(query: str) -> str:
            """Search the web.

            Args:
                query: the search query
            """
            return json.dumps(RESULTS)

        return execute

    def outputs(messages, tools, tool_choice, config):
        question = next(m.text for m in messages if m.role == "user")
        if not any(isinstance(m, ChatMessageTool) for m in messages):
            out = ModelOutput.for_tool_call(model="mockllm/model", tool_name="web_search",
                                            tool_arguments={"query": f"search: {question}"})
        else:
            city = "Paris" if "France" in question else "Lyon"
            out = ModelOutput.from_content(model="mockllm/model", content=f"<answer>{city}</answer>")
            out.choices[0].message = ChatMessageAssistant(
                content=[ContentReasoning(reasoning=f"The first result names {city}."),
                         ContentText(text=f"<answer>{city}</answer>")], model="mockllm/model")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tokenizer download
        return out

    def task():
        return Task(dataset=[Sample(input="What is the capital of France?", target="Paris", id="q1"),
                             Sample(input="Which city is the capital of the French Republic?",
                                    target=["Paris", "City of Paris"], id="q2")],
                    solver=[use_tools(web_search()), generate()], scorer=[includes(), match()], epochs=2,
                    name="capitals")

    out = {}
    for fmt in ("eval", "json"):
        logs = eval(task(), model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(log_dir / fmt),
                    log_format=fmt, display="none")
        assert logs[0].status == "success", logs[0].error
        out[fmt] = Path(logs[0].location)
    return out
