"""Search results read as documents, one per result record, whatever API shape holds the list.

The fixtures (``tests/fixtures/importers/shapes/results_*.jsonl``, our own invented content in the
shapes of Google Custom Search, SerpAPI, Tavily, Brave, Bing, You.com, LangChain and JSON-in-JSON
outputs) are chat logs with one search each; every expected value below is read off the fixture by
hand: each result record of the tool output is one document, with its title, address and text.
"""

from __future__ import annotations

import json

import pytest
from _importer_support import FIXTURES

from seekbench.traces import read_traces
from seekbench.traces.importers import detect_format
from seekbench.traces.importers._documents import parse_tool_output

SHAPES = FIXTURES / "shapes"


def _docs(name: str) -> dict[str, list[tuple]]:
    """trace id -> the (title, url, text, rank) of each document of its one search_result, as imported."""
    path = SHAPES / name
    assert detect_format(path) == "openai_chat"
    out = {}
    for tr in read_traces(path).traces:
        assert [s["kind"] for s in tr["steps"]] == ["search", "search_result", "answer"], tr["trace_id"]
        docs = tr["steps"][1]["documents"]
        out[tr["trace_id"]] = [(d["title"], d.get("url"), d["text"], d["rank"]) for d in docs]
    return out


def test_google_custom_search_items_are_one_document_each():
    # Two items in the fixture's "items": title, link and snippet of each (the htmlTitle, displayLink,
    # pagemap and the request's "queries" are not documents).
    assert _docs("results_google_cse.jsonl") == {
        "cse-1": [
            ("Korvan Tower - Veldia Guide", "https://guide.veldia.example/korvan-tower",
             "Korvan Tower, 412 m, is the tallest tower in Veldia.", 1),
            ("Towers of Veldia", "https://atlas.example/veldia/towers",
             "A list of towers: Korvan (412 m), Old Mill Spire (96 m).", 2),
        ]
    }


def test_double_encoded_results_are_decoded():
    # dbl-1: {"query", "results": "<JSON text of a list>"}; dbl-2: the whole output a JSON string
    # holding {"results": [...]}. Both hold the same two records.
    want = [
        ("Pell (city)", "https://wiki.example/Pell", "Pell is the capital of Orvia.", 1),
        ("Orvia", "https://wiki.example/Orvia", "Orvia, a republic; capital Pell.", 2),
    ]
    assert _docs("results_double_encoded.jsonl") == {"dbl-1": want, "dbl-2": want}


def test_every_api_list_shape_gives_its_records():
    got = _docs("results_records.jsonl")
    assert got == {
        # SerpAPI: organic_results, before the earlier inline_images list.
        "rec-serpapi": [
            ("Saltwind River", "https://rivers.example/saltwind", "The Saltwind is Veldia's longest river.", 1),
            ("Veldia geography", "https://geo.example/veldia", "Rivers: Saltwind, Fenn.", 2),
        ],
        # Tavily: content, else raw_content (the second record's content is null).
        "rec-tavily": [
            ("Fenn River", "https://rivers.example/fenn", "The Fenn is 210 km long.", 1),
            ("Fenn (disambiguation)", "https://wiki.example/Fenn", "Fenn may refer to a river or a village.", 2),
        ],
        # Brave: web.results, description as text.
        "rec-brave": [("Saltwind headwaters", "https://rivers.example/saltwind/source",
                       "The Saltwind rises in the Grey Hills.", 1)],
        # Bing: webPages.value, name as title.
        "rec-bing": [("Grey Hills", "https://hills.example/grey", "The Grey Hills reach 1,204 m.", 1)],
        # You.com: hits with a null description and a snippets list, joined line by line.
        "rec-youcom": [("Peaks of the Grey Hills", "https://hills.example/grey/peaks",
                        "Mount Ash, 1,204 m.\nMount Tern, 1,150 m.", 1)],
        # LangChain Documents: page_content, metadata.title and metadata.source.
        "rec-langchain": [
            ("Mount Ash history", "https://history.example/ash", "Mount Ash was first climbed in 1911.", 1)
        ],
        # Records under a key no API table names ("matches"), addresses as uri and href, text as body and text.
        "rec-generic": [
            ("Ash village", "https://villages.example/ash", "Ash is a village below Mount Ash.", 1),
            ("Ash (tree)", "https://trees.example/ash", "The ash is a tree.", 2),
        ],
        # Plain text: one document, the text itself.
        "rec-plain": [(None, None, "Mount Ash is 1,204 m high and stands in the Grey Hills.", 1)],
        # Qwen-Agent web search text: numbered Markdown links under a header, two queries split by =======;
        # ranks run on across the queries, the date and source lines stay in the text.
        "rec-markdown": [
            ("Mount Ash (Grey Hills)", "https://hills.example/grey/ash",
             "Date published: 2019-05-01\nSource: Hills Atlas\n\n"
             "Mount Ash, 1,204 m, is the highest peak of the Grey Hills.",
             1),
            ("Climbing Mount Ash", "https://climb.example/ash", "The north ridge route takes six hours.", 2),
            ("Ash summit survey", "https://survey.example/ash_(2020)", "Surveyed at 1,204 m in 2020.", 3),
        ],
    }


