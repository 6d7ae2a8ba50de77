"""Reference-step coverage (PrimeSeeker): which reference evidence statements a trajectory established.

A **skeleton** gives, per question, reference evidence statements D_q, each
``intermediate`` (an anchor or relation on the way) or ``answer`` (supports
the final answer). A statement is *covered* when the trajectory's public
history (its search queries and observations; never its own reasoning or
answer, which are claims, not evidence) establishes it. Asking is not
finding: the rule matcher looks in observations only by default
(``history="queries_and_observations"`` also searches the queries), and the
LLM judge sees the queries but is told that a query alone establishes nothing.

For trace i with skeleton D = I u A and correctness y_i:

- credited_i = |covered I| + y_i * |covered A| (answer-supporting statements count only on
  correct trajectories);
- coverage_i = credited_i / |D|, in [0, 1]; undefined (NaN) when y_i is unknown and some
  answer-supporting statement is covered;
- intermediate coverage_i = |covered I| / |I| (defined whenever I is not empty);
- process score_i = min(C, w * credited_i), the capped process credit (C = ``cap``, 0.5 by
  default; w = ``step_credit``, 1/|D| by default, so the uncapped value is the coverage);
- reward_i = y_i + process score_i, the outcome plus the bounded process credit.

PrimeSeeker (arXiv 2609.35816, section 3.3) bounds the process contribution by a constant C
but its per-statement weights and C are not given in the summary this follows: both are
options here. Correctness is the trace's ``correct`` value, else exact match (as the tables).

Matchers: :class:`RuleMatcher` (offline, default): a statement is covered when one of its
``evidence`` alternatives (default: the statement itself) occurs in one observation segment,
exactly or after SQuAD normalisation on word boundaries; an alternative given as a list needs
every element. :class:`~seekbench.metrics.LLMCoverageMatcher` asks an LLM judge instead.

Skeleton file (JSONL, one question per line)::

    {"question_id": "q01", "steps": [
        {"id": "s1", "role": "intermediate", "statement": "Idris Pellam was born in Orlesk",
         "evidence": ["born in Orlesk"]},
        {"id": "s2", "role": "answer", "statement": "The River Sallow flows past Orlesk",
         "evidence": [["River Sallow", "Orlesk"]]}]}

A line may name ``question`` (text) instead of ``question_id``; traces are matched by
``question_id`` first, then by normalised question text.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast, get_args

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from .._io import iter_jsonl
from ..traces import exact_match_score, normalize_answer

History = Literal["queries_and_observations", "observations"]
Role = Literal["intermediate", "answer"]
ROLES: tuple[str, ...] = get_args(Role)


@dataclass(frozen=True)
class SkeletonStep:
    """One reference evidence statement."""

    id: str
    statement: str
    role: Role
    evidence: tuple = ()


def _step(obj: object, *, file: str, line: int, pos: int) -> SkeletonStep:
    where = f"$.steps[{pos}]"
    if not isinstance(obj, Mapping) or not isinstance(obj.get("statement"), str) or not obj["statement"].strip():
        raise UserInputError("each skeleton step needs a non-empty 'statement'", file=file, line=line, path=where)
    role = obj.get("role", "intermediate")
    role = {"answer_supporting": "answer", "answer-supporting": "answer", "final": "answer"}.get(role, role)
    if role not in ROLES:
        raise UserInputError(
            f"role is {role!r}; use intermediate or answer", file=file, line=line, path=f"{where}.role"
        )
    alts: list[str | tuple[str, ...]] = []
    for a in obj.get("evidence") or ():
        if isinstance(a, str) and a.strip():
            alts.append(a)
        elif isinstance(a, list) and a and all(isinstance(x, str) and x.strip() for x in a):
            alts.append(tuple(a))
        else:
            raise UserInputError(
                "evidence alternatives are strings or non-empty lists of strings",
                file=file,
                line=line,
                path=f"{where}.evidence",
            )
    # role is one of ROLES: checked just above.
    return SkeletonStep(str(obj.get("id", f"s{pos + 1}")), obj["statement"], cast(Role, role), tuple(alts))


def load_skeleton(source: str | os.PathLike | Iterable[Mapping]) -> dict[str, list[SkeletonStep]]:
    """Read a skeleton (JSONL file or records) as ``{key: steps}``; key = question_id, else ``text:<normalised>``."""
    records = iter_jsonl(source) if isinstance(source, (str, os.PathLike)) else enumerate(source, start=1)
    file = str(source) if isinstance(source, (str, os.PathLike)) else "<records>"
    out: dict[str, list[SkeletonStep]] = {}
    for line, rec in records:
        if isinstance(rec, UserInputError):
            raise rec
        if not isinstance(rec, Mapping):
            raise UserInputError("a skeleton line must be a JSON object", file=file, line=line)
        key = _key(rec.get("question_id"), rec.get("question"))
        if key is None:
            raise UserInputError("a skeleton line needs 'question_id' or 'question'", file=file, line=line)
        steps = rec.get("steps")
        if not isinstance(steps, list) or not steps:
            raise UserInputError("a skeleton line needs a non-empty 'steps' list", file=file, line=line, path="$.steps")
        if key in out:
            raise UserInputError(f"question {key!r} appears twice in the skeleton", file=file, line=line)
        out[key] = [_step(s, file=file, line=line, pos=i) for i, s in enumerate(steps)]
    return out


def _key(question_id: object, question: object) -> str | None:
    if question_id not in (None, ""):
        return str(question_id)
    if isinstance(question, str) and question.strip():
        return "text:" + normalize_answer(question)
    return None


def public_history(trace: Mapping, *, history: History = "queries_and_observations") -> list[str]:
    """The trajectory's public history as text segments: queries/URLs of search steps (unless
    ``history="observations"``) and the text and documents of search results.

    What a coverage matcher may search: never the agent's own reasoning or answer.

    Examples
    --------
    >>> trace = {"steps": [{"kind": "search", "query": "river Orlesk"},
    ...                    {"kind": "search_result", "documents": [{"title": "Orlesk", "text": "On the Sallow."}]},
    ...                    {"kind": "answer", "text": "Sallow"}]}
    >>> public_history(trace)
    ['river Orlesk', 'Orlesk On the Sallow.']
    >>> public_history(trace, history="observations")
    ['Orlesk On the Sallow.']
    """
    out = []
    for st in trace.get("steps") or ():
        kind = st.get("kind")
        if kind == "search" and history == "queries_and_observations":
            out += [x for x in (st.get("query"), st.get("url")) if x]
        elif kind == "search_result":
            if st.get("text"):
                out.append(st["text"])
            for d in st.get("documents") or ():
                out.append(" ".join(x for x in (d.get("title"), d.get("text")) if x))
    return out


def _occurs(phrase: str, segments: Sequence[str], normalised: Sequence[str]) -> bool:
    if any(phrase in s for s in segments):
        return True
    p = normalize_answer(phrase)
    return bool(p) and any(f" {p} " in f" {s} " for s in normalised)


class RuleMatcher:
    """Offline matcher: exact or normalised substring of an evidence alternative in one history segment.

    >>> m = RuleMatcher()
    >>> tr = {"steps": [{"kind": "search_result", "documents": [{"text": "He was born in Orlesk."}]}]}
    >>> m.match_trace(tr, [SkeletonStep("s1", "Born in Orlesk", "intermediate", ("born in orlesk",))])
    {'s1': True}
    """

    name = "rules"

    def __init__(self, *, history: History = "observations") -> None:
        if history not in ("queries_and_observations", "observations"):
            raise UserInputError(f"history is {history!r}; use queries_and_observations or observations")
        self.history = history

    def match_trace(self, trace: Mapping, steps: Sequence[SkeletonStep]) -> dict[str, bool | None]:
        seg = public_history(trace, history=self.history)
        norm = [normalize_answer(s) for s in seg]
        out: dict[str, bool | None] = {}
        for st in steps:
            alts = st.evidence or (st.statement,)
            out[st.id] = any(
                _occurs(a, seg, norm) if isinstance(a, str) else all(_occurs(x, seg, norm) for x in a) for a in alts
            )
        return out

    def match(self, pairs: Sequence[tuple[Mapping, Sequence[SkeletonStep]]]) -> dict[str, dict[str, bool | None]]:
        return {str(t["trace_id"]): self.match_trace(t, s) for t, s in pairs}


def _correctness(trace: Mapping) -> bool | None:
    value = (trace.get("correct") or {}).get("value")
    if value is None and trace.get("final_answer") is not None and trace.get("gold_answers"):
        value = bool(exact_match_score(trace["final_answer"], trace["gold_answers"]))
    return value


@dataclass
class ReferenceStepCoverageResult:
    """Reference-step coverage of a set of traces.

    Attributes
    ----------
    per_trace : DataFrame
        ``trace_id, agent, question_id, correct, n_statements, n_intermediate, n_answer,
        covered_intermediate, covered_answer, unscored_statements, credited, coverage,
        intermediate_coverage, process_score, reward``.
    no_skeleton : int
        Traces whose question has no skeleton (left out).
    options : dict
    """

    per_trace: pd.DataFrame
    no_skeleton: int
    options: dict

    def summary(self, by: Sequence[str] = ("agent",)) -> pd.DataFrame:
        """Per group: traces, mean coverage (over traces where defined) with its n, mean intermediate
        coverage, mean process score and reward, and the undefined counts."""
        pt = self.per_trace
        rows = []
        groups = pt.groupby(list(by), sort=True, dropna=False) if by else [((), pt)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "traces": len(g),
                    "coverage": _mean(g["coverage"]),
                    "n_coverage": int(g["coverage"].notna().sum()),
                    "intermediate_coverage": _mean(g["intermediate_coverage"]),
                    "process_score": _mean(g["process_score"]),
                    "reward": _mean(g["reward"]),
                    "undefined_coverage": int(g["coverage"].isna().sum()),
                    "unscored_statements": int(g["unscored_statements"].sum()),
                }
            )
        return pd.DataFrame(rows)


def _mean(s: pd.Series) -> float:
    return float(s.mean()) if s.notna().any() else math.nan


def reference_step_coverage(
    traces: Iterable[Mapping],
    skeleton,
    *,
    matcher=None,
    history: History = "observations",
    cap: float = 0.5,
    step_credit: float | None = None,
) -> ReferenceStepCoverageResult:
    """Reference-step coverage, intermediate coverage and the capped process score per trace.

    Parameters
    ----------
    traces : iterable of dict
        Canonical traces.
    skeleton : path, records or dict
        A skeleton file, its records, or :func:`load_skeleton` output.
    matcher : RuleMatcher or LLMCoverageMatcher, optional
        Default ``RuleMatcher(history=history)`` (offline).
    cap : float, default 0.5
        C, the bound on the process score.
    step_credit : float, optional
        w, the credit per credited statement (default 1/|D_q|).

    Returns
    -------
    CoverageResult
        NaN where undefined (see the module docstring).

    Examples
    --------
    One intermediate statement found, the answer statement found, answer correct: 2/2 = 1.0;
    process score min(0.5, 1.0) = 0.5; reward 1 + 0.5.

    >>> tr = {"trace_id": "t", "agent": "a", "question_id": "q", "correct": {"value": True, "source": "human"},
    ...       "steps": [{"kind": "search", "query": "Orlesk river"},
    ...                 {"kind": "search_result", "text": "Orlesk lies on the River Sallow."}]}
    >>> sk = {"q": [SkeletonStep("s1", "Orlesk", "intermediate"), SkeletonStep("s2", "River Sallow", "answer")]}
    >>> r = reference_step_coverage([tr], sk).per_trace
    >>> r[["coverage", "process_score", "reward"]].to_dict("records")
    [{'coverage': 1.0, 'process_score': 0.5, 'reward': 1.5}]
    """
    if not (isinstance(cap, (int, float)) and cap >= 0):
        raise UserInputError(f"cap must be a number >= 0, got {cap!r}")
    if step_credit is not None and not (isinstance(step_credit, (int, float)) and step_credit >= 0):
        raise UserInputError(f"step_credit must be a number >= 0, got {step_credit!r}")
    sk = skeleton if isinstance(skeleton, dict) else load_skeleton(skeleton)
    matcher = matcher or RuleMatcher(history=history)
    pairs, missing = [], 0
    for t in traces:
        steps = sk.get(str(t.get("question_id"))) if t.get("question_id") is not None else None
        steps = steps or sk.get(_key(None, t.get("question")) or "")
        if steps:
            pairs.append((t, steps))
        else:
            missing += 1
    matched = matcher.match(pairs)
    rows = []
    for t, steps in pairs:
        m = matched.get(str(t["trace_id"]), {})
        y = _correctness(t)
        inter = [s for s in steps if s.role == "intermediate"]
        ans = [s for s in steps if s.role == "answer"]
        ci = sum(m.get(s.id) is True for s in inter)
        ca = sum(m.get(s.id) is True for s in ans)
        unscored = sum(m.get(s.id) is None for s in steps)
        # A statement the judge could not decide is unknown, not uncovered: any such statement leaves
        # the trace's coverage undefined (counted in ``unscored_statements``), never a lower number.
        defined = (y is not None or ca == 0) and unscored == 0
        credited = ci + (ca if y else 0) if defined else math.nan
        n = len(steps)
        w = (1 / n) if step_credit is None else step_credit
        process = min(cap, w * credited) if defined else math.nan
        rows.append(
            {
                "trace_id": t["trace_id"],
                "agent": t.get("agent"),
                "question_id": t.get("question_id"),
                "correct": y,
                "n_statements": n,
                "n_intermediate": len(inter),
                "n_answer": len(ans),
                "covered_intermediate": ci,
                "covered_answer": ca,
                "unscored_statements": unscored,
                "credited": credited,
                "coverage": credited / n if defined else math.nan,
                "intermediate_coverage": (
                    ci / len(inter) if inter and not any(m.get(s.id) is None for s in inter) else math.nan
                ),
                "process_score": process,
                "reward": (float(y) + process) if y is not None and defined else math.nan,
            }
        )
    cols = [
        "trace_id",
        "agent",
        "question_id",
        "correct",
        "n_statements",
        "n_intermediate",
        "n_answer",
        "covered_intermediate",
        "covered_answer",
        "unscored_statements",
        "credited",
        "coverage",
        "intermediate_coverage",
        "process_score",
        "reward",
    ]
    df = pd.DataFrame(rows, columns=cols)
    for c in ("credited", "coverage", "intermediate_coverage", "process_score", "reward"):
        df[c] = df[c].astype(float)
    df["correct"] = df["correct"].astype(object).where(df["correct"].notna(), None)
    return ReferenceStepCoverageResult(
        df,
        missing,
        {
            "matcher": getattr(matcher, "name", type(matcher).__name__),
            "history": getattr(matcher, "history", history),
            "cap": cap,
            "step_credit": "1/|D_q|" if step_credit is None else step_credit,
        },
    )


def reference_step_coverage_score(traces: Iterable[Mapping], skeleton, **options) -> float:
    """Mean reference-step coverage over the traces where it is defined (NaN if none); higher is better."""
    cov = reference_step_coverage(traces, skeleton, **options).per_trace["coverage"]
    if cov.notna().any():
        return float(np.nanmean(cov))
    warnings.warn(
        "reference-step coverage is undefined (no trace with a skeleton and a known outcome); returning NaN",
        UndefinedMetricWarning,
        stacklevel=2,
    )
    return math.nan
