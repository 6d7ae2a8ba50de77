"""The Ray engine on a local Ray instance (2 CPUs) gives exactly the local engine's rows and read."""

import copy
import json
import sys

import pyarrow.parquet as pq
import pytest
from _scale_helpers import corpus, per_trace
from pandas.testing import assert_frame_equal

from seekbench import UserInputError
from seekbench.scale import NO_RAY, reduce_traces
from seekbench.traces import _fragments
from seekbench.traces.importers._parquet import rows_table

pytestmark = pytest.mark.slow  # starting Ray takes 10-30 s


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    import _scale_helpers
    from ray import cloudpickle

    # Ray's workers do not have tests/ on their path: ship the test's chunk function by value.
    cloudpickle.register_pickle_by_value(_scale_helpers)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_engine_equals_local_engine_on_parquet_and_jsonl(tmp_path, local_ray, monkeypatch):
    monkeypatch.setattr(_fragments, "JSONL_BYTES", 40_000)
    monkeypatch.setattr(_fragments, "PARQUET_ROWS", 60)
    traces = corpus(3)
    pq.write_table(rows_table(traces), tmp_path / "c.parquet", row_group_size=11)
    records = [*traces[:40], "{bad", *traces[40:], copy.deepcopy(traces[5])]
    (tmp_path / "c.jsonl").write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    for name in ("c.parquet", "c.jsonl"):
        local = reduce_traces(tmp_path / name, per_trace, engine="local", jobs=1, skip_invalid=True)
        remote = reduce_traces(tmp_path / name, per_trace, engine="ray", skip_invalid=True)
        assert remote.n_fragments > 2
        assert_frame_equal(remote.rows, local.rows)
        assert [e.one_line() for e in remote.read.skipped] == [e.one_line() for e in local.read.skipped]
        assert remote.read.formats == local.read.formats
        compact = reduce_traces(tmp_path / name, per_trace, engine="ray", skip_invalid=True, strings="compact")
        on_two = reduce_traces(tmp_path / name, per_trace, jobs=2, skip_invalid=True, strings="compact")
        assert_frame_equal(compact.rows, on_two.rows)
        assert compact.ids.equals(on_two.ids) and compact.ids.to_pylist() == local.rows["trace_id"].tolist()
    assert len(local.read.skipped) == 2  # the bad line and the duplicate


def test_without_ray_installed_the_engine_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` does when it is not installed
    monkeypatch.setitem(sys.modules, "ray.data", None)
    from seekbench.data import sample_traces_path

    with pytest.raises(UserInputError) as err:
        reduce_traces(sample_traces_path(), per_trace, engine="ray")
    assert err.value.one_line() == NO_RAY and "seekbench[ray]" in NO_RAY
