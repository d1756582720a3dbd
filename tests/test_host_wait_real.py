"""Host-wait sources on real traces: the sum invariant everywhere, and the eager optimizer of
the reduce-overhead training step among the top sources."""

from __future__ import annotations

from pathlib import Path

import pytest

import traceviz
from tests.conftest import ROOT, gpu_traces, shared_hta_traces

REPORT_TRACES = sorted((ROOT / "reports").glob("*/*.pt.trace.json.gz")) + sorted(
    (ROOT / "tests/data/h200").glob("*/*.pt.trace.json.gz"))
ALL = REPORT_TRACES + gpu_traces() + shared_hta_traces()


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_self_time_sums_to_host_plus_sync_wait_exactly(path: Path) -> None:
    a = traceviz.analyze(traceviz.load(path))
    h = a.host_wait_sources
    assert h is not None
    assert h.total_ns == a.totals.host_wait_ns + a.totals.sync_wait_ns
    assert sum(r.host_wait_ns for r in h.table().self) == h.total_ns
    for i, s in enumerate(a.steps):
        t = h.table(i)
        assert sum(r.host_wait_ns for r in t.self) == s.host_wait_ns + s.sync_wait_ns
        # Inclusive rows never exceed the scope's host wait (each ns counted once per source).
        assert all(r.host_wait_ns <= t.total_ns for r in t.inclusive)


TRAIN_RO = ROOT / "tests/data/h200" / "train_step" / "reduce-overhead.pt.trace.json.gz"


@pytest.mark.skipif(not TRAIN_RO.exists(), reason="train_step trace not in this checkout")
def test_eager_optimizer_under_reduce_overhead_is_a_top_three_source() -> None:
    # workloads/train_step.py: the SGD-momentum loop runs under torch.compiler.disable, which
    # the trace shows as compiled region 2/0 holding the eager aten::mul_ / aten::add_ ops.
    a = traceviz.analyze(traceviz.load(TRAIN_RO))
    h = a.host_wait_sources
    assert h is not None
    top3 = [r.source for r in h.table().inclusive[:3]]
    assert "Torch-Compiled Region: 2/0" in top3
    opt = {r.source: r for r in h.table().inclusive}["Torch-Compiled Region: 2/0"]
    assert opt.share is not None and opt.share > 0.2
    eager_ops = {r.source for r in h.table().self if "2/0 › aten::" in r.source}
    assert eager_ops == {"Torch-Compiled Region: 2/0 › aten::add_",
                         "Torch-Compiled Region: 2/0 › aten::mul_"}
