"""What :func:`~seekbench.answers.judge_answers` did: counts, the decisions table, and the run summary text."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass
class AnswerJudgeResult:
    """What :func:`judge_answers` did.

    Attributes
    ----------
    traces : list of dict
        Copies of the input traces with the decisions written in.
    decisions : DataFrame
        One row per judged answer: ``trace_id, slot, value, pending, disagreement, tiebreak_asked,
        written`` and one ``vote_<judge>`` column per judge (True / False / None).
    counts : dict
        ``decided``, ``unscored``, ``pending``, ``kept`` (existing decisions not replaced), ``written``.
    disagreement_rate : float
        See the module docstring; NaN when fewer than two primaries or nothing to compare.
    """

    traces: list[dict]
    decisions: pd.DataFrame
    counts: dict
    judges: list[str]
    tiebreaker: str | None
    n_compared: int
    n_disagree: int
    n_tiebreak: int
    requests: int
    from_cache: int
    paid_usd: float
    retries: int
    stopped_by_budget: bool
    elapsed_s: float
    first_error: str | None = None

    @property
    def disagreement_rate(self) -> float:
        return self.n_disagree / self.n_compared if self.n_compared else float("nan")

    def to_dict(self) -> dict:
        return {
            "judges": self.judges,
            "tiebreaker": self.tiebreaker,
            **self.counts,
            "n_compared": self.n_compared,
            "n_disagree": self.n_disagree,
            "disagreement_rate": self.disagreement_rate,
            "n_tiebreak": self.n_tiebreak,
            "requests": self.requests,
            "from_cache": self.from_cache,
            "paid_usd": round(self.paid_usd, 6),
            "retries": self.retries,
            "stopped_by_budget": self.stopped_by_budget,
            "elapsed_s": self.elapsed_s,
            "first_error": self.first_error,
        }

    def format(self) -> str:
        c = self.counts
        dr = "n/a" if self.n_compared == 0 else f"{self.disagreement_rate:.3f} ({self.n_disagree}/{self.n_compared})"
        lines = [
            f"{c['answers']} answers of {c['traces']} traces, judged with "
            f"{', '.join(self.judges)}" + (f" (tiebreaker {self.tiebreaker})" if self.tiebreaker else ""),
            (
                f"  decided {c['decided']} | unscored {c['unscored']} (no verdict) | skipped {c['kept']} "
                f"(already decided, kept) | pending {c['pending']} (failed or not sent; re-run to retry)"
            ),
        ]
        if c["kept"]:
            lines.append(
                f"  skipped because --overwrite {c['overwrite']} keeps their decisions "
                f"({_sources(c.get('kept_sources', {}))}); --overwrite all replaces them"
            )
        if c["pending"]:
            why = "; ".join(f"{n} x {r}" for r, n in sorted(c.get("pending_reasons", {}).items(), key=lambda x: -x[1]))
            lines.append(f"  pending because: {why}")
        lines += [
            f"  written {c['written']}; disagreement rate {dr}; tiebreaker asked {self.n_tiebreak} times",
            (
                f"  requests {self.requests} ({self.from_cache} answers from cache), paid ${self.paid_usd:.4f}, "
                f"retries {self.retries}, {self.elapsed_s:.1f} s"
            ),
        ]
        if self.stopped_by_budget:
            lines.append("  stopped by the budget: some answers were not judged")
        if self.first_error:
            lines.append(f"  first error: {self.first_error}")
        return "\n".join(lines)


def _sources(counts: dict) -> str:
    return ", ".join(f"{n} from {src}" for src, n in sorted(counts.items(), key=lambda x: -x[1])) or "none"


def pending_reason(d) -> str:
    """The category of why a decision is pending: the first failed or unsent vote's reason, cut at its
    first detail (``request_failed: HTTP 400``, ``not sent: the budget would be exceeded``)."""
    for v in d.votes:
        if v.status in ("failed", "skipped") and v.reason:
            head, _, rest = v.reason.partition(": ")
            return f"{head}: {rest.split(':')[0].split(' (')[0]}" if rest else head
    return "unknown"


def count_reasons(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out
