"""One trace's way through the judge: ask, check, repair at most N times, then its label records.

:class:`TraceJob` is a small state machine shared by the online annotator
and the Batch API path: :meth:`TraceJob.next_request` gives the next request
and its cache key (while not done), :meth:`TraceJob.feed` takes its completion,
:meth:`TraceJob.fail` ends it on a request that failed for good, and
:meth:`TraceJob.records` turns the outcome into annotation records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._version import SCHEMA_VERSION
from ..llm import Completion, JudgeConfig, cache_key, utc_now
from ..traces import LABEL_FIELDS
from ._parse import ParseResult, parse_judge_output
from ._prompt import PromptTemplate, render_prompt, repair_messages, request_body
from ._rules_derived import rule_labels

#: Prefixes of ``unscored_reason``: a request that failed (nothing paid; retried by a re-run),
#: an answer still invalid after the repairs, and an explicit null from the judge.
REQUEST_FAILED = "request_failed"
INVALID_OUTPUT = "invalid_output"
ABSTAINED = "judge_abstained"
#: The prompt does not fit the judge's context even with every step text cut: nothing was sent.
OVER_CONTEXT = "over_context"


@dataclass
class CallRecord:
    """One completion used by a job (paid now, or replayed from the cache)."""

    key: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float | None
    created: str
    from_cache: bool


@dataclass
class TraceJob:
    """The judge work for one trace under one judge config and prompt template."""

    trace: dict
    config: JudgeConfig
    template: PromptTemplate
    rules: dict = field(init=False)
    calls: list[CallRecord] = field(default_factory=list)
    result: ParseResult | None = None
    failure: str | None = None
    repairs: int = 0
    errors: list[str] = field(default_factory=list)
    _body: dict | None = field(default=None, init=False, repr=False)
    _done: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.rules = rule_labels(self.trace)
        self.rendered = render_prompt(
            self.trace,
            self.rules,
            self.template,
            context_tokens=self.config.context_tokens,
            max_tokens=self.config.max_tokens,
        )
        # Only optional fields left (grounding of rule-labeled searches): not worth a paid request.
        self._done = not any(spec.required for spec in self.rendered.steps.values())
        if self._done:  # nothing the judge must give: only rule labels (or none)
            self.result = ParseResult(True)
        elif self.rendered.over_context:  # never sent: a request the endpoint must refuse, or would silently cut
            self.errors.append(
                f"the prompt exceeds the judge's context of {self.config.context_tokens} tokens even "
                f"with every step text cut ({len(self.trace['steps'])} steps); nothing was sent"
            )
            self.result = ParseResult(False, error=self.errors[-1])
            self._done = True
        else:
            self._body = request_body(self.config, self.rendered.messages)

    @property
    def trace_id(self) -> str:
        return str(self.trace["trace_id"])

    @property
    def done(self) -> bool:
        return self._done

    def next_request(self) -> tuple[str, dict]:
        """The cache key and body of the next request to send (or look up in the cache); only while not done."""
        if self._done or self._body is None:  # a job not done always has a body: set on creation or repair
            raise RuntimeError(f"trace {self.trace_id}: the job is done; it has no request to send")
        return cache_key(self.config, self.template, self._body), self._body

    def feed(self, completion: Completion, *, key: str, cost_usd: float, from_cache: bool) -> ParseResult:
        """Take the completion of the current request; move to done or to the next repair."""
        self.calls.append(
            CallRecord(
                key,
                completion.prompt_tokens,
                completion.completion_tokens,
                cost_usd,
                completion.latency_s,
                completion.created,
                from_cache,
            )
        )
        result = parse_judge_output(completion.content, self.rendered.steps, finish_reason=completion.finish_reason)
        self.result = result
        if result.ok:
            self._done = True
            return result
        error = result.error
        assert error is not None  # parse_judge_output gives a reason with every rejection
        if self.repairs < self.config.max_repairs:
            self.errors.append(error)
            self.repairs += 1
            messages = repair_messages(self.rendered, error, repair=self.repairs, max_repairs=self.config.max_repairs)
            self._body = request_body(self.config, messages)
        else:
            self.errors.append(error)
            self._done = True
        return result

    def fail(self, reason: str) -> None:
        """End the job: the current request failed for good (nothing was paid for it)."""
        self.failure = reason
        self._done = True

    @property
    def status(self) -> str:
        """``labeled``, ``unscored`` (invalid after repairs), ``failed`` (request failed) or ``pending``."""
        if not self._done:
            return "pending"
        if self.failure is not None:
            return "failed"
        return "labeled" if self.result is not None and self.result.ok else "unscored"

    def records(self, *, rater: str) -> list[dict]:
        """The annotation records of this trace: rule labels, then judge labels or explicit unscored ones."""
        cfg, tid = self.config, self.trace_id
        when = self.calls[-1].created if self.calls else utc_now()
        rows: list[tuple[int, str, str | None, str | None, dict]] = []
        for (step, name), rule in self.rules.items():
            prov = {"kind": "rule", "judge": cfg.name, "rule": rule.rule, "time": when, "cost_usd": 0.0}
            if rule.repeat_of is not None:
                prov["repeat_of"] = rule.repeat_of
            rows.append((step, name, rule.value, None, prov))
        judge_prov = {
            "kind": "judge",
            "judge": cfg.name,
            "model": cfg.model,
            "prompt_sha256": self.template.sha256,
            "prompt_version": self.template.version,
            "time": when,
            "input_tokens": sum(c.prompt_tokens for c in self.calls),
            "output_tokens": sum(c.completion_tokens for c in self.calls),
            "cost_usd": round(sum(c.cost_usd for c in self.calls), 10),
            "latency_s": (
                round(sum(c.latency_s for c in self.calls if c.latency_s is not None), 4)
                if any(c.latency_s is not None for c in self.calls)
                else None
            ),
            "truncated": self.rendered.truncated,
            "requests": len(self.calls),
            "repairs": self.repairs,
            "cache_key": self.calls[-1].key if self.calls else None,
        }
        if self.rendered.truncated:  # how far: the length step texts were cut to; each record says if its step was
            judge_prov["truncated_to_chars"] = self.rendered.cap
        cut = set(self.rendered.cut_steps)
        status = self.status
        for step, spec in sorted(self.rendered.steps.items()):
            for name in spec.required + spec.optional:
                if status == "labeled":
                    assert self.result is not None  # "labeled" means a result that is ok
                    if (step, name) not in self.result.labels:
                        continue  # an optional field the judge did not give
                    value = self.result.labels[(step, name)]
                    reason = None if value is not None else f"{ABSTAINED}: the judge answered null"
                elif name in spec.optional:
                    continue
                elif status == "failed":
                    value, reason = None, f"{REQUEST_FAILED}: {self.failure}"
                elif self.rendered.over_context:
                    value, reason = None, f"{OVER_CONTEXT}: {self.errors[-1]}"
                else:
                    value = None
                    reason = f"{INVALID_OUTPUT}: {self.errors[-1]} (after {self.repairs} repairs)"
                prov = {**judge_prov, "step_truncated": step in cut} if self.rendered.truncated else judge_prov
                rows.append((step, name, value, reason, prov))
        order = {f: i for i, f in enumerate(LABEL_FIELDS)}
        rows.sort(key=lambda r: (r[0], order.get(r[1], 99)))
        out = []
        for step, name, value, reason, prov in rows:
            rec = {
                "schema_version": SCHEMA_VERSION,
                "trace_id": tid,
                "step": step,
                "field": name,
                "value": value,
                "rater": rater,
                "provenance": {**prov, "trace_records": len(rows)},
            }
            if value is None:
                rec["unscored_reason"] = reason
            out.append(rec)
        return out
