"""Output files appear complete or not at all: :mod:`traceviz.atomic` and the trace export."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from traceviz.atomic import (
    PARTIAL_MARK,
    atomic_path,
    partial_name,
    remove_partials,
    write_text_atomic,
)
from traceviz.collect import manifest


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if PARTIAL_MARK in p.name)


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out" / "report.txt"
    write_text_atomic(target, "old")
    write_text_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert leftovers(target.parent) == []


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_writer_that_fails_half_way_leaves_the_old_file(tmp_path, error):
    target = tmp_path / "manifest.json"
    target.write_text("complete old", encoding="utf-8")
    with pytest.raises(error), atomic_path(target) as tmp:
        tmp.write_text("half of the ne", encoding="utf-8")
        raise error()
    assert target.read_text(encoding="utf-8") == "complete old"
    assert leftovers(tmp_path) == []


def test_a_writer_that_wrote_nothing_is_an_error_and_creates_nothing(tmp_path):
    target = tmp_path / "trace.json.gz"
    with pytest.raises(FileNotFoundError, match=r"nothing was written"), atomic_path(target):
        pass
    assert list(tmp_path.iterdir()) == []


def test_the_temporary_name_is_a_hidden_sibling_keeping_the_last_suffix(tmp_path):
    target = tmp_path / "compile.pt.trace.json.gz"
    tmp = partial_name(target)
    assert tmp.parent == tmp_path
    assert tmp.name.startswith(".compile.pt.trace.json.gz" + PARTIAL_MARK)
    assert tmp.suffix == ".gz"
    assert not tmp.name.endswith(".pt.trace.json.gz")  # never mistaken for a finished trace
    assert partial_name(target) != tmp


def test_remove_partials_removes_only_temporaries(tmp_path):
    keep = [tmp_path / "manifest.json", tmp_path / "eager.pt.trace.json.gz"]
    gone = [partial_name(p) for p in keep]
    for p in keep + gone:
        p.write_bytes(b"x")
    assert remove_partials(tmp_path) == sorted(gone)
    assert sorted(tmp_path.iterdir()) == sorted(keep)


def test_the_manifest_is_written_through_a_temporary(tmp_path):
    manifest.write_manifest(tmp_path, {"schema": 1, "modes": {}})
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"schema": 1, "modes": {}}
    assert leftovers(tmp_path) == []


# -- the profiler's trace: exported to a temporary name, checked, then renamed ------------------


def test_a_profiled_run_leaves_one_complete_checked_trace(tmp_path):
    pytest.importorskip("torch")
    from traceviz.collect import tracing

    path = tmp_path / "eager.pt.trace.json.gz"
    calls = []
    window = tracing.profile_steps(lambda: calls.append(sum(range(100))), path, cuda=False,
                                   metadata={"mode": "eager"})
    assert window.step_ms > 0 and window.adjacent_unprofiled_ms > 0
    assert window.inflation == window.step_ms / window.adjacent_unprofiled_ms
    adjacent = tracing.ADJACENT_WINDOWS * tracing.ACTIVE_STEPS
    assert len(window.step_intervals_ms) == tracing.ACTIVE_STEPS
    assert len(window.adjacent_intervals_ms) == adjacent
    profiled = tracing.WAIT_STEPS + tracing.WARMUP_STEPS + tracing.ACTIVE_STEPS
    assert len(calls) == adjacent + profiled  # the unprofiled windows come before the profiler
    assert tracing.check_trace(path).steps == tracing.ACTIVE_STEPS
    with gzip.open(path, "rt") as fh:
        assert json.load(fh)["traceviz"] == {"mode": "eager"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_step_that_raises_while_profiled_leaves_no_trace(tmp_path):
    pytest.importorskip("torch")
    from traceviz.collect import tracing

    calls = []

    def step() -> None:
        calls.append(1)
        adjacent = tracing.ADJACENT_WINDOWS * tracing.ACTIVE_STEPS
        if len(calls) == adjacent + tracing.WAIT_STEPS + tracing.WARMUP_STEPS + 2:
            raise RuntimeError("boom in an active step")

    with pytest.raises(RuntimeError, match="boom"):
        tracing.profile_steps(step, tmp_path / "eager.pt.trace.json.gz", cuda=False, metadata={})
    assert list(tmp_path.iterdir()) == []


def test_a_truncated_export_is_caught_and_never_takes_the_final_name(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    import torch.profiler

    from traceviz.collect import tracing

    def truncated_export(self, path: str) -> None:
        data = gzip.compress(json.dumps({"traceEvents": [{"ph": "X"}] * 100}).encode())
        Path(path).write_bytes(data[: len(data) // 2])  # as if the disk filled up mid-write

    monkeypatch.setattr(torch.profiler.profile, "export_chrome_trace", truncated_export)
    with pytest.raises(EOFError):
        tracing.profile_steps(lambda: None, tmp_path / "eager.pt.trace.json.gz", cuda=False,
                              metadata={})
    assert list(tmp_path.iterdir()) == []


def test_inflation_is_undefined_when_the_adjacent_unprofiled_time_is_zero():
    from traceviz.collect.tracing import ProfiledWindow

    assert ProfiledWindow((1.0,), (0.0, 0.0, 0.0)).inflation is None


def test_inflation_is_the_ratio_of_median_step_times_so_one_slow_step_does_not_decide_it():
    from traceviz.collect.tracing import INFLATION_STATISTIC, ProfiledWindow, TraceCheck

    # one 10 ms step (a buffer flush) among 1.5 ms ones: the mean would be 3.3 ms
    window = ProfiledWindow((1.5, 10.0, 1.5, 1.4, 1.6), (0.5, 0.4, 0.6, 9.0))
    assert window.step_ms == 1.5
    assert window.adjacent_unprofiled_ms == 0.55  # even count: the two middle ones' mean
    record = TraceCheck(steps=5, gpu_activities=0).profiled("eager.pt.trace.json.gz", window)
    assert record["inflation"] == 1.5 / 0.55 and record["adjacent_unprofiled_ms"] == 0.55
    assert record["statistic"] == INFLATION_STATISTIC == "median step"
    assert record["step_intervals_ms"] == [1.5, 10.0, 1.5, 1.4, 1.6]
    assert record["adjacent_intervals_ms"] == [0.5, 0.4, 0.6, 9.0]
