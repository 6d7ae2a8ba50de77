"""scripts/bench/learned_grounding_variants.py: the rebuilt classifier's scoring, on data whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def script(bench_script):
    return bench_script("learned_grounding_variants")  # it imports its sibling learned_rqi


def _data(strict_agent_b: bool):
    # 40 traces (one question each) of 3 steps; agents a and b alternate. The first score column
    # decides the label exactly (Grounded above 0.6, so about 40% of steps).
    rng = np.random.default_rng(0)
    n_traces, per = 40, 3
    tid = np.repeat([f"t{i:02d}" for i in range(n_traces)], per)
    agent = np.array(["a" if int(t[1:]) % 2 == 0 else "b" for t in tid])
    signal = rng.random(len(tid))
    y = signal > 0.6
    x = np.column_stack([signal, rng.random(len(tid))])
    if strict_agent_b:  # agent b's annotator calls nothing Grounded, whatever the scores
        y = np.where(agent == "b", False, y)
    texts = ["step"] * len(tid)
    test_fold = np.array([int(t[1:]) % 5 for t in tid])
    return x, texts, y, tid, agent, tid.copy(), test_fold


def test_a_separable_score_gives_kappa_one_and_no_rqi_difference(script):
    x, texts, y, tid, agent, group, test_fold = _data(strict_agent_b=False)
    kappa, diffs = script.evaluate(x, texts, y, tid, agent, group, test_fold)
    # The trees split on the first column; the prior-matched threshold labels about the training
    # share, so only steps near the cut can be wrong.
    assert kappa > 0.95
    assert np.abs(diffs).max() < 0.05


def test_an_agent_labeled_more_strictly_is_overstated_and_the_other_understated(script):
    # The scores cannot tell the agents apart, so the judge labels about 20% of each agent's steps
    # Grounded (the training share): b (truly 0) is overstated, a (truly about 40%) understated.
    x, texts, y, tid, agent, group, test_fold = _data(strict_agent_b=True)
    _, diffs = script.evaluate(x, texts, y, tid, agent, group, test_fold)
    assert diffs.shape == (2,)  # one per agent, in sorted order (a, b)
    assert diffs[1] > 0.1 and diffs[0] < -0.1
