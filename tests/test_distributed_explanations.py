"""Distributed explanations (issue 36): the unprofiled waterfall fits every part into the
unprofiled step, on the bounding rank's trace; a straggler is named only when its lateness
stands out across steps; the headline gives exposed communication once.

Numbers are the issue's 2-GPU sharded MLP (eager 5.42 ms/step with 0.26 ms of compute, its
manual CUDA graph 9.9× faster), written as lean-trace means by hand.
"""

from __future__ import annotations

import pytest

from traceviz.analyze.compare.headline import build_headline
from traceviz.analyze.compare.speed import SpeedEvidence
from traceviz.analyze.compare.waterfall import LeanParts, build_unprofiled_waterfall, fit_to_step
from traceviz.analyze.distributed.bounding import (
    SLOWEST,
    STRAGGLER,
    BoundingRank,
    headline_clause,
)
from traceviz.analyze.distributed.launch import launch_evidence_from_summary
from traceviz.analyze.distributed.metrics import lateness_significant

MS = 1e6
#: The waiting rank's lean trace: its collectives hold the wait for the other rank's host,
#: inflated by the profiler (9 ms of exposed communication in a profiled step of 9.5 ms).
WAITING_EAGER = LeanParts(0.26 * MS, 9.0 * MS, 0.1 * MS, True)
WAITING_GRAPH = LeanParts(0.26 * MS, 0.19 * MS, 0.05 * MS, True)
#: The bounding rank (the straggler): it arrives last, so its collectives barely wait.
BOUNDING_EAGER = LeanParts(0.26 * MS, 0.19 * MS, 0.1 * MS, True)


def waterfall(base: LeanParts, mode: LeanParts, baseline_ms: float = 5.42, speedup: float = 9.9):
    return build_unprofiled_waterfall("cudagraph", None, "eager", None,  # type: ignore[arg-type]
                                      baseline_ms=baseline_ms, speedup=speedup,
                                      issue_saved_ms=5.0, lean=(base, mode))


def test_no_part_is_larger_than_the_longer_step_even_on_an_inflated_wait() -> None:
    w = waterfall(WAITING_EAGER, WAITING_GRAPH)
    longer = max(w.baseline_period_ns, w.period_ns)
    assert all(abs(v) <= longer for v in w.parts.values()), w.parts
    assert sum(w.parts.values()) == pytest.approx(w.delta_ns)
    assert w.lean_scale[0] < 1 and w.lean_scale[1] == 1.0


def test_on_the_bounding_rank_the_time_saved_is_host_overhead() -> None:
    w = waterfall(BOUNDING_EAGER, WAITING_GRAPH)
    assert w.parts["host_overhead_ns"] < 0
    assert w.parts["host_overhead_ns"] == pytest.approx(
        w.delta_ns - w.parts["compute_busy_ns"] - w.parts["exposed_comm_ns"]
        - w.parts["other_idle_ns"])
    assert abs(w.parts["exposed_comm_ns"]) < 0.01 * MS
    assert w.lean_scale == (1.0, 1.0)


@pytest.mark.parametrize(("lean", "step", "want"), [
    (LeanParts(2.0, 1.0, 1.0, True), 10.0, (2.0, 1.0, 1.0, 6.0, 1.0)),  # fits as measured
    (LeanParts(2.0, 6.0, 2.0, True), 6.0, (2.0, 3.0, 1.0, 0.0, 0.5)),  # idle scaled by 4/8
    (LeanParts(8.0, 1.0, 1.0, False), 6.0, (6.0, 0.0, 0.0, 0.0, 0.0)),  # compute cut to P
])
def test_fit_to_step(lean: LeanParts, step: float, want: tuple[float, ...]) -> None:
    parts, scale = fit_to_step(lean, step)
    assert (parts["compute_busy_ns"], parts["exposed_comm_ns"], parts["other_idle_ns"],
            parts["host_overhead_ns"], scale) == want
    assert sum(parts.values()) == step


def test_a_single_gpu_waterfall_that_fits_is_unchanged_by_the_fit() -> None:
    base, mode = LeanParts(300.0, 0.0, 50.0, False), LeanParts(200.0, 0.0, 80.0, False)
    w = waterfall(base, mode, baseline_ms=0.001, speedup=2.0)
    assert w.parts == {"gpu_busy_ns": -100.0, "host_overhead_ns": -430.0,
                       "other_idle_ns": 30.0}


# --- the straggler ------------------------------------------------------------------------------


@pytest.mark.parametrize(("lateness", "named"), [
    ([8_697, 9_288, 10_879, 9_322, 9_491], True),  # ddp_mlp_straggler eager: injected
    ([0, 14, 0, 8, 26], False),  # tp_mlp reduce-overhead, rank 0: the last arriver alternates
    ([15, 13, 0, 30, 0], False),  # tp_mlp cudagraph, rank 1
    ([0, 81, 24, 35, 43], False),  # ddp_mlp cudagraph, rank 0: last in 4 of 5, t = 2.8
    ([1_610, 1_836, 2_197, 2_768, 6_139], True),  # late in every step by ms: t = 3.5
    ([0, 0, 0], False),
    ([5.0], True),  # one step: nothing to weigh it against
])
def test_a_straggler_is_named_when_its_lateness_stands_out_across_steps(
        lateness: list[float], named: bool) -> None:
    assert lateness_significant(lateness) is named


def _summary(steps: list[tuple[int, float]]) -> dict:
    per = [{"rank": r, "host_wait_us_median": 10.0, "comm_wait_us_median": 5.0}
           for r in (0, 1)]
    return {"per_rank": per, "straggler": {"rank": 1}, "slowest_period_us_median": 100.0,
            "step_stragglers": [{"step": i, "rank": r, "lateness_us": late}
                                for i, (r, late) in enumerate(steps)]}


def test_a_manifest_summary_names_its_straggler_only_when_significant() -> None:
    injected = launch_evidence_from_summary(_summary([(1, 9.0), (1, 9.5), (1, 10.0)]))
    assert injected is not None and injected.straggler_rank == 1
    noise = launch_evidence_from_summary(_summary([(1, 15.0), (0, 13.0), (1, 30.0), (0, 9.0)]))
    assert noise is not None and noise.straggler_rank is None


# --- the headline -------------------------------------------------------------------------------


def test_the_headline_gives_exposed_communication_once() -> None:
    w = waterfall(BOUNDING_EAGER, WAITING_GRAPH)
    ranks = (BoundingRank(1, STRAGGLER, 0.186 * MS, BOUNDING_EAGER),
             BoundingRank(0, SLOWEST, 0.194 * MS, WAITING_GRAPH))
    ev = SpeedEvidence("paired", 9.9, 9.5, 10.2, 0.95, 15, "converged")
    text = build_headline("cudagraph", ev, "WIN", w, {}, (), bounding=ranks).text
    assert text.count("exposed communication") <= 1, text
    assert "the parts above are from its trace" in text
    assert "rank 0 bounds the step (no straggler" in text and "baseline: rank 1" in text
    assert "exposed communication on it 186.0 µs/step → 194.0 µs/step" in headline_clause(*ranks)
