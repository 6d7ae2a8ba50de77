"""The tolerant verdict parser: what it accepts, and what it refuses as ambiguous."""

import pytest

from seekbench.answers import parse_verdict

ACCEPTED = [
    ("Yes", True), ("Yes.", True), ("yes", True), ("YES!", True), ("**Yes**", True), ("`No`", False),
    ("yes, because the years match", True), ("No, the candidate names 1993 instead of 1994.", False),
    ("Correct", True), ("Correct.", True), ("Incorrect.", False), ("Not correct", False), ("True", True),
    ("false", False), ("Verdict: no", False), ("Answer: Yes", True), ('{"correct": true}', True),
    ('{"correct": false, "reason": "wrong year"}', False), ('{"verdict": "Yes."}', True), ("true", True),
    ('```json\n{"is_correct": true}\n```', True), ("The years agree.\nFinal answer: Yes", True),
    ("Yes, no doubt about it.", True), ("是", True), ("否。", False), ("Yes\nVerdict: yes", True),
]

REFUSED = [
    ("", "empty"), ("   \n", "empty"), (None, "empty"), ("yes and no", "contradictory"),
    ("Yes/No", "contradictory"), ("Yes. No.", "contradictory"), ("yes or no", "contradictory"),
    ("Maybe.", "hedged"), ("maybe", "hedged"), ("Partially correct.", "hedged"), ("Yes, mostly.", "hedged"),
    ("I cannot determine this.", "hedged"), ("It depends on the source.", "no verdict"),
    ("Yes\nVerdict: No", "contradictory"), ("Reasoning\nVerdict: yes\nFinal answer: no", "contradictory"),
    ('{"correct": true, "verdict": "no"}', "contradictory"), ('{"score": 1}', "without a verdict"),
    ('{"correct": null}', "abstained"), ('{"correct": "maybe"}', "hedged"),
]


@pytest.mark.parametrize("text,value", ACCEPTED)
def test_accepted(text, value):
    v = parse_verdict(text)
    assert v.value is value and v.reason is None and v.scored


@pytest.mark.parametrize("text,why", REFUSED)
def test_refused_with_a_reason(text, why):
    v = parse_verdict(text)
    assert v.value is None and not v.scored
    assert why in v.reason


def test_yes_with_a_full_stop_is_correct_unlike_the_published_strict_comparison():
    # InfoDeepSeek's eval.py scores `reply.strip().lower() == "yes"`: "Yes." would count as wrong.
    reply = "Yes."
    assert (reply.strip().lower() == "yes") is False
    assert parse_verdict(reply).value is True