def _tuples(text: str) -> list[tuple]:
    return [(d["title"], d.get("url"), d["text"]) for d in parse_tool_output(text)]


RECORDS = [{"title": f"T{i}", "link": f"https://x.example/{i}", "snippet": f"s{i}"} for i in range(10)]


@pytest.mark.parametrize(
    "output",
    [
        {"kind": "customsearch#search", "items": RECORDS},
        {"status": "ok", "result": {"kind": "customsearch#search", "items": RECORDS}},  # wrapped once more
        {"content": [{"type": "text", "text": json.dumps({"items": RECORDS})}], "isError": False},  # MCP result
        {"output": json.dumps({"organic": RECORDS})},  # JSON text under a key no API names
    ],
    ids=["items", "wrapped", "mcp", "string-under-any-key"],
)
def test_ten_records_are_ten_documents_never_one_blob(output):
    assert _tuples(json.dumps(output)) == [(f"T{i}", f"https://x.example/{i}", f"s{i}") for i in range(10)]


def test_a_structured_record_keeps_its_fields_as_text():
    # No title and no text key: the fields are the text (tau-bench's search_direct_flight result).
    flight = '{"flight_number": "HT1", "price": 120}'
    assert _tuples(f"[{flight}]") == [(None, None, flight)]
    # A titled hit without a snippet keeps no text: its title says what it is.
    hit = '[{"title": "Pell", "url": "https://p.example", "position": 1}]'
    assert _tuples(hit) == [("Pell", "https://p.example", None)]


def test_a_page_with_links_is_one_page():
    page = {"title": "Pell", "url": "https://p.example", "content": "Pell is a city.",
            "links": [{"title": "Orvia", "url": "https://o.example"}]}
    assert _tuples(json.dumps(page)) == [("Pell", "https://p.example", "Pell is a city.")]


def test_text_content_parts_that_are_not_json_are_one_document_each():
    out = {"content": [{"type": "text", "text": "Pell is a city."}, {"type": "text", "text": "Orvia is a republic."}]}
    assert _tuples(json.dumps(out)) == [(None, None, "Pell is a city."), (None, None, "Orvia is a republic.")]


def test_json_that_is_not_results_stays_text():
    assert _tuples('{"status": "cancelled"}') == [(None, None, '{"status": "cancelled"}')]
    assert _tuples('"just a quoted sentence"') == [(None, None, '"just a quoted sentence"')]


def test_numbered_links_inside_a_visited_page_are_one_document():
    # A scraped page: a long text before the links, so no results list opens it.
    page = "Title: Grey Hills news\n\n" + "The hills are quiet this year.\n" * 20 + (
        "1. [Ash trail reopens](https://news.example/1)\n2. [New hut](https://news.example/2)\n")
    assert len(parse_tool_output(page)) == 1
    # A list not counting 1, 2, 3 ... is no results list either.
    assert len(parse_tool_output("1. [A](https://a.example)\nsa\n\n3. [C](https://c.example)\nsc")) == 1
