"""Trace dicts gathered into the table builder's columns, one trace at a time."""

import weakref

from seekbench.traces import LABEL_FIELDS
from seekbench.traces._dict_columns import VOCABULARY, DictColumns


def _trace(tid, steps, **over):
    return {"trace_id": tid, "agent": "a", "question": "q", "steps": steps, **over}


def test_columns_of_two_traces_then_afresh():
    gathered = DictColumns(use_inline=True)
    # Labels are built by joining, so each is a new string object, as the JSON parser makes them.
    grounded = "".join(["Ground", "ed"])
    gathered.add(_trace("t1", [{"index": 0, "kind": "reasoning", "labels": {"grounding": grounded}}]))
    gathered.add(
        _trace("t2", [{"index": 3, "kind": "search", "query": "q", "tool": "visit"}, {"index": 4, "kind": "answer"}])
    )
    tcols, scols, counts, strings = gathered.take()
    assert tcols["trace_id"] == ["t1", "t2"] and counts.tolist() == [1, 2]
    assert (
        scols["index"] == [0, 3, 4] and scols["query"] == [None, "q", None] and scols["tool"] == [None, "visit", None]
    )
    # Label columns: the value at its step, None elsewhere; unknown label fields ignored.
    assert scols["grounding"] == ["Grounded", None, None] and scols["clarity"] == [None] * 3
    # Kinds and label values are the vocabulary's own string objects (equal to what was read).
    assert scols["grounding"][0] is VOCABULARY["Grounded"] and scols["kind"][1] is VOCABULARY["search"]
    assert set(strings) == {"kind", *LABEL_FIELDS}
    assert len(gathered) == 0 and gathered.take()[1]["index"] == []


def test_a_label_that_is_not_a_string_is_said():
    gathered = DictColumns(use_inline=True)
    gathered.add(_trace("t", [{"index": 0, "kind": "reasoning", "labels": {"grounding": 1}}]))
    _, scols, _, strings = gathered.take()
    # Unvalidated input: the value is kept, and the column is not claimed to hold strings only.
    assert scols["grounding"] == [1] and strings == ()


def test_without_inline_labels_every_label_is_none():
    gathered = DictColumns(use_inline=False)
    gathered.add(_trace("t", [{"index": 0, "kind": "reasoning", "labels": {"grounding": "Grounded"}}]))
    _, scols, _, _ = gathered.take()
    assert all(scols[f] == [None] for f in LABEL_FIELDS)


class _Trace(dict):
    """A trace dict that can be watched (plain dicts take no weak references)."""


def test_a_trace_is_not_kept_once_its_columns_are_gathered():
    # Held until the chunk's tables, a chunk of trace dicts was freed long after it left the cache;
    # every column, the trace's own too, is taken at once and the dict goes with its last reference.
    gathered = DictColumns(use_inline=True)
    trace = _Trace(_trace("t", [{"index": 0, "kind": "answer"}], correct={"value": True, "source": "judge"}))
    watch = weakref.ref(trace)
    gathered.add(trace)
    del trace
    assert watch() is None
    tcols, _, _, _ = gathered.take()
    assert tcols["trace_id"] == ["t"] and tcols["correct_value"] == [True] and tcols["correct_source"] == ["judge"]
    assert tcols["source_format"] == ["?"] and tcols["question"] == ["q"]


def test_the_reader_drops_each_record_before_the_next_is_read(tmp_path):
    from seekbench.traces import FragmentLog, plan_fragments
    from seekbench.traces._fragment_log import dict_chunks

    path = tmp_path / "c.jsonl"
    path.write_text("")
    fragment = plan_fragments([str(path)], ["canonical"])[0]
    watched: list[weakref.ref] = []

    def records():
        for i in range(3):
            # every record read before this one is gone already
            assert all(w() is None for w in watched)
            trace = _Trace(schema_version="1.0", trace_id=f"t{i}", agent="a", question="q", steps=[])
            watched.append(weakref.ref(trace))
            yield i + 1, trace
            trace = None  # as the JSONL reader does: the consumer holds the only reference

    tables = list(dict_chunks(records(), FragmentLog(fragment), fragment, skip_invalid=False, chunk_traces=2))
    assert [t["trace_id"].tolist() for _, t in tables] == [["t0", "t1"], ["t2"]]
