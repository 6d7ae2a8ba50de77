"""Turn assignment (spec section 1) and the trace table's outcome columns."""

from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from seekbench.traces import build_tables


def _trace(kinds, **over):
    steps = []
    for i, k in enumerate(kinds):
        st = {"index": i, "kind": k}
        if k == "search":
            st["query"] = f"q{i}"
        steps.append(st)
    tr = {"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": steps}
    tr.update(over)
    return tr


def test_turns():
    # r(0) s(1) o(1) r(1) s(2) o(2) r(2) a(2): a call and its observation share a turn,
    # reasoning before the first observation is turn 0, later reasoning follows its observation.
    steps, traces = build_tables(
        [
            _trace(
                ["reasoning", "search", "search_result", "reasoning", "search", "search_result", "reasoning", "answer"],
                final_answer="x",
            )
        ]
    )
    assert steps["turn"].tolist() == [0, 1, 1, 1, 2, 2, 2, 2]
    assert traces.loc[0, "answer_turn"] == 2 and traces.loc[0, "last_turn"] == 2
    assert bool(traces.loc[0, "answered"])


def test_reasoning_between_call_and_observation_has_the_calls_turn():
    # s(1) r o a: spec section 1 (clarified): every step other than a call has the turn of
    # the last call before it, so the reasoning after the call is turn 1 too.
    steps, _ = build_tables([_trace(["search", "reasoning", "search_result", "answer"])])
    assert steps["turn"].tolist() == [1, 1, 1, 1]


def test_correct_from_em_when_not_judged():
    # No judged correctness: exact match decides, and the source says so.
    _, t = build_tables([_trace(["answer"], final_answer="The Thames", gold_answers=["thames"])])
    assert t.loc[0, "correct"] is True and t.loc[0, "correct_source"] == "em"
    _, t = build_tables(
        [_trace(["answer"], final_answer="Thames", gold_answers=["Severn"], correct={"value": True, "source": "judge"})]
    )
    assert t.loc[0, "correct"] is True and t.loc[0, "correct_source"] == "judge"
    assert t.loc[0, "em"] == 0.0


def test_unanswered_trace_has_unknown_correctness():
    _, t = build_tables([_trace(["search", "search_result"], gold_answers=["x"])])
    assert t.loc[0, "correct"] is None and not t.loc[0, "answered"]


_VISIT = ("visit", "open", "browse", "fetch", "read", "click")


def _reference_steps(traces):
    """The step table by its definition, one row dict per step, columns as pandas infers them from lists."""
    import pandas as pd

    from seekbench.traces import LABEL_FIELDS, STEP_COLUMNS, normalize_query

    rows = []
    for tr in traces:
        turn = 0
        for pos, step in enumerate(tr.get("steps", [])):
            search = step["kind"] == "search"
            turn += search
            q, url, tool = step.get("query"), step.get("url"), step.get("tool")
            visit = url or (q if q and any(v in (tool or "").lower() for v in _VISIT) else None)
            labels = step.get("labels") or {}
            rows.append(
                {
                    **{k: tr.get(k) for k in ("trace_id", "agent", "dataset", "question_id")},
                    **{"step": step["index"], "pos": pos, "kind": step["kind"], "turn": turn, "query": q},
                    "query_norm": normalize_query(q) if search and isinstance(q, str) else None,
                    "visit_id": visit if search else None,
                    "n_documents": len(step.get("documents") or ()),
                    **{f: labels.get(f) for f in LABEL_FIELDS},
                }
            )
    return pd.DataFrame({c: [r[c] for r in rows] for c in STEP_COLUMNS})


_maybe_text = st.one_of(st.none(), st.sampled_from(["", "The Query!", "x", "http://u", "q q"]))
_step = st.fixed_dictionaries(
    {"kind": st.sampled_from(["reasoning", "search", "search_result", "answer", "other"])},
    optional={
        "query": _maybe_text,
        "url": _maybe_text,
        "tool": st.sampled_from([None, "search", "Visit_Page", "web_fetch", "scholar"]),
        "documents": st.lists(st.just({"text": "d"}), max_size=3),
        "labels": st.one_of(
            st.none(),
            st.dictionaries(
                st.sampled_from(["grounding", "reasoning_type", "clarity", "sufficiency", "search_type", "other"]),
                st.one_of(st.none(), st.sampled_from(["Grounded", "Clear", "PlanFormation"]), st.integers(0, 1)),
            ),
        ),
    },
)


def _reference_traces(traces):
    """The trace table by its definition, one row dict per trace (NaN where unanswered or unscored)."""
    import pandas as pd

    from seekbench.traces import TRACE_COLUMNS, exact_match_score, f1_score_tokens

    rows = []
    for tr in traces:
        steps = tr.get("steps", [])
        turns = [sum(s["kind"] == "search" for s in steps[: p + 1]) for p in range(len(steps))]
        answers = [p for p, s in enumerate(steps) if s["kind"] == "answer"]
        golds, final = tr.get("gold_answers") or [], tr.get("final_answer")
        scored = final is not None and bool(golds)
        em = exact_match_score(final, golds) if scored else float("nan")
        correct = tr.get("correct") or {}
        value, source = correct.get("value"), correct.get("source")
        if value is None and scored:
            value, source = bool(em), "em"
        rows.append(
            {
                **{k: tr.get(k) for k in ("trace_id", "agent", "dataset", "question_id", "question")},
                **{"gold_answers": list(golds), "final_answer": final, "answered": bool(answers)},
                "answer_pos": answers[0] if answers else float("nan"),
                "answer_turn": turns[answers[0]] if answers else float("nan"),
                "last_turn": turns[-1] if steps else 0,
                **{"correct": value, "correct_source": source if value is not None else None, "n_steps": len(steps)},
                "em": em,
                "f1": f1_score_tokens(final, golds) if scored else float("nan"),
            }
        )
    out = pd.DataFrame({c: [r[c] for r in rows] for c in TRACE_COLUMNS})
    out["correct"] = pd.Series([r["correct"] for r in rows], dtype=object)
    return out


