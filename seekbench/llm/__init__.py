"""The one client layer for every model call: judge files, provider, cache, budget, prompts, fencing, replies.

Every caller that asks a model (the step judge in :mod:`seekbench.annotate`,
the answer and coverage judges in :mod:`seekbench.answers`, the seeker agent
and the completeness estimator in :mod:`seekbench.env`) goes through here:

- **Judge files** (:func:`load_judge_config`, :class:`JudgeConfig`): model,
  OpenAI-compatible endpoint (base URL, key variable), decoding, prices.
- **Provider** (:class:`OpenAIProvider`): the official ``openai`` client,
  retries with exponential backoff and jitter honouring ``Retry-After``, the
  key from the environment (a placeholder for a loopback endpoint) scrubbed
  from every message, a fail-fast :class:`EndpointUnreachable`.
- **Calls** (:func:`call`, :class:`CallContext`): the SQLite cache
  (:class:`JudgeCache`) first, then the budget (:class:`Budget`, cost from the
  reported usage), a limit on requests in flight, the first failure kept uncut.
- **Batch API** (:class:`BatchClient` and its helpers).
- **Prompts** (:class:`PromptTemplate`): one loader whose placeholders are data;
  :func:`cache_key` over model, prompt version and hash, and request body.
- **Fencing** of untrusted text (:func:`neutralise`, :func:`json_data`, :func:`fenced`).
- **Replies** (:func:`ask`, :class:`Parsed`, :class:`RepairLoop`): a checked reply, re-asked with a
  changed request until valid: the one repair loop every caller shares.
- **Server limits** (:func:`probe_server`, :class:`ServerInfo`, :func:`context_refusal`): the
  context window, parallel slots and model a server reports.
- **Response formats** (:class:`ResponseFormats`): ``auto`` falls back from
  ``json_schema`` to ``json_object`` to plain text when a server refuses the
  parameter, and remembers per endpoint what it accepts.

>>> from seekbench.llm import fill, neutralise
>>> neutralise("STEPS_JSON>>>")
'STEPS-JSON> > >'
>>> fill("Q: {{Q}}", {"{{Q}}": "{{Q}}?"})
'Q: {{Q}}?'
"""

from ._batch_api import (
    BatchClient,
    batch_line,
    download_lines,
    find_batch,
    poll_batch,
    save_state,
    split_parts,
    submit_part,
)
from ._cache import CachedCompletion, JudgeCache, default_cache_path
from ._client import CallContext, LLMClient, NoReply, Reply, call, call_context, completion_of, progress_bar, store
from ._completion import Completion, NotACompletion, completion_from_body, completion_from_text, utc_now
from ._config import (
    PACKAGE_JUDGES_DIR,
    JudgeConfig,
    JudgeInfo,
    find_judge_file,
    judge_dirs,
    list_judges,
    load_judge_config,
)
from ._cost import Budget, Prices, cost_usd, estimate_tokens, prompt_token_bound, request_cost_bound
from ._fence import fenced, fold, json_data, neutralise, safe_trace_id
from ._formats import FORMAT_ORDER, ResponseFormats, rejects_format
from ._prompt import PromptTemplate, cache_key, fill
from ._provider import (
    LOCAL_PLACEHOLDER_KEY,
    MAX_RETRY_AFTER_S,
    Backoff,
    EndpointFailing,
    EndpointUnreachable,
    OpenAIProvider,
    RequestFailed,
    resolve_api_key,
    retry_after_s,
)
from ._reply import Answer, CallTally, Parsed, RepairLoop, ask, count, strip_code_fence, with_note
from ._secrets import mask_credentials, redact, scrub_completion
from ._server_info import ServerInfo, context_refusal, is_local, probe_server
from ._sqlite import SQLiteStore, open_store, user_cache_path
from ._validation import (
    LOW_KAPPA,
    RECORD_FORMAT,
    RECORD_VERSION,
    compact_kappas,
    kappa_by_field,
    load_validation,
    pick_result,
    read_record,
    record_lines,
    record_notices,
    validation_path,
)

__all__ = [
    "Answer",
    "Backoff",
    "BatchClient",
    "Budget",
    "CachedCompletion",
    "CallContext",
    "CallTally",
    "Completion",
    "EndpointFailing",
    "EndpointUnreachable",
    "FORMAT_ORDER",
    "JudgeCache",
    "JudgeConfig",
    "JudgeInfo",
    "LLMClient",
    "LOCAL_PLACEHOLDER_KEY",
    "LOW_KAPPA",
    "MAX_RETRY_AFTER_S",
    "NoReply",
    "NotACompletion",
    "OpenAIProvider",
    "PACKAGE_JUDGES_DIR",
    "Parsed",
    "Prices",
    "PromptTemplate",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "RepairLoop",
    "Reply",
    "RequestFailed",
    "ResponseFormats",
    "SQLiteStore",
    "ServerInfo",
    "ask",
    "batch_line",
    "cache_key",
    "call",
    "call_context",
    "compact_kappas",
    "completion_from_body",
    "completion_from_text",
    "completion_of",
    "context_refusal",
    "cost_usd",
    "count",
    "default_cache_path",
    "download_lines",
    "estimate_tokens",
    "fenced",
    "fill",
    "find_batch",
    "find_judge_file",
    "fold",
    "is_local",
    "json_data",
    "judge_dirs",
    "kappa_by_field",
    "list_judges",
    "load_judge_config",
    "load_validation",
    "mask_credentials",
    "neutralise",
    "open_store",
    "pick_result",
    "poll_batch",
    "probe_server",
    "progress_bar",
    "prompt_token_bound",
    "read_record",
    "record_lines",
    "record_notices",
    "redact",
    "rejects_format",
    "request_cost_bound",
    "resolve_api_key",
    "retry_after_s",
    "safe_trace_id",
    "save_state",
    "scrub_completion",
    "split_parts",
    "store",
    "strip_code_fence",
    "submit_part",
    "user_cache_path",
    "utc_now",
    "validation_path",
    "with_note",
]
