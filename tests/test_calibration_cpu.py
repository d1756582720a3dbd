"""End to end on the CPU: the calibration cells recover their injected effects.

The calibration tier (``@pytest.mark.calibration``): ``scripts/test --all`` (and so
``.ci/run``) runs it alone, after every other tier, because its truths are wall time. The cells
(:mod:`benchmarks.calibration.cells`) are every effect whose CPU truth holds on a quiet 2-core
machine in ``docs/calibration.md``'s standing table — a host busy-wait of 10, 50 and 200 % of
the step, the tail in 8 ops instead of 1 (``launches``) and its 9-op chain as 2 (``fused``),
each repeated until it is 10 % of the step, and one more ``tanh(y @ w)`` round — at 200 µs,
2 ms and 20 ms steps, in eager, with
the device probe timing the base and the effects as ``benchmarks.calibration.run`` does. The
bar: the direction right in every cell (on CI's VM an inconclusive verdict whose paired CI
holds the expected change is accepted: unresolved, never the wrong way), and the size within
±25 % or 10 µs — or, on whatever
VM CI gives, the truth inside the paired change's own 95 % CI (a 2 ms busy-wait on a 26 ms
step read +2.8 ms with a CI of +1.6 to +3.6 ms) — in at least 90 %. A cell that misses is
measured once more and its second score stands. The committed table
(``docs/calibration.md``) is scored on the ±25 % bar alone.
(``launches`` and ``fused`` joined on 2026-11-28, once their truths were timed within a loop of
the step: timed alone, op dispatch on this VM differed from the same ops within the step by up
to 2×.)

The truth is CPU time, and it is wall time only while the process has a core to itself: on an
oversubscribed machine every CPU µs costs about (load / cores) µs of wall time (at a load of
8–9 on 2 cores a 250 µs busy-wait read +1,035 µs and a 1,000 µs one +3,899 µs). So the test
skips where the 1-minute load average exceeds the core count while a cell ran (the runner
waits up to :data:`LOAD_WAIT_S` before each cell for it to fall, and records it per cell).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

from benchmarks.calibration import run
from benchmarks.calibration.score import change_ci_ns

#: Longest wait, before each cell, for the load average to fall to the core count (s).
LOAD_WAIT_S = 120
EFFECTS = "host10,host50,host200,launches,fused,gpu"
TARGETS_US = "200,2000,20000"


def _run_cells(out: Path, cores: int, cells: list[str] | None = None) -> list[dict]:
    """The cells' scores from one ``benchmarks.calibration.run`` into ``out`` (``cells``: only
    these, by name)."""
    assert run.main(["--device", "cpu", "--out", str(out), "--targets-us", TARGETS_US,
                     "--effects", EFFECTS, "--modes", "eager", "--timing-budget-s", "2",
                     "--max-load", str(cores), "--load-wait-s", str(LOAD_WAIT_S),
                     *(["--cells", ",".join(cells)] if cells else [])]) == 0
    (results,) = out.glob("calibration-cpu-*.json")
    scores = json.loads(results.read_text())["scores"]
    for s in scores:
        print(s["cell"], s["mode"], "pass" if s["passed"] else "MISS", "; ".join(s["reasons"]))
    return scores


def _accepted(s: dict) -> bool:
    """The bar of the module doc for one cell × mode (direction, bounds and size)."""
    size = s["checks"].get("size")
    return ((bool(s["checks"]["direction"]) or _unresolved(s)) and bool(s["checks"]["bounded"])
            and (size is None or bool(size) or _within_ci(s)))


@pytest.mark.calibration
def test_injected_effects_are_recovered_on_the_cpu_at_three_step_sizes(tmp_path: Path) -> None:
    """A cell that misses the bar is measured once more, in a run of its own, and its second
    score stands: a noisy moment of a shared VM can move one cell's paired blocks, while a rule
    (or a truth) that is wrong misses both times."""
    cores = os.cpu_count() or 1
    scores = _run_cells(tmp_path / "out", cores)
    missed = sorted({s["cell"] for s in scores if not _accepted(s)})
    if missed:
        again = {s["cell"]: s for s in _run_cells(tmp_path / "again", cores, missed)}
        scores = [again.get(s["cell"], s) for s in scores]
    peak = max(max(s["load_start_1m"], s["loadavg_1m"]) for s in scores)
    if peak > cores:
        pytest.skip(f"CPU oversubscribed while a cell ran (load {peak:.1f} on {cores} cores): "
                    "wall-clock truths do not hold")
    assert len(scores) == 18
    assert all(s["checks"]["direction"] or _unresolved(s) for s in scores), [
        s["reasons"] for s in scores]
    assert all(s["checks"]["bounded"] for s in scores), [s["reasons"] for s in scores]
    sized = [bool(s["checks"]["size"]) or _within_ci(s) for s in scores
             if s["checks"].get("size") is not None]
    assert len(sized) == 18 and sum(sized) >= 0.9 * len(sized), [s["reasons"] for s in scores]


def _unresolved(s: dict) -> bool:
    """An inconclusive verdict whose paired 95 % CI holds the expected change: the measurement
    could not resolve it here, and said so (never the opposite direction)."""
    rec, expected = s.get("recovered") or {}, s.get("expected_delta_step_ns")
    bounds = change_ci_ns(rec)
    if rec.get("verdict") != "inconclusive" or expected is None or bounds is None:
        return False
    return bounds[0] <= expected <= bounds[1]


def _within_ci(s: dict) -> bool:
    """The injected truth lies inside the paired change's 95 % CI (the scorer's resolution
    context): the measurement agrees with the truth as closely as it can resolve."""
    return any("inside the paired change's CI" in c for c in s.get("context", []))
