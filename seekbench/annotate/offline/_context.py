"""What a step can see: one pass over a trace yielding each step with its visible context.

An offline judge labels a step from the step itself and from what came
*before* it in the trace (the question, earlier queries, earlier reasoning,
earlier observations), plus the trace's final answer, which a judge reading
the whole trace would also see. Gold answers are never used.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .._rules_derived import RuleLabel, rule_labels
from ._text import content_words, word_bigrams

#: Characters of each document kept as observation text (long pages are cut, not dropped).
MAX_DOC_CHARS = 2000


@dataclass
class StepView:
    """One step of a trace together with the context visible to it.

    Attributes
    ----------
    trace_id, step, pos, kind : identity of the step (``step`` is the step's ``index``).
    n_steps : int
        Steps in the trace.
    turn : int
        Tool calls so far (spec section 1 turn counting for search and search_result steps).
    text : str
        The step's own text: reasoning text, the query of a search, the documents of an observation.
    question : str
    query : str or None
        For a search, its query; for an observation, the query of the search that produced it.
    prev_query : str or None
        For a search, the query of the previous search step.
    is_first_search : bool
        The first search step of the trace.
    repeats_earlier : bool
        A search whose query equals an earlier query after ``normalize_query``.
    rule_label : RuleLabel or None
        The rule-derived search type of a search step (``seekbench.annotate.rule_labels``, the
        same rule the LLM judges use), None when the rules do not decide it.
    documents : list of dict
        For an observation, its documents.
    final_answer : str or None
    seen_obs_words, last_obs_words, prior_reasoning_words : set of str
        Content words of all earlier observations, of the latest one, and of earlier reasoning.
    seen_doc_words, last_doc_words : list of set of str
        Content words of each document of all earlier observations, and of the latest one (an
        observation without documents counts as one document: its text).
    seen_obs_text, last_obs_text : str
        The earlier observations' text, and the latest one's, lowercased (numbers and answers are
        looked up in them; reasoning steps only).
    seen_bigrams : list of set of tuple of str
        Word bigrams (:func:`._text.word_bigrams`) of the documents of each earlier observation
        (one set per observation, shared between views, so a long trace holds each set once).
    last_bigrams : set of tuple of str
        The latest observation's.
    steps_since_obs : int
        Steps between the latest earlier observation and this step (0: right after it); -1 when none.
    n_prior_obs, n_prior_searches : int
    trace_steps : list of StepView
        Every view of the same trace, in order (shared by them; complete once the trace's views
        have all been yielded): scores that read the trace as a whole look at the other steps.
    cache : dict
        Memo of derived values (the step's scores), so each is computed once per view.
    """

    trace_id: str
    step: int
    pos: int
    kind: str
    n_steps: int
    turn: int
    text: str
    question: str
    query: str | None = None
    prev_query: str | None = None
    is_first_search: bool = False
    repeats_earlier: bool = False
    rule_label: RuleLabel | None = None
    documents: list = field(default_factory=list)
    final_answer: str | None = None
    seen_obs_words: set = field(default_factory=set)
    last_obs_words: set = field(default_factory=set)
    prior_reasoning_words: set = field(default_factory=set)
    seen_doc_words: list = field(default_factory=list)
    last_doc_words: list = field(default_factory=list)
    seen_obs_text: str = ""
    last_obs_text: str = ""
    seen_bigrams: list = field(default_factory=list)
    last_bigrams: set = field(default_factory=set)
    steps_since_obs: int = -1
    n_prior_obs: int = 0
    n_prior_searches: int = 0
    trace_steps: list = field(default_factory=list, repr=False, compare=False)
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_empty(self) -> bool:
        """True when the step carries no text to judge (no reasoning text, query or documents)."""
        return not (self.text or "").strip()


def observation_text(step: dict) -> str:
    """The text of an observation: each document's title and text (cut at ``MAX_DOC_CHARS``), else the step text."""
    docs = step.get("documents") or []
    parts = []
    for d in docs:
        title = (d.get("title") or "").strip()
        body = (d.get("text") or "").strip()[:MAX_DOC_CHARS]
        chunk = f"{title}. {body}" if title and body else title or body
        if chunk:
            parts.append(chunk)
    if parts:
        return "\n".join(parts)
    return (step.get("text") or "").strip()


def _own_text(step: dict) -> str:
    kind = step["kind"]
    if kind == "search":
        return (step.get("query") or step.get("url") or "").strip()
    if kind == "search_result":
        return observation_text(step)
    return (step.get("text") or "").strip()


def trace_views(traces: list[dict]) -> list[list[StepView]]:
    """The step views of each trace (see :func:`iter_step_views`), computed once for reuse."""
    return [list(iter_step_views(t)) for t in traces]


def iter_step_views(trace: dict) -> Iterator[StepView]:
    """Yield a :class:`StepView` for every step of a canonical trace, in trace order.

    Parameters
    ----------
    trace : dict
        A canonical trace (``schemas/trace.schema.json``).

    Yields
    ------
    StepView
        Context is accumulated from the steps *before* the yielded one only.
    """
    steps = trace.get("steps") or []
    question = trace.get("question") or ""
    final = trace.get("final_answer")
    by_index = {st["index"]: st for st in steps}
    derived = rule_labels(trace)
    seen_obs: set[str] = set()
    last_obs: set[str] = set()
    reasoning_words: set[str] = set()
    # Shared, never mutated after creation: each view keeps the lists as they were before it.
    seen_docs: list[set[str]] = []
    last_docs: list[set[str]] = []
    seen_text: list[str] = []
    last_text = ""
    seen_bigrams: list[set[tuple[str, str]]] = []
    last_bigrams: set[tuple[str, str]] = set()
    siblings: list[StepView] = []
    last_obs_pos = -1
    prev_query: str | None = None
    n_obs = n_search = 0
    for pos, st in enumerate(steps):
        kind = st["kind"]
        own = _own_text(st)
        view = StepView(
            trace_id=trace["trace_id"],
            step=st["index"],
            pos=pos,
            kind=kind,
            n_steps=len(steps),
            turn=max(n_obs, n_search),
            text=own,
            question=question,
            final_answer=final,
            seen_obs_words=set(seen_obs),
            last_obs_words=set(last_obs),
            prior_reasoning_words=set(reasoning_words),
            seen_doc_words=seen_docs,
            last_doc_words=last_docs,
            seen_obs_text=" ".join(seen_text) if kind == "reasoning" else "",
            last_obs_text=last_text if kind == "reasoning" else "",
            seen_bigrams=seen_bigrams,
            last_bigrams=last_bigrams,
            steps_since_obs=pos - last_obs_pos - 1 if last_obs_pos >= 0 else -1,
            n_prior_obs=n_obs,
            n_prior_searches=n_search,
            trace_steps=siblings,
        )
        siblings.append(view)
        if kind == "search":
            q = st.get("query") or st.get("url")
            view.query, view.prev_query = q, prev_query
            view.rule_label = derived.get((int(st["index"]), "search_type"))
            view.is_first_search = n_search == 0
            view.repeats_earlier = view.rule_label is not None and view.rule_label.value == "RepeatQuery"
            view.turn = n_search + 1
            prev_query = q if q else prev_query
            n_search += 1
        elif kind == "search_result":
            view.documents = list(st.get("documents") or [])
            view.query = _producing_query(st, by_index, prev_query)
            view.turn = max(n_obs + 1, n_search)
            words = content_words(own)
            seen_obs |= words
            last_obs = words
            last_docs = [content_words(f"{d.get('title') or ''} {d.get('text') or ''}") for d in view.documents] or [
                words
            ]
            seen_docs = seen_docs + last_docs
            seen_text.append(own.lower())
            last_text = own.lower()
            # A new list, never mutated: earlier views keep the one they saw.
            last_bigrams = (
                set().union(*(word_bigrams(f"{d.get('title') or ''} {d.get('text') or ''}") for d in view.documents))
                if view.documents
                else word_bigrams(own)
            )
            seen_bigrams = [*seen_bigrams, last_bigrams]
            last_obs_pos = pos
            n_obs += 1
        elif kind == "reasoning":
            reasoning_words |= content_words(own)
        yield view


def _producing_query(step: dict, by_index: dict, latest: str | None) -> str | None:
    for dep in step.get("depends_on") or ():
        src = by_index.get(dep)
        if src is not None and src["kind"] == "search":
            return src.get("query") or src.get("url")
    return latest
