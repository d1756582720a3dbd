"""A mode that replays CUDA graphs: the old → new band is at least the spread of two captures
of the same kernels (``CAPTURE_SPREAD_NS``), so a difference between two captures is not
called a change (docs/comparison.md, Two versions of a step)."""

from __future__ import annotations

import pytest

from traceviz.analyze.model import PerStep
from traceviz.analyze.review.run_diff import RunData, RunModeData
from traceviz.analyze.review.version_diff import (
    CAPTURE_SPREAD_NS,
    compare_versions,
    entry_capture_spread_ns,
    version_speed,
)
from traceviz.report.version_report import speed_rows

MIN = 0.03


def against(speedup: float, low: float, high: float, old_ms: float) -> dict:
    return {"status": "ok", "paired": {
        "baseline_block_ms": [old_ms] * 3, "mode_block_ms": [old_ms / speedup] * 3,
        "speedup": speedup, "ci_low": low, "ci_high": high, "level": 0.95,
        "stopped": "converged"}}


def per_step(graph_launches: float) -> PerStep:
    return PerStep(kernels=16, launches=3, graph_launches=graph_launches, activities=16,
                   period_ns=28_600, gpu_busy_ns=20_000, host_wait_ns=0, sync_wait_ns=0,
                   graph_internal_ns=0, other_idle_ns=0, cpu_ns=0, cpu_bound_share=None)


def run(path: str, graphs: float, record: dict | None = None) -> RunData:
    entry = {"status": "ok", **({"against": record} if record else {})}
    modes = {"cudagraph": entry}
    return RunData(path, {"workload": {"path": f"/w/{path}.py"}, "modes": modes},
                   (RunModeData("cudagraph", entry, per_step(graphs)),))


# The calibration cell host10-200us (H200): a host busy-wait that the graph does not replay,
# old 28.6 µs/step, new 4 % slower with a tight CI (+1.15 µs).
CELL = (0.9612, 0.9598, 0.9623, 28.6e-3)


def test_a_graph_mode_calls_a_capture_sized_difference_unchanged():
    vc = compare_versions(run("old", 1.0), run("new", 1.0, against(*CELL)))
    m = vc.mode("cudagraph")
    assert m.verdict == "unchanged"
    assert m.speed.threshold == pytest.approx(CAPTURE_SPREAD_NS / 28_600)
    assert "graph captures" in speed_rows(vc)[0][1]


def test_the_same_difference_without_graph_replays_is_slower():
    vc = compare_versions(run("old", 0.0), run("new", 0.0, against(*CELL)))
    m = vc.mode("cudagraph")
    assert m.verdict == "slower" and m.speed.threshold == MIN
    assert speed_rows(vc)[0][1] == "slower"


def test_graph_replays_on_either_side_widen_the_band():
    assert compare_versions(run("old", 1.0), run("new", 0.0, against(*CELL))).mode(
        "cudagraph").verdict == "unchanged"


def test_a_change_beyond_the_capture_spread_is_still_slower():
    # 28.6 → 40 µs/step (+11.4 µs, 29 %): beyond both bands
    s = 28.6 / 40
    vc = compare_versions(run("old", 1.0), run("new", 1.0, against(s, s - 0.01, s + 0.01,
                                                                     28.6e-3)))
    assert vc.mode("cudagraph").verdict == "slower"


@pytest.mark.parametrize(("old_ms", "band"), [
    (CAPTURE_SPREAD_NS / MIN / 1e6, MIN),           # the spread is exactly min_speedup
    (1.0, MIN),                                     # a long step: min_speedup is wider
    (0.02, CAPTURE_SPREAD_NS / 20_000),             # a 20 µs step: the spread is wider
])
def test_the_band_is_the_wider_of_min_speedup_and_the_spread(old_ms, band):
    s = version_speed(against(1.0, 1.0, 1.0, old_ms), MIN, CAPTURE_SPREAD_NS)
    assert s.threshold == pytest.approx(band)


def test_the_band_edges_are_included_in_unchanged():
    band = CAPTURE_SPREAD_NS / 20_000  # 20 %
    on_edge = version_speed(against(1.0, 1 - band, 1 + band, 0.02), MIN, CAPTURE_SPREAD_NS)
    beyond = version_speed(against(0.7, 0.6, 1 - band - 1e-9, 0.02), MIN, CAPTURE_SPREAD_NS)
    assert on_edge.status == "unchanged" and beyond.status == "slower"


@pytest.mark.parametrize(("summary", "spread"), [
    ({"graph_launches_per_step": 1.0}, CAPTURE_SPREAD_NS),
    ({"graph_launches_per_step": 0.0}, 0.0),
    ({"error": "no trace"}, 0.0),
    (None, 0.0),
])
def test_a_manifest_entry_says_whether_its_mode_replays_graphs(summary, spread):
    assert entry_capture_spread_ns({"analysis_summary": summary}) == spread
