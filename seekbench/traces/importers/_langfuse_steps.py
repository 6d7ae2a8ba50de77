"""Steps from the observations of one Langfuse trace (see :mod:`._langfuse` for the mapping).

Observations form a tree by ``parentObservationId`` (a parent missing from the trace makes its
children roots); siblings are walked in ``startTime`` order, ties in file order, each parent
before its children. Every step's ``source_ref.record_id`` is the id of the observation it came
from, so labels exported with ``export-labels --to langfuse`` name that observation.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import defaultdict
from collections.abc import Iterator

from ..._errors import UserInputError
from ._answer_tools import is_answer_tool
from ._base import RecordContext, expect_type
from ._documents import parse_tool_output
from ._openai_chat import StepBuilder, content_text, search_step
from ._tools import is_search_tool

FORMAT = "langfuse"
#: Observation types that hold no step of their own: their children are walked.
CONTAINERS = frozenset({"SPAN", "AGENT", "CHAIN", "EVENT", "EMBEDDING", "EVALUATOR", "GUARDRAIL"})
#: Keys of an input object that hold a retriever's query, in the order tried.
_QUERY_KEYS = ("query", "q", "question", "input", "search_query")


def start_key(value: object) -> float:
    """An observation's ``startTime`` (ISO 8601) in seconds; observations without one sort last."""
    if isinstance(value, str):
        try:
            t = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return float("inf")
        return (t if t.tzinfo else t.replace(tzinfo=_dt.UTC)).timestamp()
    return float("inf")


class Observations:
    """The observations of one trace as a tree, each with its JSON path in the file."""

    def __init__(self, observations: list[tuple[dict, str]]) -> None:
        ids = {o["id"] for o, _ in observations}
        self.path = {o["id"]: p for o, p in observations}
        self.children: dict[str | None, list[dict]] = defaultdict(list)
        for order, (o, _) in enumerate(observations):
            parent = o.get("parentObservationId")
            self.children[parent if parent in ids else None].append(o)
            o["_order"] = order
        for kids in self.children.values():  # stable: equal start times keep file order
            kids.sort(key=lambda o: (start_key(o.get("startTime")), o["_order"]))

    def walk(self, start: list[dict] | None = None) -> Iterator[dict]:
        for o in self.children[None] if start is None else start:
            yield o
            yield from self.walk(self.children[o["id"]])

    def below(self, o: dict) -> list[dict]:
        return list(self.walk(self.children[o["id"]]))


class ObservationSteps(StepBuilder):
    """Steps whose ``source_ref`` names the observation they came from."""

    def __init__(
        self,
        ctx: RecordContext,
        tree: Observations,
        search_tools: frozenset[str] | None,
        answer_tools: frozenset[str] | None = None,
    ) -> None:
        super().__init__(FORMAT, ctx)
        self.tree, self.search_tools, self.answer_tools = tree, search_tools, answer_tools
        self.obs: dict = {}
        self.kinds: dict[str, str] = {}  # tool name -> "search" / "other" / "answer" (metadata["tool_kinds"])
        #: the path of the answer an answer tool's call gave (its arguments), once one was called
        self.answered: str | None = None

    def _ref(self, path: str) -> dict:
        return {
            "format": FORMAT,
            "file": self.ctx["file"],
            "line": self.ctx["line"],
            "record_id": self.obs.get("id"),
            "path": path,
        }

    def at(self, key: str) -> str:
        return f"{self.tree.path[self.obs['id']]}.{key}"


