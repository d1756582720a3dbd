"""End to end on the CPU: injected host busy-waits are recovered by ``profile --against``.

Slow (three profiled processes per cell): marked ``slow``. The cells' truths are exact by
construction (a busy-wait of 50 % and 200 % of a nominal 500 µs step), so the probe that sizes
the base is replaced by a fixed one; the base's real size does not change the truth.

The truth is CPU time, and it is wall time only while the process has a core to itself: on an
oversubscribed machine every CPU µs costs about (load / cores) µs of wall time (at a load of
8–9 on 2 cores a 250 µs busy-wait read +1,035 µs and a 1,000 µs one +3,899 µs). So the test
skips where the 1-minute load average exceeds the core count before the run or while a cell ran
(the runner records it per cell, and waits up to :data:`LOAD_WAIT_S` for it to fall).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

from benchmarks.calibration import run
from benchmarks.calibration.score import tolerance_ns

NOMINAL_NS = 500_000.0
#: Longest wait, before each cell, for the load average to fall to the core count (s).
LOAD_WAIT_S = 120
PROBE = {"device": "cpu", "gpu": None, "ladder": {},
         "bases": {"500.0": {"m": 32, "k": 2, "predicted_ns": NOMINAL_NS}},
         "effects": {"500.0": {}}}


@pytest.mark.slow
def test_injected_host_busy_waits_are_recovered_in_the_paired_step_change(
        tmp_path: Path) -> None:
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores:
        pytest.skip(f"CPU oversubscribed (load {load:.1f} on {cores} cores): wall-clock "
                    "truths do not hold")
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(PROBE))
    out = tmp_path / "out"
    assert run.main(["--device", "cpu", "--out", str(out), "--probe", str(probe),
                     "--targets-us", "500", "--effects", "host50,host200", "--modes", "eager",
                     "--timing-budget-s", "2", "--max-load", str(cores), "--load-wait-s",
                     str(LOAD_WAIT_S)]) == 0
    (results,) = out.glob("calibration-cpu-*.json")
    scores = json.loads(results.read_text())["scores"]
    peak = max(max(s["load_start_1m"], s["loadavg_1m"]) for s in scores)
    if peak > cores:
        pytest.skip(f"CPU oversubscribed while a cell ran (load {peak:.1f} on {cores} cores): "
                    "wall-clock truths do not hold")
    assert [(s["cell"], s["mode"]) for s in scores] == [("host50-500us", "eager"),
                                                         ("host200-500us", "eager")]
    for s, fraction in zip(scores, (0.5, 2.0), strict=True):
        rec = s["recovered"]
        injected = fraction * NOMINAL_NS
        assert rec["verdict"] == "slower", s
        assert abs(rec["delta_step_ns"] - injected) <= tolerance_ns(injected), s
        assert s["checks"]["bounded"], s
