"""The mock server's prompt contract, default policy and fault spec, without sockets."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import seekbench.testing as testing
from seekbench._errors import UserInputError
from seekbench.testing import (
    MOCK_FIELDS_BY_KIND,
    STEPS_BEGIN,
    STEPS_END,
    FaultSpec,
    PolicyError,
    StepLabeler,
    apply_content_fault,
    count_tokens,
    extract_steps,
    extract_trace_id,
    label_steps,
    render_steps_block,
)
from seekbench.traces import FIELDS_BY_KIND, LABEL_VALUES, STEP_KINDS


def test_public_api_is_exported():
    for name in testing.__all__:
        assert hasattr(testing, name), name
    assert (STEPS_BEGIN, STEPS_END, testing.TRACE_ID_PREFIX) == ("<<<STEPS_JSON", "STEPS_JSON>>>", "TRACE_ID:")


def test_policy_fields_are_ontology_fields():
    assert set(MOCK_FIELDS_BY_KIND) == set(STEP_KINDS)
    for kind, fields in MOCK_FIELDS_BY_KIND.items():
        assert set(fields) <= set(FIELDS_BY_KIND[kind])


def test_steps_block_round_trip_and_errors():
    steps = [{"step": 1, "kind": "reasoning", "text": 'a "quoted"\nline'}, {"step": 2, "kind": "answer", "text": ""}]
    text = "intro\n" + render_steps_block(steps) + "\noutro"
    assert extract_steps(text) == steps
    with pytest.raises(PolicyError, match="no <<<STEPS_JSON"):
        extract_steps("nothing")
    with pytest.raises(PolicyError, match="not valid JSON"):
        extract_steps(f"{STEPS_BEGIN}\n[{{]\n{STEPS_END}")
    with pytest.raises(PolicyError, match="element 0"):
        extract_steps(f'{STEPS_BEGIN}\n[{{"step": 1, "kind": "think", "text": ""}}]\n{STEPS_END}')


def test_trace_id_line_is_found_case_insensitively():
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "x\n  trace_id:  ab-1 \ny"}]}]}
    assert extract_trace_id(request) == "ab-1"
    assert extract_trace_id({"messages": [{"role": "user", "content": "TRACE_ID is nice"}]}) is None


def test_count_tokens_by_hand():
    # "It's 3 p.m." -> It ' s 3 p . m .
    assert count_tokens("It's 3 p.m.") == 8
    assert count_tokens("") == 0


step_strategy = st.fixed_dictionaries({
    "step": st.integers(0, 50),
    "kind": st.sampled_from(["reasoning", "search", "search_result", "answer", "other"]),
    "text": st.text(max_size=40),
})


@given(st.lists(step_strategy, max_size=8), st.text(max_size=5))
def test_default_labels_are_in_the_ontology_and_depend_only_on_text(steps, salt):
    labels = label_steps(steps, salt=salt)
    assert labels == label_steps(list(steps), salt=salt)
    labelable = [s for s in steps if MOCK_FIELDS_BY_KIND[s["kind"]]]
    assert [lab["step"] for lab in labels] == [s["step"] for s in labelable]
    for step, label in zip(labelable, labels):
        assert set(label) == {"step", *MOCK_FIELDS_BY_KIND[step["kind"]]}
        for field in MOCK_FIELDS_BY_KIND[step["kind"]]:
            assert label[field] in LABEL_VALUES[field]
        assert label.get("search_type") not in ("InitialQuery", "RepeatQuery")
        twin = {**step, "step": step["step"] + 100}
        assert {k: v for k, v in label_steps([twin], salt=salt)[0].items() if k != "step"} == {
            k: v for k, v in label.items() if k != "step"
        }


def test_salt_changes_labels_like_another_judge():
    steps = [{"step": i, "kind": "reasoning", "text": f"thought {i}"} for i in range(40)]
    a, b = label_steps(steps), label_steps(steps, salt="judge-b")
    assert a != b
    request = {"messages": [{"role": "user", "content": render_steps_block(steps)}]}
    assert json.loads(StepLabeler()(request)) == {"labels": a}


def test_fault_spec_parse_and_errors():
    spec = FaultSpec.parse(" 429:0.2, drop , inject:1.0 ")
    assert spec.rules == (("429", 0.2), ("drop", 1.0), ("inject", 1.0))
    assert str(spec) == "429:0.2,drop:1,inject:1"
    assert FaultSpec.parse(None).rules == () and FaultSpec.parse("").rules == ()
    assert FaultSpec.parse({"500": 0.5}).rules == (("500", 0.5),)
    for bad, message in [("boom:1", "unknown fault kind"), ("500:x", "not a number"),
                         ("500:1.5", r"in \[0, 1\]"), ("500:0.1,500:0.2", "twice")]:
        with pytest.raises(UserInputError, match=message):
            FaultSpec.parse(bad)


def test_fault_choice_is_first_firing_rule_with_expected_rates():
    spec = FaultSpec.parse("500:0.5,inject:1")
    draws = [spec.choose(seed=0, key=f"k{i}", attempt=0) for i in range(2000)]
    assert draws == [spec.choose(seed=0, key=f"k{i}", attempt=0) for i in range(2000)]
    assert set(draws) == {"500", "inject"}
    # P(500) = 0.5, so 2000 draws give 1000 +- 4 sd (sd = sqrt(2000 * 0.25) ~ 22)
    assert abs(draws.count("500") - 1000) < 90
    assert FaultSpec.parse("500:0").choose(seed=0, key="k", attempt=0) is None


def test_content_faults_by_hand():
    steps = [{"step": 1, "kind": "reasoning", "text": "t"}, {"step": 2, "kind": "search_result", "text": "r"}]
    content = json.dumps({"labels": label_steps(steps)})
    assert apply_content_fault("truncated", content, steps) == (content[: len(content) // 2], "length")
    bad = json.loads(apply_content_fault("bad_enum", content, steps)[0])["labels"]
    assert bad[0]["reasoning_type"] == testing.BAD_ENUM_VALUE
    extra = json.loads(apply_content_fault("extra_step", content, steps)[0])["labels"]
    assert extra[-1]["step"] == 3
    injected = json.loads(apply_content_fault("inject", content, steps)[0])
    assert injected["note"] == testing.DEFAULT_INJECTED_NOTE
    assert [lab["grounding"] for lab in injected["labels"]] == ["Grounded", "Grounded"]
    with pytest.raises(ValueError, match="not a content fault"):
        apply_content_fault("500", content, steps)
