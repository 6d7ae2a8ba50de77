"""The steps of one smolagents run, from its memory written as chat messages or as step dicts.

smolagents keeps an agent's run as memory steps (``smolagents.memory``): a ``TaskStep`` (the task),
``PlanningStep`` (a plan), and one ``ActionStep`` per model turn with its ``tool_calls``
(``[{id, type: "function", function: {name, arguments}}]``), ``observations`` (the tools' outputs,
joined by a newline when calls ran in parallel), ``error``, ``action_output`` and
``is_final_answer``. Runs are saved in two shapes:

- the messages of ``agent.write_memory_to_messages()`` (the benchmark and ``run_gaia.py`` scripts):
  ``{role, content: [{type: "text", text}]}`` with roles ``system``, ``user``, ``assistant`` (the
  model output), ``tool-call`` (``"Calling tools:\\n"`` + the Python ``repr`` of the calls' dicts)
  and ``tool-response`` (``"Observation:\\n"`` + the observations, or ``"Call id: X\\nError:\\n..."``);
- the dicts of ``agent.memory.get_full_steps()`` / ``get_succinct_steps()``.

The calls' repr is read with :func:`ast.literal_eval` (a Python literal, never code), bounded in size.
"""

from __future__ import annotations

import ast
import json
import re

from ..._errors import UserInputError
from ._base import RecordContext, expect_type
from ._chat_steps import StepBuilder, content_text, search_step
from ._documents import parse_tool_output

FORMAT = "smolagents"
ROLES = ("system", "user", "assistant", "tool-call", "tool-response")
#: Keys that say what a memory step dict is (ActionStep, TaskStep, PlanningStep, SystemPromptStep).
STEP_KEYS = ("step_number", "task", "plan", "system_prompt")
_CALLS_PREFIX = "Calling tools:\n"
_CALL_ID = re.compile(r"\ACall id: (\S+)\n")
_LITERAL_LIMIT = 1 << 20  # the repr of one step's calls: 1 MiB at most (ast parsing is costly)


def is_item(obj: object) -> bool:
    """A smolagents memory item: a message with a smolagents role, or a memory step dict."""
    return isinstance(obj, dict) and (obj.get("role") in ROLES or any(k in obj for k in STEP_KEYS))


class RunSteps(StepBuilder):
    """Steps of one run; a result that answers several parallel calls depends on all of them."""

    def __init__(self, ctx: RecordContext, search_tools: frozenset[str] | None, answer_tools: frozenset[str] | None):
        super().__init__(FORMAT, ctx)
        self.search_tools, self.answer_tools = search_tools, answer_tools
        self.kinds: dict[str, str] = {}
        self.answer: str | None = None  # the final_answer tool's answer, once called
        self.answered: str | None = None  # where that call sits
        self.task: tuple[str, str] | None = None  # the first task's text and path
        self.system: list[str] = []
        self.shared: list[tuple[dict, list[dict]]] = []  # (result, the parallel calls it answers)

    def calls(self, raw: list, p: str, args_at: str) -> None:
        """Add the calls of one model turn (``raw``: the calls' dicts, at ``p``)."""
        for j, tc in enumerate(raw):
            tp = f"{p}[{j}]" if args_at else p
            tc = expect_type(tc, dict, what="tool call", path=tp, **self.ctx)
            fn: dict = tc["function"] if isinstance(tc.get("function"), dict) else tc
            name, args = fn.get("name"), fn.get("arguments")
            code = isinstance(args, str) and args.strip()[:1] != "{"  # python_interpreter's code, a plain query
            step = search_step(
                name,
                None if code else args,
                self.ctx,
                tp,
                tp,
                classify=True,
                search_tools=self.search_tools,
                answer_tools=self.answer_tools,
            )
            if code:  # the text is the argument itself (the code, the query, the answer)
                step["text"] = args
                if step["kind"] == "search":
                    step["query"] = args
            self.kinds[step["tool"]] = step["kind"]
            if step["kind"] == "answer":
                self.answer, self.answered = step["text"], tp
            cid = tc.get("id")
            expect_type(cid, (str, type(None)), what="tool call id", path=f"{tp}.id", **self.ctx)
            self.add({**step, "original_kind": "tool_call"}, tp, cid, is_call=True)

    def observation(self, text: str, p: str) -> None:
        """The output of the calls waiting: matched by ``Call id: X``, else the one call waiting, else
        (parallel calls, whose outputs smolagents joins) one result depending on every waiting call."""
        m = _CALL_ID.match(text)
        if m and any(cid == m.group(1) for cid, _ in self.pending):
            self.add_result(text, m.group(1), p, p)
            return
        if not self.pending:
            self.add({"kind": "other", "text": text, "original_kind": "observation"}, p)
            return
        if len(self.pending) == 1:
            cid, call = self.pending[0]
            if cid is None:
                self.add_oldest_result({"kind": "search_result", "text": text, "documents": parse_tool_output(text)}, p)
            else:
                self.add_result(text, cid, p, p)
            return
        # Parallel calls: smolagents joins their outputs (sorted by call id) with a newline, so the text
        # cannot be split between them; it is one result, after the calls, depending on each of them.
        calls = [call for _, call in self.pending]
        self.pending.clear()
        searched = any(c["kind"] == "search" for c in calls)
        step = (
            {"kind": "search_result", "text": text, "documents": parse_tool_output(text)}
            if searched
            else {"kind": "other", "text": text, "original_kind": "tool_result"}
        )
        self.add(step, p)
        self.shared.append((step, calls))

    def finish(self) -> list[dict]:
        steps = super().finish()
        index = {id(s): i for i, s in enumerate(steps)}
        for result, calls in self.shared:
            result["depends_on"] = sorted(index[id(c)] for c in calls)
        return steps


