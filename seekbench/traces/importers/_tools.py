"""Which tool calls are searches: retrieving tools are ``search`` steps, every other tool an ``other`` step.

Spec section 1: a search step is a tool call that retrieves (search, visit, scholar, scrape,
browse, fetch, retrieve, open); booking, cancelling, calculating, thinking or editing code
retrieve nothing, so counting them as searches would inflate every search metric (tau-bench
trajectories are mostly such actions). The decision is made by the words of the tool name,
or by an explicit list (``search_tools``), and each trace records it in ``metadata["tool_kinds"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..._errors import UserInputError

#: A name word starting with one of these marks a retrieving tool (``google_search``, ``scrape_website``,
#: ``browse_webpage``, ``retrieval``, ``searchDirectFlight``).
SEARCH_WORD_PREFIXES = ("search", "scholar", "visit", "scrap", "brows", "fetch", "retriev", "crawl")
#: Whole words that mark a retrieving tool (``open_url``, ``open``: a prefix would also match ``openai``),
#: and search engines named as tools (``google``, ``tavily``, ``wikipedia``).
SEARCH_WORDS = frozenset(
    {
        "open",
        "lookup",
        "google",
        "bing",
        "tavily",
        "serper",
        "serp",
        "duckduckgo",
        "wiki",
        "wikipedia",
        "arxiv",
        "pubmed",
        "exa",
    }
)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def tool_words(name: str) -> list[str]:
    """The lowercased words of a tool name (snake_case, kebab-case, dotted and camelCase split).

    Examples
    --------
    >>> tool_words("searchDirectFlight"), tool_words("tool-google_search")
    (['search', 'direct', 'flight'], ['tool', 'google', 'search'])
    """
    return [w.lower() for w in _WORD.findall(name)]


def is_search_tool(name: str | None, search_tools: frozenset[str] | None = None, *, retrieves: bool = False) -> bool:
    """Whether a call of tool ``name`` is a search (retrieves) rather than an action.

    The one classification every importer uses (chat logs, ATIF, Inspect, Search-R1 tags,
    OpenTelemetry / Phoenix spans, Langfuse observations). With ``search_tools`` given, exactly
    the names listed are searches. Otherwise a name is a search when one of its words starts with
    a :data:`SEARCH_WORD_PREFIXES` entry or is one of :data:`SEARCH_WORDS`, or when the source
    shows the call retrieving (``retrieves``: a tool span with retriever spans under it); a call
    without a name is counted as a search (nothing says otherwise).

    Examples
    --------
    >>> [is_search_tool(n) for n in ("google_search", "scrape_website", "book_reservation", "think")]
    [True, True, False, False]
    """
    if name is None:
        return True
    if search_tools is not None:
        return name in search_tools
    return retrieves or any(w.startswith(SEARCH_WORD_PREFIXES) or w in SEARCH_WORDS for w in tool_words(name))


def resolve_search_tools(value: str | Iterable[str] | None) -> frozenset[str] | None:
    """The ``search_tools`` option as a set of names: a comma-separated string or a list; None keeps the defaults."""
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(n, str) for n in names):
        raise UserInputError("option search_tools must be tool names, e.g. 'web_search,browse_webpage'")
    out = frozenset(n.strip() for n in names if n.strip())
    if not out:
        raise UserInputError("option search_tools names no tool; give names like 'web_search,browse_webpage'")
    return out


def record_tool_kinds(trace: dict, decisions: dict[str, str]) -> None:
    """Keep each tool's decided kind (``search`` or ``other``) in the trace's metadata."""
    if decisions:
        trace.setdefault("metadata", {})["tool_kinds"] = dict(sorted(decisions.items()))


#: Argument names holding a search query / a visited address, in the order tried.
QUERY_KEYS = ("query", "q", "queries", "search_query")
URL_KEYS = ("url", "urls", "url_list", "link", "doc_id", "document_id")


def call_fields(args: dict) -> tuple[str | None, str | None]:
    """``(query, url)`` from tool-call arguments: strings, or lists of strings joined with `` | ``."""
    out = []
    for keys in (QUERY_KEYS, URL_KEYS):
        value = next((args[k] for k in keys if args.get(k) is not None), None)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " | ".join(value)
        out.append(value if isinstance(value, str) else None)
    return out[0], out[1]
