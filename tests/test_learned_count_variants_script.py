"""scripts/bench/learned_count_variants.py: the per-trace count rules, the threshold and the scoring, by hand."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def script(bench_script):
    return bench_script("learned_count_variants")


IDS = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2)]
P = np.array([0.6, 0.3, 0.7, 0.2, 0.2])


def test_count_rule_labels_the_round_sum_most_probable_steps_per_trace(script):
    # Trace a: sum 1.6 -> k = floor(2.1) = 2, steps 3 (0.7) and 1 (0.6). Trace b: sum 0.4 -> k = 0.
    assert script.count_labels(IDS, P).tolist() == [True, False, True, False, False]
    # A sum of exactly 0.5 rounds up (k = 1), and equal probabilities go to the earlier step.
    assert script.count_labels([("c", 4), ("c", 7)], np.array([0.25, 0.25])).tolist() == [True, False]
    # Ranked by another score: trace a's two Grounded steps become 2 (0.9) and 3 (0.5).
    rank = np.array([0.1, 0.9, 0.5, 0.0, 0.0])
    assert script.count_labels(IDS, P, rank=rank).tolist() == [False, True, True, False, False]


def test_clamped_rule_keeps_the_other_rules_count_inside_floor_and_ceil_of_the_sum(script):
    # Trace a: base count 0, clamped to [floor 1.6, ceil 1.6] = [1, 2] -> 1: step 3 (0.7).
    # Trace b: base count 2, clamped to [0, 1] -> 1: the tie goes to step 1.
    base = np.array([False, False, False, True, True])
    assert script.count_labels(IDS, P, base=base).tolist() == [False, False, True, True, False]
    # A base count already inside the band is kept: trace a with 2 base labels keeps 2.
    base = np.array([True, True, False, False, False])
    assert script.count_labels(IDS, P, base=base).tolist() == [True, False, True, False, False]


def test_threshold_is_prior_matched_on_the_models_second_class(script):
    # classes[1] is NotGrounded: inner P(NotGrounded) = 0.8, 0.6, 0.4, 0.2; its share is 1/2, so the
    # threshold is the median 0.5. Test P(NotGrounded) 0.55 -> NotGrounded, 0.45 -> Grounded.
    fold = {
        "inner_cls": ["Grounded", "NotGrounded"],
        "inner_p": np.array([0.2, 0.4, 0.6, 0.8]),
        "inner_y": np.array([False, False, True, True]),
        "p": np.array([0.45, 0.55]),
    }
    assert script.threshold_labels(fold).tolist() == [False, True]


def test_isotonic_map_pools_violators_and_clips_the_ends(script):
    # Pool-adjacent-violators on y = 0, 1, 0, 1: the middle pair pools to 0.5; fitted 0, .5, .5, 1.
    f = script.isotonic_map(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]))
    assert f(np.array([0.05, 0.25, 0.35, 0.9])).tolist() == pytest.approx([0.0, 0.5, 0.75, 1.0])


def test_evaluate_kappa_and_rqi_over_the_human_labeled_steps_only(script):
    labels = {
        ("a", 1, "grounding"): "Grounded",
        ("a", 2, "grounding"): "Grounded",
        ("b", 1, "grounding"): "NotGrounded",
    }
    ids = [("a", 1), ("a", 2), ("a", 3), ("b", 1)]  # a3 has no human label: left out
    kappa, rqi = script.evaluate(ids, np.array([1.0, 0.0, 1.0, 1.0]), labels, {"a": "x", "b": "y"})
    # Humans G G N, judge G N G: observed 1/3, chance 2/3*2/3 + 1/3*1/3 = 5/9, kappa (1/3-5/9)/(4/9) = -1/2.
    assert kappa == pytest.approx(-0.5)
    assert rqi == {"x": (1.0, 0.5), "y": (0.0, 1.0)}
