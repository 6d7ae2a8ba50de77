"""One trace's way through the judge: its requests, their checks and repairs, then its label records.

:class:`TraceJob` is a small state machine shared by the online annotator
and the Batch API path: :meth:`TraceJob.next_request` gives the next request
and its cache key (while not done), :meth:`TraceJob.feed` takes its completion,
:meth:`TraceJob.fail` ends it on a request that failed for good,
:meth:`TraceJob.stop` ends it when the run stops before its next request is sent,
:meth:`TraceJob.refused_context` splits the current request after the server
refused it as too long, and :meth:`TraceJob.records` turns the outcome into
annotation records.

A trace is asked for in units (:mod:`._plan`): the whole trace, windows of
steps, or one step at a time. Each unit runs the client layer's repair loop
(:class:`~seekbench.llm.RepairLoop`); every label that validates is kept, a
repair asks only for the steps still missing or invalid, and only what stays
invalid is recorded as unscored, with its reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..llm import Completion, JudgeConfig, Parsed, RepairLoop, cache_key, estimate_tokens, fill
from ._parse import ParseResult, parse_judge_output
from ._plan import Unit, plan_steps, plan_windows
from ._prompt import (
    TOKENS_FRAME,
    TOKENS_PER_STEP_TYPICAL,
    PromptTemplate,
    RenderedPrompt,
    StepSpec,
    answer_tokens,
    render_prompt,
    repair_messages,
    request_body,
    step_specs,
)
from ._records import ABSTAINED, INVALID_OUTPUT, NOT_SENT, OVER_CONTEXT, REQUEST_FAILED, RETRIED, job_records
from ._rules_derived import rule_labels

__all__ = [
    "ABSTAINED",
    "INVALID_OUTPUT",
    "NOT_SENT",
    "OVER_CONTEXT",
    "REQUEST_FAILED",
    "RETRIED",
    "CallRecord",
    "TraceJob",
    "served_model",
]

#: A trace whose step texts must be cut below this many characters to fit is asked for in windows instead.
KEEP_CHARS = 4000
#: Context-length refusals of one trace after which it is given up (each one halves the window at least).
MAX_CONTEXT_REFUSALS = 6


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
    model: str | None = None


def served_model(raw: str) -> str | None:
    """The ``model`` a chat-completion response says served it (None when it does not say)."""
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return None
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model else None


@dataclass
class _Asked:
    """One unit in progress: its render, its repair loop, the steps it still owes."""

    unit: Unit
    rendered: RenderedPrompt
    loop: RepairLoop
    keys: list[str] = field(default_factory=list)


@dataclass
class TraceJob:
    """The judge work for one trace under one judge config and prompt template.

    Parameters
    ----------
    granularity : {"trace", "step"}
        One request per trace (windows when it is too long), or one per step.
    mode : callable, optional
        The response format in use (``() -> str``; an ``auto`` run's may change mid-run).
    context_tokens : int, optional
        The context window to plan for (default the judge's; the server's when it reports a smaller one).
    """

    trace: dict
    config: JudgeConfig
    template: PromptTemplate
    granularity: str = "trace"
    mode: object = None
    context_tokens: int | None = None
    rules: dict = field(init=False)
    calls: list[CallRecord] = field(default_factory=list)
    result: ParseResult | None = None
    failure: str | None = None
    #: The job was stopped before its next request was sent (:meth:`stop`), not failed by one.
    unsent: bool = False
    repairs: int = 0
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rules = rule_labels(self.trace)
        self.specs = step_specs(self.trace, self.rules)
        self.known = frozenset(self.specs)
        self.labels: dict[tuple[int, str], str | None] = {}
        #: ``(step, field) -> (repair number, cache key)`` of the answer that gave the label.
        self.origin: dict[tuple[int, str], tuple[int, str]] = {}
        self.problems: dict[int, str] = {}
        self.over: set[int] = set()
        self.rule_conflicts: list[tuple[int, str, object]] = []
        self.refusals = 0
        self.truncated = False
        self.cap: int | None = None
        self.cut: set[int] = set()
        self.formats_used: list[str] = []
        self.context = self.context_tokens or self.config.context_tokens
        self._window_of: dict[int, tuple[int, int]] = {}
        #: The first request's prompt (the whole trace's, unless it is asked for in windows or steps).
        self.rendered: RenderedPrompt | None = None
        #: The whole trace's render made while planning, and the context it was made for (reused once).
        self._whole: tuple[tuple[RenderedPrompt, int | None], int] | None = None
        self._queue: list[Unit] = self._plan()
        self._current: _Asked | None = None
        if not self._queue:  # nothing the judge must give: only rule labels (or none)
            self.result = ParseResult(True)
        self._advance()

    @staticmethod
    def needs_judge(trace: dict) -> bool:
        """Whether a trace owes the judge any label (else its rule labels are all it gets, for free)."""
        return any(spec.required for spec in step_specs(trace, rule_labels(trace)).values())

    # -- planning -----------------------------------------------------------------

    def _owed(self) -> list[int]:
        return [s for s, spec in self.specs.items() if spec.required]

    def _plan(self) -> list[Unit]:
        if not self._owed():
            return []
        if self.granularity == "step":
            return plan_steps(self.trace, self.specs)
        n = sum(bool(spec.required or spec.optional) for spec in self.specs.values())
        answer_fits = (
            answer_tokens(self.config, n) is None
            or self.config.max_tokens >= TOKENS_FRAME + TOKENS_PER_STEP_TYPICAL * n
        )
        first = self._render(Unit(None))
        self._whole = (first, self.context)
        whole = first[0]
        # one request when the trace fits, or when only a few long texts (a 1 MB page) had to be cut and
        # each keeps a good part: windows would cut them all the same, at the price of more requests
        if answer_fits and not whole.over_context and (not whole.truncated or (whole.cap or 0) >= KEEP_CHARS):
            return [Unit(None)]
        units = self._windows(self.context, self.trace["steps"])
        return units if len(units) > 1 else [Unit(None)]  # one step too long alone: the plain prompt, cut to fit

    def _windows(self, context: int, steps: list[dict]) -> list[Unit]:
        fixed = estimate_tokens(self.template.system) + estimate_tokens(
            fill(self.template.user, {"{{TRACE_ID}}": "", "{{QUESTION_BLOCK}}": "", "{{STEPS_BLOCK}}": ""})
        )
        sub = {**self.trace, "steps": steps}
        return plan_windows(sub, self.specs, self.config, context_tokens=context, fixed_tokens=fixed)

    def _advance(self) -> None:
        """Start the next unit of the plan (or finish the job)."""
        while self._queue:
            unit = self._queue.pop(0)
            asked = self._start(unit)
            if asked is not None:
                self._current = asked
                return
        self._current = None

    def _render(self, unit: Unit) -> tuple[RenderedPrompt, int | None]:
        """The prompt of ``unit`` at the current context, and its answer budget (None: the judge file's)."""
        n = (
            len(unit.label)
            if unit.label is not None
            else sum(bool(s.required or s.optional) for s in self.specs.values())
        )
        max_tokens = answer_tokens(self.config, n)
        rendered = render_prompt(
            self.trace,
            self.rules,
            self.template,
            context_tokens=self.context,
            max_tokens=max_tokens or self.config.max_tokens,
            label_steps=unit.label,
            shown_steps=set(unit.shown) if unit.shown is not None else None,
            clip=unit.clip,
        )
        return rendered, max_tokens

    def _start(self, unit: Unit) -> _Asked | None:
        planned = self._whole
        if unit.label is None and planned is not None and planned[1] == self.context:
            rendered, max_tokens = planned[0]  # rendered once already, when the plan was made
        else:
            rendered, max_tokens = self._render(unit)
        if self.rendered is None:
            self.rendered = rendered
        if unit.window is not None:
            for s in rendered.steps:
                self._window_of[s] = unit.window
        if rendered.truncated:
            self.truncated = True
            self.cap = rendered.cap if self.cap is None else min(self.cap, rendered.cap or 0)
            self.cut.update(rendered.cut_steps)
        if rendered.over_context:  # never sent: a request the endpoint must refuse, or would silently cut
            reason = (
                f"the prompt exceeds the judge's context of {self.context} tokens even "
                f"with every step text cut ({len(self.trace['steps'])} steps); nothing was sent"
            )
            self.errors.append(reason)
            self.result = ParseResult(False, error=reason)
            self.over.update(s for s, spec in rendered.steps.items() if spec.required)
            return None
        specs = rendered.steps

        def owed() -> dict[int, StepSpec]:
            """The unit's steps, each owing the required fields not yet accepted (those accepted become
            optional: a repair answer may repeat them). Steps owing nothing stay, for their optional
            fields and to see a judge contradicting a rule."""
            out = {}
            for s, spec in specs.items():
                missing = tuple(f for f in spec.required if (s, f) not in self.labels)
                have = tuple(f for f in spec.required if f not in missing)
                out[s] = StepSpec(spec.kind, missing, spec.optional + have, spec.rule_fixed)
            return out

        def parse(comp) -> Parsed:
            want = owed()
            res = parse_judge_output(
                comp.content,
                want,
                finish_reason=comp.finish_reason,
                known_steps=self.known,
                extract=self._mode() == "text",
            )
            return self._take(res, want, asked)

        def body(messages: list[dict], repair: int) -> dict:
            return request_body(self.config, messages, mode=self._mode(), repair=repair, max_tokens=max_tokens)

        def repair(messages: list[dict], n: int, parsed: Parsed) -> list[dict]:
            steps = sorted(s for s, spec in owed().items() if spec.required)
            return repair_messages(
                rendered, parsed.error or "", repair=n, max_repairs=self.config.max_repairs, steps=steps
            )

        loop: RepairLoop = RepairLoop(
            rendered.messages, body=body, parse=parse, repair=repair, max_repairs=self.config.max_repairs
        )
        asked = _Asked(unit, rendered, loop)
        return asked

    def _mode(self) -> str:
        mode = self.mode() if callable(self.mode) else self.config.response_format
        return "json_schema" if mode == "auto" else str(mode)

    def _take(self, res: ParseResult, want: dict[int, StepSpec], asked: _Asked) -> Parsed:
        """Keep every label of the answer that validated; the unit is done when it owes nothing more."""
        key = asked.keys[-1] if asked.keys else ""
        for (s, f), value in res.labels.items():
            if (s, f) not in self.labels:
                self.labels[(s, f)] = value
                self.origin[(s, f)] = (asked.loop.repairs, key)
        seen = {(s, f) for s, f, _ in self.rule_conflicts}
        self.rule_conflicts.extend(c for c in res.rule_conflicts if (c[0], c[1]) not in seen)
        for s in want:
            still = [f for f in want[s].required if (s, f) not in self.labels]
            if still:
                self.problems[s] = (
                    f"step {s} {res.problems[s]}" if s in res.problems else res.error or f"lacks {', '.join(still)}"
                )
            else:
                self.problems.pop(s, None)
        # done when no step of the unit owes a label (a bad optional field costs no repair)
        ok = not any(s in self.problems for s in want)
        self.result = res
        labels = {f"{s}:{f}": v for (s, f), v in res.labels.items()}
        return Parsed(ok, res, None if ok else res.error, labels)

    # -- driving ------------------------------------------------------------------

    @property
    def trace_id(self) -> str:
        return str(self.trace["trace_id"])

    @property
    def done(self) -> bool:
        return self._current is None

    @property
    def windows(self) -> int:
        """How many windows of steps the trace was asked for in (0: the whole trace at once)."""
        return len(set(self._window_of.values()))

    @property
    def over_context(self) -> bool:
        return bool(self.over)

    def next_request(self) -> tuple[str, dict]:
        """The cache key and body of the next request to send (or look up in the cache); only while not done."""
        if self._current is None:
            raise RuntimeError(f"trace {self.trace_id}: the job is done; it has no request to send")
        body = self._current.loop.request()
        return cache_key(self.config, self.template, body), body

    def rebuild(self) -> None:
        """Make the pending request again (the response format changed)."""
        if self._current is not None:
            self._current.loop.rebuild()

    def feed(self, completion: Completion, *, key: str, cost_usd: float, from_cache: bool) -> ParseResult:
        """Take the completion of the current request; move to done, the next repair or the next unit."""
        if self._current is None:
            raise RuntimeError(f"trace {self.trace_id}: the job is done; it takes no completion")
        self.calls.append(
            CallRecord(
                key,
                completion.prompt_tokens,
                completion.completion_tokens,
                cost_usd,
                completion.latency_s,
                completion.created,
                from_cache,
                served_model(completion.raw),
            )
        )
        self.formats_used.append(self._mode())
        asked = self._current
        asked.keys.append(key)
        before = asked.loop.repairs
        parsed = asked.loop.feed(completion)
        if not parsed.ok:
            self.errors.append(parsed.error or "")
        self.repairs += asked.loop.repairs - before
        if asked.loop.done:
            self._advance()
        result = parsed.value
        assert isinstance(result, ParseResult)  # the unit's parse gives one
        return result

    def fail(self, reason: str) -> None:
        """End the job: the current request failed for good (nothing was paid for it)."""
        self.failure = reason
        self._current = None
        self._queue.clear()

    def stop(self, reason: str) -> None:
        """End the job unfinished: the run stopped before its next request was sent (the endpoint cannot
        be reached, the budget would be exceeded). Its labels so far are kept; what it still owes is
        recorded as unscored, ``not_sent`` with ``reason``, and a re-run asks for it again."""
        self.fail(reason)
        self.unsent = True

    def refused_context(self, server_context: int | None) -> bool:
        """The server refused the current request as longer than its context: plan it again in smaller
        windows (``server_context``: the window the server named, if it did). False when it cannot be split."""
        if self._current is None or self.refusals >= MAX_CONTEXT_REFUSALS:
            return False
        self.refusals += 1
        smaller = self.context // 2
        if server_context is not None and server_context < self.context:
            smaller = server_context
        self.context = max(512, smaller)
        pending = [self._current.unit, *self._queue]  # all planned for the larger window: plan them again
        if self.granularity == "step":
            units = pending  # one step each already: the same asks, cut to the new context
        else:
            wanted: set[int] = set()
            for u in pending:
                wanted |= set(u.label) if u.label is not None else set(self.specs)
            steps = [s for s in self.trace["steps"] if int(s["index"]) <= max(wanted)]
            units = [
                Unit([s for s in u.label if s in wanted], u.shown, u.clip, u.window)
                for u in self._windows(self.context, steps)
                if u.label and set(u.label) & wanted
            ]
        self._queue = list(units)
        self._advance()
        return True

    @property
    def status(self) -> str:
        """``labeled``, ``unscored`` (some labels still invalid after the repairs), ``failed`` or ``pending``."""
        if self._current is not None:
            return "pending"
        if self.failure is not None:
            return "failed"
        owed = any((s, f) not in self.labels for s in self._owed() for f in self.specs[s].required)
        return "unscored" if owed else "labeled"

    def records(self, *, rater: str, served: dict | None = None) -> list[dict]:
        """The annotation records of this trace: rule labels, then judge labels or explicit unscored ones.

        ``served``: what the server reported about its model (``model_file``, ``server_models``), for provenance.
        """
        return job_records(self, rater=rater, served=served)
