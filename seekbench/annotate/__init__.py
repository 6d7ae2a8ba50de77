"""Annotate: label the steps of traces with a judge (an LLM on any OpenAI-compatible endpoint, or offline).

One request per trace labels all its steps; rule-derived labels (InitialQuery,
RepeatQuery) are computed locally and never paid for; answers are validated
against ``schemas/judge_output.schema.json`` and repaired at most N times,
then recorded as unscored with the reason. Completions are cached in SQLite
and the output annotation set is appended trace by trace, so a run killed at
any moment resumes without paying twice.

>>> from seekbench.annotate import annotate  # doctest: +SKIP
>>> summary = annotate("traces.jsonl", "gpt-4.1-mini", "labels.jsonl", budget_usd=5)  # doctest: +SKIP
"""

# The client layer's names, still importable from here where users import them today.
from ..llm import (
    CachedCompletion,
    JudgeCache,
    JudgeConfig,
    JudgeInfo,
    Prices,
    PromptTemplate,
    cost_usd,
    default_cache_path,
    find_judge_file,
    judge_dirs,
    list_judges,
    load_judge_config,
    neutralise,
    prompt_token_bound,
)
from ._annotator import annotate
from ._batch import state_path_for
from ._parse import ParseResult, parse_judge_output
from ._prompt import RenderedPrompt, StepSpec, render_prompt, strict_output_schema
from ._rules_derived import RuleLabel, rule_labels
from ._summary import AnnotateSummary

__all__ = [
    "AnnotateSummary",
    "CachedCompletion",
    "JudgeCache",
    "JudgeConfig",
    "JudgeInfo",
    "ParseResult",
    "Prices",
    "PromptTemplate",
    "RenderedPrompt",
    "RuleLabel",
    "StepSpec",
    "annotate",
    "cost_usd",
    "default_cache_path",
    "find_judge_file",
    "judge_dirs",
    "list_judges",
    "load_judge_config",
    "neutralise",
    "parse_judge_output",
    "prompt_token_bound",
    "render_prompt",
    "rule_labels",
    "state_path_for",
    "strict_output_schema",
]
