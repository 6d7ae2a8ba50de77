"""SQuAD normalisation, exact match and token F1: hand-derived cases and the published algorithm as reference."""

import re
import string
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench.traces import exact_match_score, f1_score_tokens, normalize_answer, normalize_query
from seekbench.traces._answers import em_f1
from seekbench.traces._normalize import normalized


def squad_normalize(s: str) -> str:
    """The SQuAD v1.1 evaluation script's steps, spelled out: lower, remove_punc, remove_articles, white_space_fix."""
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s.lower() if ch not in exclude)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(prediction: str, gold: str) -> float:
    """Token F1 of one pair with Counter overlap; 1.0/0.0 when either side has no tokens (equal or not)."""
    p, g = squad_normalize(prediction).split(), squad_normalize(gold).split()
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def test_normalisation_by_hand():
    # lower -> "the u.s.-led  an answer!" ; punctuation out -> "the usled  an answer" ;
    # articles out -> "  usled   answer" ; whitespace collapsed -> "usled answer".
    assert normalize_answer("The U.S.-led  an Answer!") == "usled answer"
    # Articles only as whole words: "theatre" and "anna" keep their letters.
    assert normalize_answer("Theatre of Anna") == "theatre of anna"
    # Only ASCII punctuation goes (string.punctuation): the em dash and the accented letter stay.
    assert normalize_answer("Café—Paris") == "café—paris"
    assert normalize_query("A  Query?") == "query"


def test_em_and_f1_by_hand():
    # "river thames london" vs "river thames": overlap 2, P = 2/3, R = 1, F1 = 2*(2/3)/(5/3) = 0.8.
    assert em_f1("River Thames, London", ["The River Thames"]) == (0.0, 0.8)
    # Best gold wins: the second gold equals the prediction after normalisation.
    assert em_f1("the thames", ["London", "Thames!"]) == (1.0, 1.0)
    # Repeated tokens count as a multiset: p = [a1, a1, b] (articles gone: "x x y"), g = [x, y, y]:
    # overlap min(2,1) + min(1,2) = 2, P = R = 2/3, F1 = 2/3.
    assert em_f1("x x y", ["x y y"]) == (0.0, 2 * (2 / 3) * (2 / 3) / (4 / 3))
    # Empty after normalisation: only an empty gold matches.
    assert em_f1("The", ["a"]) == (1.0, 1.0)
    assert em_f1("!!", ["x"]) == (0.0, 0.0)


text = st.text(alphabet=st.sampled_from(list("ab tTheAn.,!'-xyé— \n")), max_size=24)


@settings(max_examples=300, deadline=None)
@given(text)
def test_normalisation_is_the_published_algorithm(s):
    assert normalize_answer(s) == squad_normalize(s)
    assert normalized(s) == squad_normalize(s)


@settings(max_examples=300, deadline=None)
@given(text, st.lists(text, min_size=1, max_size=4))
def test_em_f1_is_the_published_algorithm_also_when_memoised(prediction, golds):
    want = (
        float(any(squad_normalize(prediction) == squad_normalize(g) for g in golds)),
        max(squad_f1(prediction, g) for g in golds),
    )
    assert em_f1(prediction, golds) == want
    assert em_f1(prediction, list(golds)) == want  # a second call, answered from the memo
    assert (exact_match_score(prediction, golds), f1_score_tokens(prediction, golds)) == want
