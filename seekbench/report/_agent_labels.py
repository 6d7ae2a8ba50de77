"""Short agent labels for figures and tables: unambiguous, derived from the names, overridable.

Agent names are often run names ("SearchR1-nq_hotpotqa_train-qwen2.5-7b-em-ppo-v0.3"): too long for a
figure's axis or a table's first column. A report shows each agent under a short label and keeps one
legend (``tables/agents.csv``, and a list in the page) mapping each label to the full name; the CSV
tables keep the full names, so they join with the user's other data.

How a label is derived (only when some name is longer than ``max_length``):

1. split each name into tokens at ``-``, ``_``, ``/``, ``:`` and spaces;
2. remove the tokens every name starts with, and those every name ends with (a common prefix or
   suffix tells the agents nothing apart), unless that would leave a name empty;
3. a name still too long loses words from the right until it fits: first filler words (dataset and
   training words such as ``nq``, ``hotpotqa``, ``train``, ``em``, ``Instruct``), then model families
   (``qwen2.5``, ``llama3``); it keeps its first word, model sizes (``7b``, ``1.5B``, ``70M``), version
   and run tags (``v0.3``, ``run2``, ``seed1``, ``step500``, ``ckpt``) and training methods (``ppo``,
   ``grpo``, ``dpo``, ``sft``, ``rl``); then it is cut in the middle with an ellipsis if it must be;
4. labels that collide get their full names back (a label never stands for two agents).

``--label FULL=SHORT`` overrides a derived label.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence

from .._errors import UserInputError

#: The longest label derived automatically (a full name up to this length is kept as it is).
MAX_LABEL_LENGTH = 24

_SEPARATORS = re.compile(r"([-_/: ]+)")
_SIZE = re.compile(r"^\d+(\.\d+)?[bmkt]$", re.IGNORECASE)  # 7b, 1.5B, 70M
_RUN_TAG = re.compile(r"^(v\d[\w.]*|run\d+|seed\d+|step\d+|ckpt\w*|r\d+|\d+)$", re.IGNORECASE)
#: Model families: dropped only after the filler words (the base model tells runs apart more often).
_FAMILY = re.compile(r"^(qwen|llama|mistral|mixtral|gemma|phi|gpt|deepseek|claude|olmo|smollm|glm)", re.IGNORECASE)
_METHODS = {"ppo", "grpo", "dpo", "sft", "rl", "rloo", "reinforce", "dapo", "gspo", "ppo2"}


def _tokens(name: str) -> list[str]:
    """Alternating tokens and separators: ``"a-b_c"`` -> ``["a", "-", "b", "_", "c"]``."""
    return [p for p in _SEPARATORS.split(name) if p != ""]


def _words(parts: list[str]) -> list[int]:
    return [i for i, p in enumerate(parts) if not _SEPARATORS.fullmatch(p)]


def _join(parts: list[str], keep: list[int]) -> str:
    """The tokens at ``keep`` (indexes of words), each after the separator that preceded it in the name."""
    out = []
    for n, i in enumerate(keep):
        if n:
            out.append(parts[i - 1] if i and _SEPARATORS.fullmatch(parts[i - 1]) else "-")
        out.append(parts[i])
    return "".join(out)


def _is_kept(token: str) -> bool:
    t = token.lower()
    return bool(_SIZE.match(t) or _RUN_TAG.match(t) or t in _METHODS)


def _common_words(names: Sequence[list[str]], *, from_end: bool) -> int:
    """How many leading (or trailing) words every name shares, case-insensitively."""
    words = [[p[i].lower() for i in _words(p)] for p in names]
    if from_end:
        words = [w[::-1] for w in words]
    n = 0
    while all(len(w) > n + 1 for w in words) and len({w[n] for w in words}) == 1:
        n += 1
    return n


def _shorten(parts: list[str], keep: list[int], max_length: int) -> str:
    """Past ``max_length``: drop filler words from the right, then model families; cut in the middle last."""
    label = _join(parts, keep)
    fillers = [i for i in keep[1:] if not _is_kept(parts[i]) and not _FAMILY.match(parts[i])]
    families = [i for i in keep[1:] if _FAMILY.match(parts[i]) and not _is_kept(parts[i])]
    for dropped in [*reversed(fillers), *reversed(families)]:
        if len(label) <= max_length:
            break
        keep = [i for i in keep if i != dropped]
        label = _join(parts, keep)
    if len(label) > max_length:
        head = (max_length - 1) // 2
        label = label[:head] + "\u2026" + label[-(max_length - 1 - head) :]
    return label


#: A label shorter than this after removing a common prefix gets the prefix's last word back.
_MIN_LABEL = 3


def short_labels(
    names: Iterable[str], *, overrides: Mapping[str, str] | None = None, max_length: int = MAX_LABEL_LENGTH
) -> dict[str, str]:
    """A short, unambiguous label for each agent name, in the order given.

    Parameters
    ----------
    names : iterable of str
        The agents' full names.
    overrides : mapping, optional
        ``{full name: label}`` given by the user (``--label FULL=SHORT``); they win over derived labels.
    max_length : int, default 24
        Names up to this length are kept whole when every name is; longer ones are shortened.

    Returns
    -------
    dict
        ``{full name: label}``, one entry per distinct name, labels distinct.

    Raises
    ------
    UserInputError
        An override names no agent, or gives two agents the same label.

    Examples
    --------
    >>> names = ["SearchR1-nq_hotpotqa_train-qwen2.5-7b-em-ppo-v0.3", "ReSearch-Qwen-7B-Instruct",
    ...          "Qwen2.5-7B-Instruct"]
    >>> list(short_labels(names).values())
    ['SearchR1-7b-ppo-v0.3', 'ReSearch-Qwen-7B', 'Qwen2.5-7B-Instruct']
    >>> short_labels(["looper", "careful-planner"])
    {'looper': 'looper', 'careful-planner': 'careful-planner'}
    """
    names = list(dict.fromkeys(str(n) for n in names))
    overrides = dict(overrides or {})
    unknown = [k for k in overrides if k not in names]
    if unknown:
        raise UserInputError(
            f"--label {unknown[0]}=...: {unknown[0]!r} is not an agent of these traces; agents: {', '.join(names)}"
        )
    labels = {n: n for n in names}
    if any(len(n) > max_length for n in names):
        parts = [_tokens(n) for n in names]
        lead = _common_words(parts, from_end=False) if len(names) > 1 else 0
        tail = _common_words(parts, from_end=True) if len(names) > 1 else 0
        while lead and any(len(_join(p, _words(p)[lead : len(_words(p)) - tail])) < _MIN_LABEL for p in parts):
            lead -= 1
        for name, p in zip(names, parts, strict=True):
            words = _words(p)
            labels[name] = _shorten(p, words[lead : len(words) - tail] or words, max_length)
        seen: dict[str, list[str]] = {}
        for name, label in labels.items():
            seen.setdefault(label.lower(), []).append(name)
        for group in seen.values():
            if len(group) > 1:  # two agents under one label: show their full names instead
                for name in group:
                    labels[name] = name
    labels.update(overrides)
    clash = _first_clash(labels)
    if clash is not None:
        raise UserInputError(
            f"--label: {clash[0]!r} and {clash[1]!r} would both be shown as {labels[clash[0]]!r}; give them "
            "different labels"
        )
    return labels


def _first_clash(labels: Mapping[str, str]) -> tuple[str, str] | None:
    owner: dict[str, str] = {}
    for name, label in labels.items():
        if label in owner:
            return owner[label], name
        owner[label] = name
    return None


def parse_label_options(values: Sequence[str] | None) -> dict[str, str]:
    """``["FULL=SHORT", ...]`` (repeated ``--label`` options) as ``{FULL: SHORT}``.

    The last ``=`` splits (agent names may hold ``=``; labels may not).

    >>> parse_label_options(["SearchR1-nq-7b=SearchR1", "a=b=c"])
    {'SearchR1-nq-7b': 'SearchR1', 'a=b': 'c'}
    """
    out: dict[str, str] = {}
    for v in values or ():
        full, sep, short = v.rpartition("=")
        if not sep or not full.strip() or not short.strip():
            raise UserInputError(f"--label {v!r}: write FULL=SHORT (an agent's full name, =, its label)")
        out[full.strip()] = short.strip()
    return out


#: Table columns whose values are agent names (the comparison's pairs, the ERF table's groups).
_AGENT_COLUMNS = ("agent", "group", "other", "baseline", "best")
#: Columns of the comparison's summary holding several agents in running text.
_TEXT_COLUMNS = ("order", "best", "sentence")


def _names_pattern(labels: Mapping[str, str]) -> re.Pattern:
    names = sorted((n for n, s in labels.items() if n != s), key=len, reverse=True)
    return re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def _frame(df, labels: Mapping[str, str], text: re.Pattern):
    import pandas as pd

    def one(v):
        return labels.get(v, v) if isinstance(v, str) else v

    out = df.copy()
    for c in out.columns:
        if c in _TEXT_COLUMNS and out[c].dtype == object:
            out[c] = out[c].map(lambda v: text.sub(lambda m: labels[m.group(1)], v) if isinstance(v, str) else v)
        elif c in _AGENT_COLUMNS:
            out[c] = out[c].map(one)
    if isinstance(out.index, pd.MultiIndex):
        out.index = out.index.set_levels([lvl.map(one) for lvl in out.index.levels])
    else:
        out.index = out.index.map(one)
    out.columns = out.columns.map(one) if not isinstance(out.columns, pd.MultiIndex) else out.columns
    return out


def _relabel(value, labels: Mapping[str, str], text: re.Pattern, depth: int = 0):
    import pandas as pd

    if depth > 6:
        return value
    if isinstance(value, str):
        return labels.get(value, value)
    if isinstance(value, pd.DataFrame):
        return _frame(value, labels, text)
    if isinstance(value, dict):
        return {
            labels.get(k, k) if isinstance(k, str) else k: _relabel(v, labels, text, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_relabel(v, labels, text, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = copy.copy(value)
        for f in dataclasses.fields(value):
            object.__setattr__(out, f.name, _relabel(getattr(value, f.name), labels, text, depth + 1))
        return out
    return value


def relabeled(analysis, labels: Mapping[str, str]):
    """A copy of ``analysis`` for rendering whose agents go by ``labels`` (``{full name: label}``).

    Every table, dict key, tuple of agents and the comparison's sentences are relabeled; the explorer's
    data keeps the full names (it has room for them). ``analysis`` itself is unchanged: the CSV tables
    are written from it.
    """
    if all(k == v for k, v in labels.items()):
        return analysis
    text = _names_pattern(labels)
    changes = {
        f.name: _relabel(getattr(analysis, f.name), labels, text)
        for f in dataclasses.fields(analysis)
        if f.name not in ("explorer", "provenance")
    }
    return dataclasses.replace(analysis, **changes)


def agent_label_table(analysis, labels: Mapping[str, str]):
    """``tables/agents.csv``: each agent in the report's order, its label and its number of traces."""
    import pandas as pd

    counts = analysis.audit.table["agent"].astype(str).value_counts()
    return pd.DataFrame(
        [{"agent": a, "label": s, "n_traces": int(counts.get(a, 0))} for a, s in labels.items()],
        columns=["agent", "label", "n_traces"],
    )
