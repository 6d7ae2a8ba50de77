"""Annotation planning (issue 30, item 3): the half-width projection, the plan, the ranking.

Expected values are hand derivations (stated in the comments) or scikit-learn's
``cohen_kappa_score`` as an independent reference.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from seekbench import UndefinedMetricWarning
from seekbench._errors import UserInputError
from seekbench.agreement import plan_annotation, projected_half_width, size_for_half_width
from seekbench.labels import AnnotationSet

# A statistic with a known sampling distribution: each trace is one 0/1 item, counts [x, 1], and
# the statistic is their mean. Half of 400 traces are 1: sd 0.5, so a 95% CI over n' traces has
# half-width 1.96 * 0.5 / sqrt(n') (0.049 at 400, 0.0245 at 1600).
MEAN_COUNTS = np.column_stack([np.arange(400) % 2, np.ones(400)])


def mean_stat(s: np.ndarray) -> np.ndarray:
    return s[..., 0] / s[..., 1]


FAST = {"n_boot": 200, "n_worlds": 30}


def test_projection_follows_the_square_root_law():
    h = projected_half_width(MEAN_COUNTS, mean_stat, [400, 1600], assurance=0.5, **FAST)
    assert h[0] == pytest.approx(1.96 * 0.5 / 20, rel=0.12)
    assert h[1] == pytest.approx(1.96 * 0.5 / 40, rel=0.12)


def test_projection_is_monotone_in_the_size():
    sizes = [40, 41, 60, 100, 101, 200, 400, 1000]
    h = projected_half_width(MEAN_COUNTS[:40], mean_stat, sizes[::-1], **FAST)[::-1]
    assert np.all(np.diff(h) <= 0), h
    assert h[0] > 2 * h[-1]  # 40 times the traces: sqrt(40) = 6.3 times narrower, less noise


def test_assurance_raises_the_projection():
    pilot = MEAN_COUNTS[:30]
    median, high = (projected_half_width(pilot, mean_stat, [120], assurance=a, **FAST)[0] for a in (0.5, 0.9))
    assert high > median


def test_projection_is_deterministic_with_a_seed():
    a = projected_half_width(MEAN_COUNTS[:30], mean_stat, [60, 90], seed=3, **FAST)
    b = projected_half_width(MEAN_COUNTS[:30], mean_stat, [60, 90], seed=3, **FAST)
    c = projected_half_width(MEAN_COUNTS[:30], mean_stat, [60, 90], seed=4, **FAST)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_size_for_half_width_inverts_the_square_root_law():
    # 1.96 * 0.5 / sqrt(m) <= 0.049 from m = 400 on; the search stops within 3% of the size
    m, h = size_for_half_width(MEAN_COUNTS[:100], mean_stat, 0.049, max_size=10_000, assurance=0.5, **FAST)
    assert 0.85 * 400 <= m <= 1.15 * 400 and h <= 0.049
    # a target beyond max_size: no size, and the half-width there
    none, h_max = size_for_half_width(MEAN_COUNTS[:100], mean_stat, 0.001, max_size=500, **FAST)
    assert none is None and h_max > 0.001


def test_an_undefined_statistic_gives_no_size():
    counts = np.column_stack([np.zeros(20), np.zeros(20)])  # 0 / 0 in every resample
    with np.errstate(invalid="ignore"):
        assert size_for_half_width(counts, mean_stat, 0.1, max_size=100, **FAST)[0] is None


# ---- plan_annotation on small annotation sets --------------------------------------------------


def _rec(t: str, step: int, value: str, rater: str, field: str = "grounding") -> dict:
    return {
        "trace_id": t,
        "step": step,
        "field": field,
        "value": value,
        "unscored_reason": None,
        "rater": rater,
        "provenance": {"kind": "human" if rater == "human" else "judge"},
    }


G, NG = "Grounded", "NotGrounded"


def _traces(n: int, agents=("a",)) -> list[dict]:
    steps = [{"index": i, "kind": "reasoning"} for i in range(2)]
    return [{"trace_id": f"t{i:02d}", "agent": agents[i % len(agents)], "steps": steps} for i in range(n)]


def _human(ids) -> AnnotationSet:
    # trace i: step 0 is G if i is even, step 1 the opposite label
    return AnnotationSet.from_records(
        [_rec(f"t{i:02d}", s, [G, NG][(i + s) % 2], "human") for i in ids for s in (0, 1)], name="human"
    )


def _judge(name: str, ids, flip=()) -> AnnotationSet:
    return AnnotationSet.from_records(
        [_rec(f"t{i:02d}", s, [G, NG][(i + s + (i in flip)) % 2], name) for i in ids for s in (0, 1)], name=name
    )


def _plan(*args, **kw):
    kw = {"n_boot": 200, "n_worlds": 20, "n_draws": 100, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return plan_annotation(*args, **kw)


def test_kappa_row_matches_scikit_learn_and_plans_more_traces():
    human, judge = _human(range(20)), _judge("j", range(30), flip=(0, 5, 11))
    plan = _plan(human, judge, traces=_traces(30), target=0.1)
    row = plan.kappa.iloc[0]
    ref = [[G, NG][(i + s) % 2] for i in range(20) for s in (0, 1)]
    got = [[G, NG][(i + s + (i in (0, 5, 11))) % 2] for i in range(20) for s in (0, 1)]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(ref, got))  # 34 of 40 agree, balanced: 0.7
    assert (row["n_traces"], row["n_items"]) == (20, 40)
    assert row["half_width"] == pytest.approx((row["kappa_upper"] - row["kappa_lower"]) / 2)
    assert row["traces_needed"] > 0 and row["projected_half_width"] <= 0.1
    # a looser target asks for fewer traces; one met now asks for none
    looser = _plan(human, judge, traces=_traces(30), target=0.2).kappa.iloc[0]
    assert looser["traces_needed"] < row["traces_needed"]
    met = _plan(human, judge, traces=_traces(30), target=1.0).kappa.iloc[0]
    assert met["traces_needed"] == 0


def test_two_identical_judges_differ_by_zero_in_every_resample():
    human = _human(range(12))
    a, b = _judge("a", range(16), flip=(1, 4)), _judge("b", range(16), flip=(1, 4))
    diff = _plan(human, a, b, traces=_traces(16), target=0.1).differences.iloc[0]
    assert (diff["rater_a"], diff["rater_b"], diff["difference"]) == ("a", "b", 0.0)
    assert (diff["difference_lower"], diff["difference_upper"], diff["traces_needed"]) == (0.0, 0.0, 0)


def test_the_difference_is_kappa_a_minus_kappa_b():
    human = _human(range(20))
    a, b = _judge("a", range(20), flip=(3,)), _judge("b", range(20), flip=(0, 5, 11))
    diff = _plan(human, a, b, traces=_traces(20), target=0.05).differences.iloc[0]
    # a: 38 of 40 agree, balanced labels: kappa 0.9; b: 34 of 40: kappa 0.7
    assert diff["difference"] == pytest.approx(0.2)
    assert diff["difference_lower"] <= 0.2 <= diff["difference_upper"]


def test_the_ranking_puts_a_judge_disagreement_trace_first():
    human = _human(range(8))
    ids = range(14)
    # on t10 the judges differ on both steps; elsewhere they agree
    a, b = _judge("a", ids), _judge("b", ids, flip=(10,))
    plan = _plan(human, a, b, traces=_traces(14), target=0.1)
    rk = plan.ranking
    assert set(rk["trace_id"]) == {f"t{i:02d}" for i in range(8, 14)}  # the unlabeled ones
    assert rk.iloc[0]["trace_id"] == "t10" and rk.iloc[0]["judge_disagreements"] == 2
    assert rk.iloc[0]["expected_disagreements"] == 2.0  # judges differ: the human differs from one, surely
    assert rk.iloc[0]["explorer"] == "explorer.html#trace=t10"
    assert list(rk["rank"]) == list(range(1, 7))


def test_stratified_order_keeps_agents_in_proportion():
    traces = _traces(24, agents=("x", "y"))  # even ids are agent x, odd agent y
    human = _human([0, 2, 4, 6, 1])  # x is ahead: 4 labeled against 1
    plan = _plan(human, _judge("j", range(24)), traces=traces, target=0.1)
    agents = plan.ranking["agent"].tolist()
    # x and y are half of all traces each: y is 3 behind, so the next three are y's
    assert agents[:3] == ["y", "y", "y"]
    assert abs(agents[:9].count("x") + 4 - (agents[:9].count("y") + 1)) <= 1


def test_ranking_is_deterministic_with_a_seed():
    human, judge = _human(range(6)), _judge("j", range(30), flip=(1, 2))
    traces = _traces(30, agents=("x", "y", "z"))
    r1 = _plan(human, judge, traces=traces, target=0.3, seed=7).ranking
    r2 = _plan(human, judge, traces=traces, target=0.3, seed=7).ranking
    r3 = _plan(human, judge, traces=traces, target=0.3, seed=8).ranking
    assert r1.equals(r2) and not r1["trace_id"].equals(r3["trace_id"])


def test_user_errors():
    traces = _traces(10)
    with pytest.raises(UserInputError, match="labels none of the traces"):
        _plan(AnnotationSet.from_records([_rec("zz", 0, G, "human")]), _judge("j", range(10)), traces=traces)
    with pytest.raises(UserInputError, match="no step is labeled by both"):
        _plan(_human(range(5)), _judge("j", range(5, 10)), traces=traces)
    with pytest.raises(UserInputError, match="at least one judge"):
        _plan(_human(range(5)), traces=traces)
    with pytest.raises(UserInputError, match="--target"):
        _plan(_human(range(5)), _judge("j", range(10)), traces=traces, target=0)


def test_disagreement_order_takes_the_likeliest_disagreements_first():
    human = _human(range(8))
    ids = range(14)
    # the judges differ on t09 (one step) and t12 (both steps); agree elsewhere
    a = _judge("a", ids)
    b = AnnotationSet.from_records(
        [
            _rec(f"t{i:02d}", s, [G, NG][(i + s + (i == 12) + (i == 9 and s == 0)) % 2], "b")
            for i in ids
            for s in (0, 1)
        ],
        name="b",
    )
    rk = _plan(human, a, b, traces=_traces(14), target=0.5, order="disagreement").ranking
    assert rk["trace_id"].tolist()[:2] == ["t12", "t09"]
    assert rk["judge_disagreements"].tolist()[:2] == [2, 1]
    shuffled = _plan(human, a, b, traces=_traces(14), target=0.5, order="random").ranking
    assert sorted(shuffled["trace_id"]) == sorted(rk["trace_id"])