def parse_calls(text: str, ctx: RecordContext, path: str) -> list:
    """The calls' dicts of a ``tool-call`` message: ``"Calling tools:\\n"`` + a Python literal list."""
    if not text.startswith(_CALLS_PREFIX):
        raise UserInputError(
            "a smolagents tool-call message must start with 'Calling tools:' and a list of calls",
            path=path,
            **ctx,
        )
    body = text[len(_CALLS_PREFIX) :].strip()
    if len(body) > _LITERAL_LIMIT:
        raise UserInputError(
            f"the calls of one tool-call message are longer than {_LITERAL_LIMIT} characters; "
            "seekbench reads at most that much Python-literal text",
            path=path,
            **ctx,
        )
    try:
        value = ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        try:  # JSON (true / false / null) is no Python literal
            value = json.loads(body)
        except ValueError:
            raise UserInputError(
                f"the calls of a tool-call message are not a Python literal list ({type(e).__name__})",
                path=path,
                **ctx,
            ) from e
    return expect_type(value, list, what="tool calls", path=path, **ctx)


def message(b: RunSteps, msg: dict, p: str) -> None:
    """One message of ``write_memory_to_messages()``."""
    role = msg["role"]
    cp = f"{p}.content"
    text = content_text(msg.get("content"), b.ctx, cp) or ""
    if isinstance(msg.get("content"), list) and len(msg["content"]) == 1:
        cp = f"{cp}[0].text"
    if role == "system":
        b.system.append(text)
    elif role == "user" and b.task is None:
        b.task = (text.removeprefix("New task:\n"), cp)
    elif role == "assistant":
        b.new_turn()
        if text.strip():
            b.add({"kind": "reasoning", "text": text, "original_kind": "assistant"}, cp)
    elif role == "tool-call":
        if not b.steps or b.steps[-1].get("original_kind") != "assistant":
            b.new_turn()
        b.calls(parse_calls(text, b.ctx, cp), cp, "")
    elif role == "tool-response":
        b.observation(text.removeprefix("Observation:\n"), cp)
    else:  # a later user message: a plan's "Now proceed", observation images
        b.add({"kind": "other", "text": text, "original_kind": role}, cp)


def memory_step(b: RunSteps, st: dict, p: str) -> None:
    """One dict of ``agent.memory.get_full_steps()``."""
    if "system_prompt" in st:
        b.system.append(str(st["system_prompt"]))
    elif "task" in st and "step_number" not in st:
        if b.task is None:
            b.task = (expect_type(st["task"], str, what="task", path=f"{p}.task", **b.ctx), f"{p}.task")
        else:
            b.add({"kind": "other", "text": st["task"], "original_kind": "task"}, f"{p}.task")
    elif "plan" in st:
        b.new_turn()
        b.add({"kind": "reasoning", "text": str(st["plan"]), "original_kind": "plan"}, f"{p}.plan")
    else:
        b.new_turn()
        output = st.get("model_output")
        text = content_text(output, b.ctx, f"{p}.model_output") if output is not None else None
        if text and text.strip():
            b.add({"kind": "reasoning", "text": text, "original_kind": "model_output"}, f"{p}.model_output")
        raw = st.get("tool_calls") or []
        raw = expect_type(raw, list, what="tool_calls", path=f"{p}.tool_calls", **b.ctx)
        b.calls(raw, f"{p}.tool_calls", "arguments")
        if st.get("observations") is not None:
            obs = expect_type(st["observations"], str, what="observations", path=f"{p}.observations", **b.ctx)
            b.observation(obs, f"{p}.observations")
        if isinstance(st.get("error"), dict):
            err = st["error"].get("message")
            b.add({"kind": "other", "text": str(err), "original_kind": "error"}, f"{p}.error")
        if st.get("is_final_answer") and b.answer is None and st.get("action_output") is not None:
            out = st["action_output"]
            text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
            b.add({"kind": "answer", "text": text, "original_kind": "action_output"}, f"{p}.action_output")
            b.answer, b.answered = text, f"{p}.action_output"
