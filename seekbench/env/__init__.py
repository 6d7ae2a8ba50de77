"""The seeking environment (SeekerGym): corpora, embedders, retrieval, beliefs, agents, episodes, completeness.

An episode gives an agent a document's title and abstract; the agent sends
queries, each of which retrieves every goal passage with cosine similarity
above theta; completeness is the share of the document's passages retrieved
(spec section 7). Every episode is written as a canonical trace, so
``seekbench annotate``, ``metrics`` and ``report`` read it unchanged.

>>> from seekbench.env import default_corpus, make_agent, make_embedder, run_episodes
>>> docs = default_corpus().documents  # doctest: +SKIP
>>> traces = run_episodes(docs, [make_agent("keyphrase")], ["deduplicated"],
...                       embedder=make_embedder("tfidf"), max_steps=10)  # doctest: +SKIP
"""

from ._agents import SCRIPTED_AGENTS, Action, Agent, EpisodeStep, KeyphraseAgent, SentenceAgent, keyphrases
from ._beliefs import BELIEFS, Belief, Gap, QueryRecord, build_belief, missing_placeholder
from ._completeness import (
    CompletenessCurves,
    completeness_curve,
    completeness_score,
    completeness_summary,
    env_traces,
    episode_table,
    query_diversity,
    query_diversity_table,
    topic_agent_table,
)
from ._corpus import (
    CorpusBuild,
    QualityFilter,
    build_corpus,
    goal_passages,
    load_corpus,
    validate_document,
    write_corpus,
)
from ._default_corpus import default_corpus
from ._embed_cache import EmbeddingCache, default_embed_cache_path
from ._embedders import (
    DEFAULT_THETA,
    EMBEDDER_KINDS,
    Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    TfidfEmbedder,
    make_embedder,
)
from ._episode import episode_id, fit_embedder, run_episode, run_episodes
from ._llm_agent import LLMAgent, load_seeker_prompt, parse_agent_output
from ._make_agent import make_agent
from ._markup import ParsedDocument, parse_html, parse_markdown
from ._retrieval import DocumentIndex, Hit, RetrievalState, retrieve
from ._theta import THETA_COLUMNS, default_thetas, theta_sweep

__all__ = [
    "BELIEFS",
    "DEFAULT_THETA",
    "EMBEDDER_KINDS",
    "SCRIPTED_AGENTS",
    "Action",
    "Agent",
    "Belief",
    "CompletenessCurves",
    "CorpusBuild",
    "DocumentIndex",
    "Embedder",
    "EmbeddingCache",
    "EpisodeStep",
    "Gap",
    "Hit",
    "KeyphraseAgent",
    "LLMAgent",
    "OpenAIEmbedder",
    "ParsedDocument",
    "QualityFilter",
    "QueryRecord",
    "RetrievalState",
    "SentenceAgent",
    "SentenceTransformerEmbedder",
    "THETA_COLUMNS",
    "TfidfEmbedder",
    "build_belief",
    "build_corpus",
    "completeness_curve",
    "completeness_score",
    "completeness_summary",
    "default_corpus",
    "default_embed_cache_path",
    "default_thetas",
    "env_traces",
    "episode_id",
    "episode_table",
    "fit_embedder",
    "goal_passages",
    "keyphrases",
    "load_corpus",
    "load_seeker_prompt",
    "make_agent",
    "make_embedder",
    "missing_placeholder",
    "parse_agent_output",
    "parse_html",
    "parse_markdown",
    "query_diversity",
    "query_diversity_table",
    "retrieve",
    "run_episode",
    "run_episodes",
    "theta_sweep",
    "topic_agent_table",
    "validate_document",
    "write_corpus",
]
