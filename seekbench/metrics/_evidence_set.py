"""InfoDeepSeek evidence-set metrics (spec section 6): ACC, IA@k, EEU, IC, interference rate.

Input: traces that carry an evidence set C_q ranked by importance (n_q = |C_q|)
and judgments J_q(k) of the answer produced from the top-k evidence
(``metadata.evidence_set``, :mod:`seekbench.traces._evidence_record`), as the
table of :func:`~seekbench.answers.evidence_set_table`. One row = one question
answered by one agent.

- ACC = share of questions whose final answer (made with all observations) is correct.
- IA@k = share of questions whose answer from the top-k evidence is correct, k = 1..n;
  for k > n_q the top-k evidence *is* C_q, so IA uses J_q(n_q); n_q = 0 gives no answer (False).
- EEU = max_k IA@k / ACC; undefined (NaN with ``UndefinedMetricWarning``) when ACC = 0.
- IC_q = n_q / |S_q| if some k gives a correct answer, else (n + b) / |S_q| (|S_q| = the
  reference source set; n = 5, b = 1); IC = mean_q IC_q. Lower is more compact.
- interference rate = share of the questions answered correctly *without* retrieval whose
  final answer (with retrieval) is wrong.

Pending or failed judgments (None) are left out of every denominator they would enter and
counted: a question is out of IA@k when J_q(min(k, n_q)) is pending; out of IC when no k is
known correct and some J_q(k) is pending, or when |S_q| is unknown or 0.

The released evaluator differs (tests pin each): it divides by zero when ACC = 0, fills
k > n_q with the last *scored* judgment before it, counts a pending judgment (-1) as "some k
correct" for IC and as a correct final answer in the interference rate, and reports an
interference rate of 1 when no question was answered correctly without retrieval.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ..traces import evidence_set_table


def _warn(what: str, why: str) -> None:
    warnings.warn(f"{what} is undefined ({why}); returning NaN", UndefinedMetricWarning, stacklevel=3)


def _table(data: pd.DataFrame | Iterable[dict]) -> pd.DataFrame:
    return data if isinstance(data, pd.DataFrame) else evidence_set_table(data)


def _check(n: int, b: float) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise UserInputError(f"n (the evidence-set size cap) must be an integer >= 1, got {n!r}")
    if not isinstance(b, (int, float)) or isinstance(b, bool) or b < 0 or not math.isfinite(b):
        raise UserInputError(f"b (the IC failure penalty) must be a number >= 0, got {b!r}")


def per_question(data: pd.DataFrame | Iterable[dict], *, n: int = 5, b: float = 1) -> pd.DataFrame:
    """Per-question values: ``correct``, ``ia_1..ia_n`` (True / False / None), ``some_correct``,
    ``ic`` (NaN when excluded), ``ic_status`` (``ok``, ``pending``, ``no_sources``), ``interference``
    (True / False, None outside the base or pending).

    Examples
    --------
    >>> t = pd.DataFrame({"trace_id": ["a"], "correct": [True], "n_evidence": [2], "n_sources": [4],
    ...                   "judgments": [{1: False, 2: True}], "no_retrieval_correct": [None]})
    >>> per_question(t, n=3)[["ia_1", "ia_2", "ia_3", "ic"]].to_dict("records")  # IC = 2/4
    [{'ia_1': False, 'ia_2': True, 'ia_3': True, 'ic': 0.5}]
    """
    _check(n, b)
    t = _table(data)
    rows = []
    for r in t.itertuples(index=False):
        nq, j = int(r.n_evidence), {int(k): v for k, v in (r.judgments or {}).items()}
        ia = {k: (False if nq == 0 else j.get(min(k, nq))) for k in range(1, n + 1)}
        prefix = [j.get(k) for k in range(1, nq + 1)]
        some = True if any(v is True for v in prefix) else (None if any(v is None for v in prefix) else False)
        ns = r.n_sources
        if ns is None or (isinstance(ns, float) and math.isnan(ns)) or ns <= 0:
            ic, status = math.nan, "no_sources"
        elif some is None:
            ic, status = math.nan, "pending"
        else:
            ic, status = (nq if some else n + b) / ns, "ok"
        nr = getattr(r, "no_retrieval_correct", None)
        acc = r.correct if isinstance(r.correct, bool) else None
        interference = None if nr is not True or acc is None else (not acc)
        rows.append(
            {
                "trace_id": r.trace_id,
                "correct": acc,
                **{f"ia_{k}": v for k, v in ia.items()},
                "some_correct": some,
                "ic": ic,
                "ic_status": status,
                "interference": interference,
                "interference_base": nr is True,
            }
        )
    cols = [
        "trace_id",
        "correct",
        *(f"ia_{k}" for k in range(1, n + 1)),
        "some_correct",
        "ic",
        "ic_status",
        "interference",
        "interference_base",
    ]
    out = pd.DataFrame(rows, columns=cols)
    for c in ["correct", "some_correct", "interference", *(f"ia_{k}" for k in range(1, n + 1))]:
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out


def _share(values: pd.Series) -> tuple[float, int, int]:
    """(share True among scored, n scored, n pending)."""
    known = [v for v in values if v is not None]
    return (float(np.mean(known)) if known else math.nan), len(known), len(values) - len(known)


@dataclass
class EvidenceSetResult:
    """ACC, IA@k, EEU, IC and interference rate of one group of questions (spec section 6).

    Attributes
    ----------
    accuracy : float
        ACC in [0, 1], higher is better.
    ia : Series
        IA@k indexed by k = 1..n, in [0, 1], higher is better.
    eeu : float
        max_k IA@k / ACC, >= 0; NaN when ACC = 0 or undefined.
    eeu_k : int or None
        The k attaining the maximum (smallest such k).
    ic : float
        Mean IC_q, > 0, lower is better (more compact).
    interference_rate : float
        In [0, 1], lower is better; NaN when no question was answered correctly without retrieval.
    counts : dict
        ``n_questions``, ``n_acc`` / ``pending_acc``, ``n_ia`` / ``pending_ia`` (per k), ``n_ic`` /
        ``pending_ic`` / ``no_sources_ic``, ``n_interference`` / ``pending_interference``, ``empty_evidence``.
    per_question : DataFrame
        See :func:`per_question`.
    """

    accuracy: float
    ia: pd.Series
    eeu: float
    eeu_k: int | None
    ic: float
    interference_rate: float
    counts: dict
    per_question: pd.DataFrame
    options: dict

    @property
    def summary(self) -> pd.DataFrame:
        """One row per metric: ``estimate``, ``n`` (questions in the denominator), ``pending``."""
        c = self.counts
        rows = {"ACC": (self.accuracy, c["n_acc"], c["pending_acc"])}
        for k, v in self.ia.items():
            rows[f"IA@{k}"] = (v, c["n_ia"][k], c["pending_ia"][k])
        rows["EEU"] = (self.eeu, c["n_acc"], c["pending_acc"])
        rows["IC"] = (self.ic, c["n_ic"], c["pending_ic"])
        rows["interference_rate"] = (self.interference_rate, c["n_interference"], c["pending_interference"])
        return pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "n", "pending"])

    def to_dict(self) -> dict:
        return {
            "acc": self.accuracy,
            **{f"ia@{k}": v for k, v in self.ia.items()},
            "eeu": self.eeu,
            "eeu_k": self.eeu_k,
            "ic": self.ic,
            "interference_rate": self.interference_rate,
            **{k: (dict(v) if isinstance(v, dict) else v) for k, v in self.counts.items()},
            "options": self.options,
        }


def evidence_set_metrics(data: pd.DataFrame | Iterable[dict], *, n: int = 5, b: float = 1) -> EvidenceSetResult:
    """All InfoDeepSeek evidence-set metrics of one group of questions (spec section 6).

    Parameters
    ----------
    data : DataFrame or iterable of dict
        :func:`~seekbench.answers.evidence_set_table` output, or canonical traces.
    n : int, default 5
        The evidence-set size cap: IA@k is reported for k = 1..n, and n enters IC's penalty.
    b : float, default 1
        IC's failure penalty beyond n.

    Returns
    -------
    EvidenceSetResult

    Examples
    --------
    Two questions; q1 has C of 2 pages, |S| = 2, final answer right, J = (False, True);
    q2 has C of 1 page, |S| = 3, final answer wrong, J = (False,).

    >>> t = pd.DataFrame({"trace_id": ["q1", "q2"], "correct": [True, False], "n_evidence": [2, 1],
    ...                   "n_sources": [2, 3], "judgments": [{1: False, 2: True}, {1: False}],
    ...                   "no_retrieval_correct": [None, None]})
    >>> r = evidence_set_metrics(t, n=3)
    >>> r.accuracy, list(r.ia), r.eeu       # ACC 1/2; IA@1 0, IA@2 = IA@3 = 1/2; EEU = 0.5 / 0.5
    (0.5, [0.0, 0.5, 0.5], 1.0)
    >>> r.ic                                # (2/2 + (3 + 1)/3) / 2
    1.1666666666666665
    """
    _check(n, b)
    t = _table(data)
    pq = per_question(t, n=n, b=b)
    acc, n_acc, p_acc = _share(pq["correct"])
    ia, n_ia, p_ia = {}, {}, {}
    for k in range(1, n + 1):
        ia[k], n_ia[k], p_ia[k] = _share(pq[f"ia_{k}"])
    ia_s = pd.Series(ia, name="IA@k", dtype=float)
    ia_s.index.name = "k"
    if n_acc == 0:
        _warn("ACC", "no question has a judged final answer")
    if ia_s.isna().all():
        eeu, eeu_k = math.nan, None
        if len(pq):
            _warn("EEU", "no IA@k is defined")
    else:
        eeu_k = int(ia_s.idxmax())
        if n_acc == 0:
            eeu = math.nan
        elif acc == 0:
            eeu = math.nan
            _warn("EEU", "ACC = 0")
        else:
            eeu = float(ia_s.max()) / acc
    ok = pq[pq["ic_status"] == "ok"]
    ic = float(ok["ic"].mean()) if len(ok) else math.nan
    if not len(ok) and len(pq):
        _warn("IC", "no question has both a known outcome and a reference source set")
    base = pq[pq["interference_base"].astype(bool)]
    inter, n_int, p_int = _share(base["interference"])
    if n_int == 0 and len(pq):
        _warn("interference rate", "no question was answered correctly without retrieval")
    counts = {
        "n_questions": len(pq),
        "n_acc": n_acc,
        "pending_acc": p_acc,
        "n_ia": n_ia,
        "pending_ia": p_ia,
        "n_ic": len(ok),
        "pending_ic": int((pq["ic_status"] == "pending").sum()),
        "no_sources_ic": int((pq["ic_status"] == "no_sources").sum()),
        "n_interference": n_int,
        "pending_interference": p_int,
        "empty_evidence": int((t["n_evidence"] == 0).sum()) if len(t) else 0,
        "longer_than_n": int((t["n_evidence"] > n).sum()) if len(t) else 0,
    }
    return EvidenceSetResult(acc, ia_s, eeu, eeu_k, ic, inter, counts, pq, {"n": n, "b": b})


def information_accuracy(data, *, k: int, n: int | None = None) -> float:
    """IA@k: share of questions whose answer from the top-k evidence is correct (k > n_q reuses C_q).

    >>> t = pd.DataFrame({"trace_id": ["a", "b"], "correct": [True, True], "n_evidence": [1, 3],
    ...                   "n_sources": [1, 1], "judgments": [{1: True}, {1: False, 2: None, 3: True}],
    ...                   "no_retrieval_correct": [None, None]})
    >>> information_accuracy(t, k=2)  # a reuses J(1) = True; b's J(2) is pending: 1 / 1
    1.0
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise UserInputError(f"k must be an integer >= 1, got {k!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        value = float(evidence_set_metrics(data, n=max(k, n or k)).ia[k])
    if math.isnan(value):
        _warn(f"IA@{k}", "no question has a judged answer from its top-k evidence")
    return value


def effective_evidence_utilization(data, *, n: int = 5) -> float:
    """EEU = max_{1<=k<=n} IA@k / ACC; NaN with an ``UndefinedMetricWarning`` when ACC = 0.

    Above 1: the curated top-k evidence answers better than all observations did.

    >>> t = pd.DataFrame({"trace_id": ["a"], "correct": [False], "n_evidence": [1], "n_sources": [1],
    ...                   "judgments": [{1: True}], "no_retrieval_correct": [None]})
    >>> import warnings; warnings.simplefilter("ignore")
    >>> effective_evidence_utilization(t)
    nan
    """
    return evidence_set_metrics(data, n=n).eeu


def information_compactness(data, *, n: int = 5, b: float = 1) -> float:
    """IC = mean_q IC_q (see the module docstring); lower is more compact."""
    return evidence_set_metrics(data, n=n, b=b).ic


def interference_rate(data) -> float:
    """Share of no-retrieval-correct questions answered wrongly with retrieval; NaN when there are none."""
    return evidence_set_metrics(data, n=1).interference_rate


def attribute_groups(table: pd.DataFrame, attribute: str) -> dict[str, pd.Index]:
    """Row index of each value of a question attribute: booleans and scalars by value, lists by each element.

    A question with a list attribute counts in every element's group; a question without the
    attribute is in no group.

    >>> t = pd.DataFrame({"attributes": [{"d": ["a", "b"]}, {"d": ["b"]}, {}]})
    >>> {k: list(v) for k, v in attribute_groups(t, "d").items()}
    {'a': [0], 'b': [0, 1]}
    """
    groups: dict[str, list] = {}
    for idx, attrs in zip(table.index, table["attributes"], strict=True):
        if not isinstance(attrs, dict) or attrs.get(attribute) is None:
            continue
        v = attrs[attribute]
        for value in v if isinstance(v, (list, tuple)) else [v]:
            groups.setdefault(str(value), []).append(idx)
    return {k: pd.Index(groups[k]) for k in sorted(groups)}


def evidence_set_summary(
    data: pd.DataFrame | Iterable[dict],
    *,
    by: Sequence[str] = ("agent",),
    attribute: str | None = None,
    n: int = 5,
    b: float = 1,
) -> pd.DataFrame:
    """One row per group (and attribute value): the metrics with their n and pending counts.

    Columns: the ``by`` keys, ``attribute`` and ``value`` (with ``attribute``), ``questions``, ``ACC``,
    ``IA@1..IA@n``, ``EEU``, ``EEU_k``, ``IC``, ``interference_rate``, ``n_acc``, ``pending_acc``,
    ``pending_ia`` (max over k), ``n_ic``, ``pending_ic``, ``no_sources_ic``, ``n_interference``,
    ``pending_interference``.
    """
    t = _table(data)
    by = list(by)
    for col in by:
        if col not in t.columns:
            raise UserInputError(f"cannot group by {col!r}; choose from {', '.join(t.columns)}")
    parts = (
        [((), t)]
        if not by
        else [((k,) if not isinstance(k, tuple) else k, g) for k, g in t.groupby(by, sort=True, dropna=False)]
    )
    rows = []
    for key, g in parts:
        subsets: list[tuple[object, pd.DataFrame]] = [(None, g)]
        if attribute is not None:
            subsets = [(v, g.loc[ix]) for v, ix in attribute_groups(g, attribute).items()]
        for value, sub in subsets:
            r = evidence_set_metrics(sub, n=n, b=b)
            c = r.counts
            row = dict(zip(by, key, strict=True))
            if attribute is not None:
                row.update(attribute=attribute, value=value)
            row.update(
                {
                    "questions": c["n_questions"],
                    "ACC": r.accuracy,
                    **{f"IA@{k}": v for k, v in r.ia.items()},
                    "EEU": r.eeu,
                    "EEU_k": r.eeu_k,
                    "IC": r.ic,
                    "interference_rate": r.interference_rate,
                    "n_acc": c["n_acc"],
                    "pending_acc": c["pending_acc"],
                    "pending_ia": max(c["pending_ia"].values()),
                    "n_ic": c["n_ic"],
                    "pending_ic": c["pending_ic"],
                    "no_sources_ic": c["no_sources_ic"],
                    "n_interference": c["n_interference"],
                    "pending_interference": c["pending_interference"],
                }
            )
            rows.append(row)
    return pd.DataFrame(rows)
