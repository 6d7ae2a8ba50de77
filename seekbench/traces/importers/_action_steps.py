"""Steps of agents whose tools mostly act (run a command, edit a file, book a flight) rather than retrieve.

Shared by the importers of coding-agent trajectories and customer-service simulations: each tool
call is classified once (:func:`._tools.is_search_tool`, or the ``search_tools`` option): a
retrieving call is a ``search`` step and its output a ``search_result`` with documents; any other
call is an ``other`` step naming its tool (an action call, counted as such by the import summary)
and its output an ``other`` step. Steps keep source order; a result depends on its call, every
other step on the step before it.
"""

from __future__ import annotations

from ._base import RecordContext
from ._documents import parse_tool_output
from ._tools import is_search_tool, record_tool_kinds


class ActionSteps:
    """Collects the steps of one trace in source order and numbers them at the end."""

    def __init__(self, fmt: str, ctx: RecordContext, search_tools: frozenset[str] | None) -> None:
        self.fmt, self.ctx, self.search_tools = fmt, ctx, search_tools
        self.steps: list[dict] = []
        self.kinds: dict[str, str] = {}  # tool name -> "search" / "other", kept in the trace's metadata
        self._after: dict[int, dict] = {}  # id(result step) -> its call step

    def add(self, kind: str, text: str | None, path: str, *, original_kind: str, **fields: object) -> dict:
        """Append a step of ``kind`` read from ``path`` (fields with a None value are left out)."""
        step: dict = {"kind": kind, "text": text, "original_kind": original_kind}
        step.update({k: v for k, v in fields.items() if v is not None})
        step["source_ref"] = {
            "format": self.fmt,
            "file": self.ctx["file"],
            "line": self.ctx["line"],
            "record_id": self.ctx["trace_id"],
            "path": path,
        }
        self.steps.append(step)
        return step

    def call(
        self, tool: str | None, text: str | None, path: str, *, query: str | None = None, url: str | None = None
    ) -> dict:
        """A tool call: a ``search`` step when the tool retrieves, else an ``other`` step naming the tool."""
        search = tool is not None and is_search_tool(tool, self.search_tools)
        if tool is not None:
            self.kinds[tool] = "search" if search else "other"
        if search:
            return self.add("search", text, path, original_kind="tool_call", tool=tool, query=query, url=url)
        return self.add("other", text, path, original_kind="tool_call", tool=tool)

    def result(self, call: dict, text: str | None, path: str) -> dict:
        """The output of ``call``: a ``search_result`` with documents after a search, else an ``other`` step."""
        if call["kind"] == "search":
            step = self.add("search_result", text or "", path, original_kind="observation")
            step["documents"] = parse_tool_output(text)
        else:
            step = self.add("other", text or "", path, original_kind="observation")
        self._after[id(step)] = call
        return step

    def finish(self, trace: dict) -> None:
        """Number the steps, fill ``depends_on``, and record each tool's kind in the trace's metadata."""
        position = {id(s): i for i, s in enumerate(self.steps)}
        for i, s in enumerate(self.steps):
            s["index"] = i
            call = self._after.get(id(s))
            s["depends_on"] = [position[id(call)]] if call is not None else ([i - 1] if i else [])
        trace["steps"] = self.steps
        record_tool_kinds(trace, self.kinds)