def as_text(value: object) -> str | None:
    """A value as text: strings as they are, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def messages_at(value: object, key: str) -> list[tuple[dict, str]]:
    """``(message, path)`` of the chat messages a generation's ``input`` or ``output`` (``key``) holds:
    a list of messages, ``{messages: [...]}`` (with ``tools``), one message object, or plain text."""
    if isinstance(value, str):
        return [({"role": "assistant" if key == "output" else "user", "content": value}, key)]
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value, key = value["messages"], f"{key}.messages"
    if isinstance(value, dict):
        return [(value, key)]
    if isinstance(value, list):
        return [(m, f"{key}[{k}]") for k, m in enumerate(value) if isinstance(m, dict)]
    return []


def tool_calls(msg: dict, ctx: RecordContext, path: str) -> list[tuple[object, object, str | None, str]]:
    """``(name, arguments, call id, path)`` of a message's calls: OpenAI ``tool_calls[].function``,
    flat ``{id, name, arguments}`` calls, or a legacy ``function_call``. The arguments sit at
    ``path.function.arguments`` or ``path.arguments`` (:func:`_arguments_path`)."""
    out = []
    raw = msg.get("tool_calls") or []
    raw = expect_type(raw, list, what="tool_calls", path=f"{path}.tool_calls", **ctx)
    for j, tc in enumerate(raw):
        tp = f"{path}.tool_calls[{j}]"
        tc = expect_type(tc, dict, what="tool call", path=tp, **ctx)
        fn: dict = tc["function"] if isinstance(tc.get("function"), dict) else tc
        cid = tc.get("id")
        expect_type(cid, (str, type(None)), what="tool call id", path=f"{tp}.id", **ctx)
        out.append((fn.get("name"), fn.get("arguments"), cid, tp))
    if isinstance(msg.get("function_call"), dict):
        fc = msg["function_call"]
        out.append((fc.get("name"), fc.get("arguments"), None, f"{path}.function_call"))
    return out


def _calls(m: dict) -> bool:
    return bool(m.get("tool_calls") or m.get("function_call"))


def answers(o: dict, ctx: RecordContext, path: str) -> bool:
    """True for a generation whose last output message is text without tool calls (a candidate answer)."""
    msgs = messages_at(o.get("output"), f"{path}.output")
    if not msgs or any(_calls(m) for m, _ in msgs):
        return False
    m, p = msgs[-1]
    return bool((content_text(m.get("content"), ctx, f"{p}.content") or "").strip())


def generation(b: ObservationSteps, o: dict, *, final: bool, with_calls: bool, answer_tag: str | None) -> str | None:
    """A generation's reasoning, answer and (``with_calls``) tool calls; the ``tool`` messages of its
    input answer earlier calls. Returns the final answer when this generation gives it."""
    base = b.tree.path[o["id"]]
    if with_calls:
        waiting = {cid for cid, _ in b.pending}
        for m, p in messages_at(o.get("input"), f"{base}.input"):
            if m.get("role") == "tool" and m.get("tool_call_id") in waiting:
                waiting.discard(m["tool_call_id"])
                b.add_result(content_text(m.get("content"), b.ctx, f"{p}.content"), m["tool_call_id"], p, p)
    answer = None
    for m, p in messages_at(o.get("output"), f"{base}.output"):
        text = content_text(m.get("content"), b.ctx, f"{p}.content")
        calls: list[tuple[dict, str, str | None]] = []
        for name, args, cid, tp in tool_calls(m, b.ctx, p) if with_calls else []:
            step = search_step(
                name, args, b.ctx, tp, tp, classify=True, search_tools=b.search_tools, answer_tools=b.answer_tools
            )
            b.kinds[step["tool"]] = step["kind"]
            if step["kind"] == "answer":
                answer, b.answered = step["text"], _arguments_path(m, tp, p)
            calls.append(({**step, "original_kind": "tool_call"}, tp, cid or f"{o['id']}:{tp}"))
        reasoning = next((m[k] for k in ("reasoning_content", "reasoning") if isinstance(m.get(k), str)), None)
        r = None if reasoning is None else (reasoning, "reasoning", p)
        final = final and not _calls(m) and b.answered is None  # after an answer tool, text is no second answer
        got = b.model_turn(r, text, ("GENERATION", p), calls, final=final, answer_tag=answer_tag)
        answer = got if got is not None else answer
    return answer


def _arguments_path(m: dict, tp: str, p: str) -> str:
    """Where the arguments of the call at ``tp`` (of message ``m`` at ``p``) sit."""
    if tp == f"{p}.function_call":
        return f"{tp}.arguments"
    call = m["tool_calls"][int(tp[tp.rindex("[") + 1 : -1])]
    return f"{tp}.function.arguments" if isinstance(call.get("function"), dict) else f"{tp}.arguments"


def tool_arguments(value: object) -> object:
    """Tool input as an object: an object, JSON text of one, a decorator's ``{args, kwargs}`` (the first
    positional string is the query), else the value itself as the query."""
    if isinstance(value, str) and value.strip()[:1] == "{":
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, dict) and set(value) <= {"args", "kwargs"} and value:
        kwargs: dict = value["kwargs"] if isinstance(value.get("kwargs"), dict) else {}
        args: list = value["args"] if isinstance(value.get("args"), list) else []
        out = dict(kwargs)
        if args and isinstance(args[0], str) and not any(k in out for k in _QUERY_KEYS):
            out["query"] = args[0]
        return out
    if value is None or isinstance(value, dict):
        return value
    return {"query": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}


def tool(b: ObservationSteps, o: dict) -> str | None:
    """A TOOL observation (or a leaf SPAN named as a search tool): a search and its result, or an action, or
    the answer (an answer tool: :mod:`._answer_tools`). Returns the answer when the tool gives it."""
    name = o.get("name")
    name = expect_type(name, str, what="observation name", path=b.at("name"), **b.ctx)
    retrievers = [c for c in b.tree.below(o) if c.get("type") == "RETRIEVER"]
    search = is_search_tool(name, b.search_tools, retrieves=bool(retrievers))
    raw = o.get("input")
    text = as_text(raw)
    answer = is_answer_tool(name, b.answer_tools)
    if answer:  # the answer, given as the tool's input
        step = search_step(name, tool_arguments(raw), b.ctx, b.at("name"), b.at("input"), answer_tools=b.answer_tools)
        search, b.answered = False, b.at("input")
    elif search:
        step = search_step(name, tool_arguments(raw), b.ctx, b.at("name"), b.at("input"))
        step["text"] = text
    else:  # an action (bash, create_dataset, ask_user): its call and its output are other steps
        step = {"kind": "other", "tool": name, "text": text}
    b.kinds[name] = step["kind"]
    b.new_turn()
    key = f"observation:{o['id']}"
    b.add({**step, "original_kind": o.get("type")}, b.at("input"), key, is_call=True)
    call = b.steps[-1]
    b.add_result(as_text(o.get("output")), key, b.at("output"), b.at("output"))
    result = b.steps[next(i for i in range(len(b.steps) - 1, -1, -1) if b.steps[i] is call) + 1]
    if search:
        docs = [d for r in retrievers for d in documents(r.get("output"))] if retrievers else documents(o.get("output"))
        result["documents"] = [{**d, "rank": rank} for rank, d in enumerate(docs, start=1)]
    return step["text"] if answer else None


def retriever(b: ObservationSteps, o: dict) -> None:
    """A RETRIEVER observation outside any tool: a search (its input the query) and its documents."""
    raw = o.get("input")
    args = tool_arguments(raw)
    query = next((args[k] for k in _QUERY_KEYS if isinstance(args, dict) and isinstance(args.get(k), str)), None)
    name: str = o["name"] if isinstance(o.get("name"), str) and o["name"] else "retriever"
    b.kinds[name] = "search"
    b.new_turn()
    key = f"observation:{o['id']}"
    step = {"kind": "search", "tool": name, "query": query, "text": as_text(raw), "original_kind": "RETRIEVER"}
    b.add(step, b.at("input"), key, is_call=True)
    b.add_result(as_text(o.get("output")), key, b.at("output"), b.at("output"))
    b.steps[-1]["documents"] = documents(o.get("output"))


def documents(value: object) -> list[dict]:
    """Documents of a tool or retriever output: LangChain ``Document`` lists (``page_content`` and
    ``metadata`` with ``title`` / ``source`` / ``url``), else as any tool output (:mod:`._documents`)."""
    items = value.get("documents") if isinstance(value, dict) else value
    if isinstance(items, list) and items and all(isinstance(d, dict) and "page_content" in d for d in items):
        docs = []
        for rank, d in enumerate(items, start=1):
            meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
            doc: dict[str, object] = {
                "id": as_text(d.get("id") or meta.get("id")),
                "title": as_text(meta.get("title")),
                "text": as_text(d.get("page_content")),
                "rank": rank,
            }
            url = meta.get("url", meta.get("source"))
            if isinstance(url, str):
                doc["url"] = url
            if isinstance(meta.get("score"), (int, float)) and not isinstance(meta["score"], bool):
                doc["score"] = float(meta["score"])
            docs.append(doc)
        return docs
    return parse_tool_output(as_text(value))


def check_observation(o: object, ctx: RecordContext, path: str) -> dict:
    """An observation object with a non-empty string ``id``; a user error naming the field otherwise."""
    if isinstance(o, str):
        raise UserInputError(
            "observations are ids only (the trace list API's answer); fetch each trace with "
            "GET /api/public/traces/{id}, which gives its observations in full",
            path=path,
            **ctx,
        )
    o = expect_type(o, dict, what="observation", path=path, **ctx)
    oid = o.get("id")
    if not isinstance(oid, str) or not oid.strip():
        raise UserInputError("observation id must be a non-empty string", path=f"{path}.id", **ctx)
    kind = o.get("type")
    expect_type(kind, str, what="observation type", path=f"{path}.type", **ctx)
    return o