_ids = st.one_of(st.none(), st.sampled_from(["d1", "d2"]), st.integers(0, 3))


_answer = st.one_of(st.none(), st.sampled_from(["The Thames", "thames river", "x"]))
_outcome = st.fixed_dictionaries(
    {},
    optional={
        "final_answer": _answer,
        "gold_answers": st.lists(st.sampled_from(["Thames", "the river", "y"]), max_size=2),
        "correct": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {"value": st.sampled_from([True, False, None]), "source": st.sampled_from(["judge", "source_data"])}
            ),
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.lists(_step, max_size=6), _ids, _ids, _outcome), min_size=1, max_size=5),
    st.sampled_from([1, 2, 2048]),
)
def test_tables_are_their_row_by_row_definition(spec, chunk):
    # Any mix of optional step fields, unknown or null labels, and keys that are not strings (a plain
    # dict input, before validation: pandas then infers those columns as it would from the rows).
    traces = [
        {
            "trace_id": f"t{i}",
            "agent": "a",
            "dataset": ds,
            "question_id": qid,
            "question": "q",
            "steps": [dict(s, index=2 * k) for k, s in enumerate(steps)],
            **outcome,
        }
        for i, (steps, ds, qid, outcome) in enumerate(spec)
    ]
    import seekbench.traces._tables as tables

    old, tables._CHUNK = tables._CHUNK, chunk
    try:
        steps, table = build_tables(traces)
    finally:
        tables._CHUNK = old
    want = _reference_steps(traces)
    if len(want):
        assert_frame_equal(steps, want, check_exact=True)
    else:
        assert len(steps) == 0
    assert_frame_equal(table, _reference_traces(traces), check_exact=True)


def test_normalized_queries_leave_what_is_not_a_string_none():
    from seekbench.traces._tables import _normalized_queries

    # SQuAD normalisation by hand: "The Query!" -> "the query" -> "query"; "a  B" -> "b".
    assert _normalized_queries(["The Query!", "a  B"]) == ["query", "b"]
    assert _normalized_queries(["The Query!", None, 3]) == ["query", None, None]
    assert _normalized_queries([]) == []


_valid_text = st.one_of(st.none(), st.sampled_from(["", "The Query!", "http://u", "q q"]))
_valid_labels = st.fixed_dictionaries(
    {},
    optional={
        "grounding": st.sampled_from([None, "Grounded", "NotGrounded"]),
        "reasoning_type": st.sampled_from([None, "PlanFormation", "StateAssessment"]),
        "search_type": st.sampled_from([None, "InitialQuery", "RepeatQuery"]),
        "clarity": st.sampled_from([None, "Clear", "Unclear"]),
        "sufficiency": st.sampled_from([None, "Sufficient", "Insufficient"]),
    },
)
_valid_step = st.fixed_dictionaries(
    {"kind": st.sampled_from(["reasoning", "search", "search_result", "answer", "other"])},
    optional={
        "query": _valid_text,
        "url": _valid_text,
        "tool": st.sampled_from([None, "search", "Visit_Page"]),
        "documents": st.lists(st.just({"text": "d"}), max_size=2),
        "labels": _valid_labels,
    },
)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(_valid_step, max_size=5), st.sampled_from([None, "d1"]), st.sampled_from([None, "q1"])),
        min_size=1,
        max_size=4,
    ),
    _outcome,
)
def test_schema_valid_traces_make_the_same_tables_without_the_scans(spec, outcome):
    # The fragment reader tells the table builder its traces passed the schema, so it skips checking
    # that the text columns hold only strings and None: the tables must be the ones the checks give.
    from seekbench.traces import validate_trace
    from seekbench.traces._dict_columns import DictColumns
    from seekbench.traces._tables import _Columns

    traces = [
        {
            "schema_version": "1.0",
            "trace_id": f"t{i}",
            "agent": "a",
            "dataset": ds,
            "question_id": qid,
            "question": "q",
            "steps": [dict(s, index=k) for k, s in enumerate(steps)],
            **outcome,
        }
        for i, (steps, ds, qid) in enumerate(spec)
    ]
    frames = []
    for valid in (False, True):
        gathered = DictColumns(use_inline=True)
        for tr in traces:
            validate_trace(tr)  # the strategy makes valid traces only
            gathered.add(tr)
        tcols, scols, counts, strings = gathered.take()
        cols = _Columns(use_inline=True)
        cols.add_columns(tcols, scols, counts, strings=strings, schema_valid=valid)
        frames.append(cols.frames())
    for checked, claimed in zip(frames[0], frames[1], strict=True):
        assert_frame_equal(claimed, checked, check_exact=True)
