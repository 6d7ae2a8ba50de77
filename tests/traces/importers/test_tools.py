"""Tool classification: which tool calls are searches (spec section 1), by name or by an explicit list."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seekbench._errors import UserInputError
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
