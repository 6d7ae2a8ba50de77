"""The run summary of ``annotate``: what was labeled, what was not and why, and what it cost."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

_KIND = re.compile(r"[a-z_]{1,40}|HTTP \d{3}|connection error")


@dataclass
class AnnotateSummary:
    """Counts, tokens and cost of one annotation run.

    Traces: ``n_traces`` asked for = ``already_done`` (in the output before
    the run) + ``labeled`` + ``unscored`` (answer still invalid after the
    repairs) + ``failed`` (request failed for good; retried by a re-run) +
    ``not_started`` (stopped by the budget or a fatal error). ``from_cache``
    counts the finished traces that needed no request. Money and tokens are
    of the requests paid *in this run*; ``cost_usd`` is their reported usage
    times the judge's prices.
    """

    judge: str
    output: str
    mode: str = "online"
    #: Traces worked on at once (the server's slots for a local judge, unless given).
    concurrency: int | None = None
    n_traces: int = 0
    already_done: int = 0
    labeled: int = 0
    unscored: int = 0
    failed: int = 0
    not_started: int = 0
    from_cache: int = 0
    rule_labels: int = 0
    judge_labels: int = 0
    unscored_labels: int = 0
    abstentions: int = 0
    rule_conflicts: int = 0
    truncated: int = 0
    #: Traces judged in windows of steps (longer than the judge's context or answer budget).
    windowed: int = 0
    #: Unscored traces that still kept some judge labels (partial acceptance).
    partial: int = 0
    #: Judge labels that came from a repair (the first answer lacked them or had them invalid).
    repaired_labels: int = 0
    #: Requests the server refused as longer than its context, judged again in smaller windows.
    context_refusals: int = 0
    requests: int = 0
    repairs: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    budget_usd: float | None = None
    stopped_by_budget: bool = False
    stopped_unreachable: bool = False
    #: Why the run stopped sending (the unreachable endpoint's or the circuit breaker's error), in full.
    stop_reason: str | None = None
    first_error: str | None = None
    elapsed_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every trace asked for has its labels (or explicit unscored records) in the output."""
        return self.not_started == 0 and self.failed == 0

    def note_failure(self, reason: str) -> None:
        """Keep the first request failure of the run, uncut (status, message, endpoint)."""
        if self.first_error is None:
            self.first_error = reason

    def count_error(self, reason: str) -> None:
        """Count an error under its kind (``invalid_output``, ``HTTP 500``); a reason with no short kind
        in front (``gave up after 8 attempts; last error: ...``) is counted whole, never cut."""
        head = reason.split(":", 1)[0]
        key = head if _KIND.fullmatch(head) else reason
        self.errors[key] = self.errors.get(key, 0) + 1

    def to_dict(self) -> dict:
        out = asdict(self)
        out["complete"] = self.complete
        return out

    def format(self) -> str:
        """A few human-readable lines for the end of a CLI run."""
        rate = self.cost_usd / self.requests if self.requests else math.nan
        lines = [
            f"judge {self.judge} ({self.mode}) -> {self.output}",
            f"traces: {self.n_traces} | already done {self.already_done} | labeled {self.labeled} | "
            f"unscored {self.unscored} | failed {self.failed} | not started {self.not_started} | "
            f"from cache {self.from_cache}",
            f"labels: judge {self.judge_labels} | rule {self.rule_labels} | unscored {self.unscored_labels} "
            f"(abstained {self.abstentions}) | rule conflicts ignored {self.rule_conflicts} | "
            f"truncated prompts {self.truncated} | windowed traces {self.windowed} | "
            f"labels from repairs {self.repaired_labels} | partly labeled traces {self.partial}",
            f"requests paid: {self.requests} (repairs {self.repairs}, retries {self.retries}) | tokens "
            f"{self.prompt_tokens} in / {self.completion_tokens} out | cost ${self.cost_usd:.4f}"
            + (f" (${rate:.5f}/request)" if self.requests else "")
            + (f" | budget ${self.budget_usd:.4f}" if self.budget_usd is not None else "")
            + f" | {self.elapsed_s:.1f} s",
        ]
        if self.errors:
            lines.append("errors: " + ", ".join(f"{n} x {k}" for k, n in sorted(self.errors.items())))
        if self.stopped_by_budget:
            lines.append(
                "stopped before the budget would be exceeded; re-run with a larger --budget-usd to "
                "continue (finished work is kept)"
            )
        if self.stopped_unreachable:
            lines.append(
                f"stopped: the endpoint cannot be reached or keeps failing; {self.not_started} traces not started "
                "(re-run the same command once it answers)"
            )
            if self.stop_reason and self.stop_reason != self.first_error:
                lines.append(f"stopped because: {self.stop_reason}")
        if self.failed:
            lines.append(f"{self.failed} traces failed (recorded as unscored, nothing paid); re-run to retry them")
        if self.first_error:
            lines.append(f"first error: {self.first_error}")
        return "\n".join(lines)
