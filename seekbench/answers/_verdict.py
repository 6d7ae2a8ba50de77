"""A tolerant, but never guessing, parser of answer-judge verdicts.

An answer judge is asked to reply ``Yes`` or ``No``. Real judges add
punctuation, markdown, a reason, or answer in JSON. This parser accepts those
forms and refuses anything it would have to guess at:

accepted
    ``Yes``, ``yes.``, ``**Yes**``, ``Yes, because ...``, ``Correct``,
    ``Incorrect``, ``Not correct``, ``True``/``False``, ``Verdict: no``,
    a reasoning paragraph ending in a ``Final answer: Yes`` line, JSON
    ``{"correct": true}`` / ``{"verdict": "no"}`` / ``true``, ``是`` / ``否``.
refused (unscored, with the reason)
    an empty reply; a hedge (``maybe``, ``partially correct``, ``unclear``,
    ``cannot determine``); both verdicts at once (``yes and no``,
    ``Yes/No``, ``Yes. No.``); a leading verdict contradicted by a
    ``Verdict:`` line; verdict lines that disagree; JSON without a verdict
    field; text with no verdict at all.

The published InfoDeepSeek evaluator compares ``reply.strip().lower() == "yes"``,
so a judge answering ``Yes.`` is scored *incorrect* there; here it is correct.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

#: Leading words (lower case) and the verdict they carry.
_WORDS = {
    "yes": True,
    "no": False,
    "correct": True,
    "incorrect": False,
    "true": True,
    "false": False,
    "right": True,
    "wrong": False,
}
#: Whole replies in Chinese (the InfoDeepSeek prompts exist in Chinese too).
_ZH = {"是": True, "对": True, "正确": True, "否": False, "不对": False, "错误": False, "不正确": False}
_HEDGES = re.compile(
    r"\b(maybe|perhaps|possibly|partially|partly|partial|somewhat|unclear|uncertain|unsure|"
    r"not sure|cannot (?:be )?determine|can't determine|unable to determine|ambiguous|"
    r"undetermined|mostly)\b"
)
_LABEL = re.compile(
    r"^\s*(?:final\s+)?(?:answer|verdict|judg(?:e)?ment|decision|conclusion|result)\s*[:：]\s*(.*)$", re.IGNORECASE
)
_MARKUP = str.maketrans({c: " " for c in "*_`#>\"'“”‘’[]()"})
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)
_JSON_KEYS = ("correct", "is_correct", "verdict", "answer", "judgment", "judgement", "decision", "result")


@dataclass(frozen=True)
class Verdict:
    """One parsed verdict.

    Attributes
    ----------
    value : bool or None
        True (the candidate answer is correct), False, or None (unscored).
    reason : str or None
        Why the reply was not scored (None when it was).
    """

    value: bool | None
    reason: str | None = None

    @property
    def scored(self) -> bool:
        return self.value is not None


def _unscored(reason: str) -> Verdict:
    return Verdict(None, reason)


def _lead(text: str) -> tuple[bool | None, str | None, str]:
    """The verdict of a line that starts with one: ``(value, word, rest)``; value None when it does not."""
    clean = " ".join(text.translate(_MARKUP).split()).lower()
    m = re.match(r"^(not|isn't|is not)\s+(correct|right)\b(.*)$", clean)
    if m:
        return False, f"{m.group(1)} {m.group(2)}", m.group(3)
    m = re.match(r"^([a-z]+)\b(.*)$", clean)
    if m and m.group(1) in _WORDS:
        return _WORDS[m.group(1)], m.group(1), m.group(2)
    return None, None, clean


def _both_at_once(rest: str, value: bool) -> str | None:
    """The opposite verdict word right after the first (``yes and no``, ``yes/no``, ``Yes. No.``)."""
    m = re.match(
        r"^\s*(?:[,.;:!/|-]+\s*|\s+)?(?:(?:and|or|but)\s+)?(?:[,.;:!/|-]+\s*)?([a-z]+)\b"
        r"(?=\s*(?:[.,;:!?/|)]|$))",
        rest,
    )
    if m and m.group(1) in _WORDS and _WORDS[m.group(1)] is not value:
        return m.group(1)
    return None


def _from_json(obj: object) -> Verdict | None:
    """A verdict from parsed JSON; None when ``obj`` is not a verdict-shaped JSON value."""
    if isinstance(obj, bool):
        return Verdict(obj)
    if isinstance(obj, dict):
        found = [k for k in _JSON_KEYS if k in obj]
        if not found:
            return _unscored(f"JSON reply without a verdict field (expected one of: {', '.join(_JSON_KEYS)})")
        values = []
        for k in found:
            v = obj[k]
            if isinstance(v, bool):
                values.append(v)
            elif isinstance(v, str):
                sub = parse_verdict(v)
                if sub.value is None:  # not scored
                    return _unscored(f"JSON field {k!r}: {sub.reason}")
                values.append(sub.value)
            elif v is None:
                return _unscored(f"JSON field {k!r} is null (the judge abstained)")
            else:
                return _unscored(f"JSON field {k!r} is {type(v).__name__}, not a verdict")
        if len(set(values)) > 1:
            return _unscored("contradictory: JSON verdict fields disagree")
        return Verdict(values[0])
    if isinstance(obj, str):
        return parse_verdict(obj)
    return None


def parse_verdict(text: str | None) -> Verdict:
    """Parse an answer judge's reply into True, False or unscored-with-a-reason.

    The first line is read for a leading verdict word (after markdown and a
    ``Verdict:``-style label are stripped). A hedge word in that first sentence,
    or the opposite verdict word right after the first, makes the reply
    ambiguous. Lines labeled ``Answer:``, ``Verdict:``, ``Final answer:``,
    ``Judgment:``, ``Decision:`` anywhere in the reply must agree with each other
    and with a leading verdict; a reply with no leading verdict is decided by
    those lines alone.

    Parameters
    ----------
    text : str or None
        The judge's reply (the message content).

    Returns
    -------
    Verdict
        ``value`` True / False, or None with ``reason``.

    Examples
    --------
    >>> parse_verdict("Yes.").value, parse_verdict("yes, because the years match").value
    (True, True)
    >>> parse_verdict('{"correct": false}').value, parse_verdict("Not correct.").value
    (False, False)
    >>> parse_verdict("yes and no").reason
    "contradictory: both 'yes' and 'no'"
    >>> parse_verdict("Maybe.").reason
    "hedged: 'maybe'"
    """
    if text is None or not text.strip():
        return _unscored("empty reply")
    body = text.strip()
    m = _FENCE.match(body)
    if m:
        body = m.group(1).strip()
    if body[:1] in "{[" or body in ("true", "false") or body.startswith('"'):
        try:
            obj = json.loads(body)
        except json.JSONDecodeError:
            obj = None
        else:
            got = _from_json(obj)
            if got is not None:
                return got
    whole = body.strip(" \t\n。．.!！")
    if whole in _ZH:
        return Verdict(_ZH[whole])
    lines = [ln for ln in body.splitlines() if ln.strip()]
    first = lines[0]
    lm = _LABEL.match(first.translate(_MARKUP))
    value, word, rest = _lead(lm.group(1) if lm else first)
    labeled: list[tuple[bool, str | None]] = []  # the word is set whenever the value is
    for ln in lines[1:]:
        lab = _LABEL.match(ln.translate(_MARKUP))
        if lab:
            v, w, _ = _lead(lab.group(1))
            if v is None:
                return _unscored(f"a verdict line without a verdict: {ln.strip()[:60]!r}")
            labeled.append((v, w))
    if value is not None:
        sentence = re.split(r"(?<=[.!?;])\s", rest, maxsplit=1)[0]
        other = _both_at_once(rest, value)
        if other is not None:
            return _unscored(f"contradictory: both {word!r} and {other!r}")
        hedge = _HEDGES.search(f"{word} {sentence}")
        if hedge:
            return _unscored(f"hedged: {hedge.group(0)!r}")
        for v, w in labeled:
            if v is not value:
                return _unscored(f"contradictory: starts with {word!r}, then a verdict line says {w!r}")
        return Verdict(value)
    hedge = _HEDGES.search(rest.split(".")[0])
    if not labeled:
        if hedge:
            return _unscored(f"hedged: {hedge.group(0)!r}")
        return _unscored(f"no verdict found in {first.strip()[:60]!r}")
    if len({v for v, _ in labeled}) > 1:
        return _unscored("contradictory: verdict lines disagree")
    return Verdict(labeled[-1][0])
