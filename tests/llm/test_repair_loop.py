"""The one repair loop (seekbench.llm.RepairLoop): every repair changes the request, a repeated answer
is not asked for again, and the configured number of repairs bounds it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from seekbench.llm import Parsed, RepairLoop, load_judge_config, with_note


def _loop(max_repairs=3, ok="yes"):
    cfg = load_judge_config("local")
    return RepairLoop(
        [{"role": "user", "content": "answer yes"}],
        body=lambda m, n: {"messages": m, **cfg.decoding(repair=n)},
        parse=lambda r: Parsed(r.content == ok, r.content, None if r.content == ok else f"not {ok}"),
        repair=lambda m, n, p: with_note(m, f"\nREPAIR {n}: {p.error}"),
        max_repairs=max_repairs,
    ), cfg


def reply(text):
    return SimpleNamespace(content=text)


def test_each_repair_changes_the_request():
    loop, cfg = _loop()
    seen = [loop.request()]
    for text in ("no", "maybe", "nope"):
        loop.feed(reply(text))
        seen.append(loop.request())
    # seeds 20250901, +1, +2, +3 (cfg.seed + repair number); the note grows each time
    assert [b["seed"] for b in seen] == [cfg.seed + n for n in range(4)]
    assert len({b["messages"][-1]["content"] for b in seen}) == 4
    loop.feed(reply("still no"))
    assert loop.done and loop.repairs == 3 and not loop.stalled and loop.errors[-1] == "not yes"
    with pytest.raises(RuntimeError):
        loop.request()


def test_an_answer_repeated_word_for_word_is_not_asked_for_again():
    loop, _ = _loop(max_repairs=5)
    loop.feed(reply("no"))
    assert not loop.done and loop.repairs == 1
    loop.feed(reply("no"))  # the repair's answer is the first one again: a further repair would repeat it
    assert loop.done and loop.stalled and loop.repairs == 1


def test_a_valid_answer_ends_the_loop():
    loop, _ = _loop()
    loop.feed(reply("no"))
    assert loop.feed(reply("yes")).ok and loop.done and loop.repairs == 1


def test_a_judge_without_seed_gets_a_small_temperature_on_repair():
    cfg = load_judge_config("local").with_overrides(seed=None, temperature=0.0)
    assert cfg.decoding()["temperature"] == 0.0
    assert cfg.decoding(repair=2)["temperature"] == pytest.approx(0.2)
    assert cfg.decoding(max_tokens=100)["max_tokens"] == 100
    assert cfg.decoding(max_tokens=10**6)["max_tokens"] == cfg.max_tokens  # never above the file's
