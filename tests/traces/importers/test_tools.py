"""Tool classification: which tool calls are searches (spec section 1), by name or by an explicit list."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seekbench._errors import UserInputError
from seekbench.traces import read_traces
from seekbench.traces.importers._tools import is_search_tool, resolve_search_tools, tool_words


@pytest.mark.parametrize("name", ["search", "web_search", "google_search", "scrape_website", "browse_webpage",
                                  "searchDirectFlight", "retrieve_docs", "fetch_url", "visit", "open_url",
                                  "scholar_lookup", "wikipedia"])
def test_retrieving_tools_are_searches(name):
    assert is_search_tool(name)


@pytest.mark.parametrize("name", ["book_reservation", "cancel_reservation", "calculate", "think", "edit_file",
                                  "transfer_to_human_agents", "openai_chat", "get_user_details"])
def test_actions_are_not_searches(name):
    assert not is_search_tool(name)


def test_words_split_every_naming_style():
    assert tool_words("tool-google_search.v2") == ["tool", "google", "search", "v", "2"]
    assert tool_words("HTTPFetchPage") == ["http", "fetch", "page"]


@given(names=st.sets(st.text(min_size=1, max_size=8).filter(lambda s: "," not in s and s.strip() == s),
                     min_size=1, max_size=4),
       other=st.text(min_size=1, max_size=8))
def test_property_an_explicit_list_decides_exactly(names, other):
    chosen = resolve_search_tools(",".join(names))
    assert chosen == frozenset(names)
    assert all(is_search_tool(n, chosen) for n in names)
    assert is_search_tool(other, chosen) == (other in names)


@pytest.mark.parametrize("value", [",", " , ", [3]])
def test_empty_or_bad_lists_are_user_errors(value):
    with pytest.raises(UserInputError, match="search_tools"):
        resolve_search_tools(value)


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "importers"


# One classification for every importer that sees tool names: with --search-tools, exactly the listed
# tools are searches and the others actions (an ``other`` call, then an ``other`` output). Each row is a
# fixture, the list given, its format, and the first trace's tool kinds and step kinds read off the fixture
# (the calls in file order: ATIF web_search, visit, run_code; Inspect one web_search; the chat file
# search then visit; DeepResearcher web_search then browse_webpage; OTel one web_search tool span beside
# a retriever; Langfuse a "kb" tool with a retriever under it, which a list leaves out like any tool).
@pytest.mark.parametrize("name, chosen, fmt, tool_kinds, kinds", [
    ("trajectory.atif.json", "run_code", "atif", {"run_code": "search", "visit": "other", "web_search": "other"},
     ["reasoning", "reasoning", "other", "other", "other", "other", "search", "search_result", "reasoning",
      "answer"]),
    ("capitals.inspect.json", "lookup", "inspect", {"web_search": "other"},
     ["reasoning", "other", "other", "reasoning", "answer"]),
    ("parallel.openai.json", "visit", "openai_chat", {"search": "other", "visit": "search"},
     ["reasoning", "other", "other", "search", "search_result", "reasoning", "answer"]),
    ("producers/deepresearcher_rollout.json", "browse_webpage", "search_r1",
     {"browse_webpage": "search", "web_search": "other"},
     ["reasoning", "other", "other", "reasoning", "search", "search_result", "reasoning", "answer"]),
    ("agent.otel.jsonl", "lookup", "otel", {"web_search": "other"},
     ["reasoning", "other", "other", "search", "search_result", "answer"]),  # the retriever stays a search
    ("shapes/langfuse_list.json", "lookup", "langfuse", {"kb": "other"}, ["reasoning", "other", "other", "answer"]),
])
def test_search_tools_is_honoured_by_every_importer(name, chosen, fmt, tool_kinds, kinds):
    read = read_traces(FIXTURES / name, search_tools=chosen)
    assert list(read.formats.values()) == [fmt]
    assert not [n for n in read.notes if "does not take" in n]  # no "ignored for this file" note
    t = read.traces[0]
    assert t["metadata"]["tool_kinds"] == tool_kinds
    assert [s["kind"] for s in t["steps"]] == kinds


def test_a_tool_seen_retrieving_is_a_search_unless_a_list_decides():
    assert not is_search_tool("kb") and is_search_tool("kb", retrieves=True)
    assert not is_search_tool("kb", frozenset({"web_search"}), retrieves=True)
