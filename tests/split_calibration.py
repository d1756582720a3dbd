"""Calibration of the launch and fusion verdicts on the unprofiled split (seeded, CPU only).

The method (``docs/comparison.md``, "Calibration of the split verdicts"):

* each side of a pair has a true host issue time ``H`` and GPU time ``G`` per step (ms); a
  block of ``n = ITERS`` steps draws ``h = H × e_h`` and ``g = G × e_g`` (lognormal noise, each
  with a p10–p90 spread of 30 % of its median, as in :mod:`tests.calibration`) and lasts
  ``p = max(h, g) + min(h, g) / n`` per step: the slower of host and GPU sets the pace, and the
  other adds one step's worth at the block's start or end. Its recorded issue time is ``h``.
* the pair count comes from the paired protocol (:func:`tests.calibration.run_protocol`: 15
  pairs, then 10 more until the CI is within ±5 % or 100 pairs);
* each trial's blocks go, as a manifest ``paired`` block, through the real code: the speed
  verdict (:mod:`traceviz.analyze.compare.speed`), the split
  (:func:`traceviz.analyze.compare.unprofiled.split_from_paired`), the unprofiled waterfall total,
  and the fusion and launch verdicts, with lean-trace inputs built from ``G`` (GPU busy per step,
  kernel counts as the scenario says, a step-to-step busy spread of 5 %).

Run ``python -m tests.split_calibration`` to print the rates quoted in the docs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from tests.calibration import SIGMA_30, run_protocol
from traceviz.analyze.compare.launch_unprofiled import launch_verdict
from traceviz.analyze.compare.speed import SpeedEvidence, speed_verdict
from traceviz.analyze.compare.unprofiled import split_from_paired
from traceviz.analyze.stats import paired_speedup
from traceviz.analyze.verdicts import Thresholds, VerdictInputs, fusion_verdict

ITERS = 100
MAX_PAIRS = 100


@dataclass(frozen=True)
class Side:
    """True per-step host issue and GPU time (ms) and kernels per step of one side."""

    host_ms: float
    gpu_ms: float
    kernels: int


@dataclass(frozen=True)
class Scenario:
    name: str
    baseline: Side
    mode: Side
    seed: int
    trials: int = 200


def blocks(rng: np.random.Generator, side: Side, trials: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-step period and issue time of ``trials × MAX_PAIRS`` blocks (module doc)."""
    h = side.host_ms * rng.lognormal(0.0, SIGMA_30, size=(trials, MAX_PAIRS))
    g = side.gpu_ms * rng.lognormal(0.0, SIGMA_30, size=(trials, MAX_PAIRS))
    return np.maximum(h, g) + np.minimum(h, g) / ITERS, h


def _inputs(name: str, side: Side) -> VerdictInputs:
    busy_ns = side.gpu_ms * 1e6
    return VerdictInputs(
        mode=name, kernels=side.kernels, activities=side.kernels, launches=side.kernels,
        gpu_busy_ns=busy_ns, busy_spread_ns=0.05 * busy_ns, host_wait_ns=0.0,
        period_ns=max(side.host_ms, side.gpu_ms) * 1e6, cpu_ns=side.host_ms * 1e6,
        input_copies=0.0, input_copy_ns=0.0, correctness_ok=True, inflation=None,
        top_family=None, top_family_share=None,
    )


def run(s: Scenario, t: Thresholds | None = None) -> tuple[Counter[str], Counter[str]]:
    """(launch statuses, fusion statuses) over the scenario's trials."""
    t = t or Thresholds()
    rng = np.random.default_rng(s.seed)
    base_p, base_h = blocks(rng, s.baseline, s.trials)
    mode_p, mode_h = blocks(rng, s.mode, s.trials)
    pairs = run_protocol(base_p, mode_p).pairs
    base_in, mode_in = _inputs("eager", s.baseline), _inputs("mode", s.mode)
    launch: Counter[str] = Counter()
    fusion: Counter[str] = Counter()
    for i, n in enumerate(pairs):
        b, m = base_p[i, :n].tolist(), mode_p[i, :n].tolist()
        est = paired_speedup(b, m)
        paired = {"baseline_block_ms": b, "mode_block_ms": m,
                  "baseline_issue_ms": base_h[i, :n].tolist(),
                  "mode_issue_ms": mode_h[i, :n].tolist(),
                  "iters_baseline": ITERS, "iters_mode": ITERS, **est.as_dict()}
        ev = SpeedEvidence("paired", est.speedup, est.ci_low, est.ci_high, est.level,
                           est.pairs, "converged")
        speed = speed_verdict("mode", "eager", ev, t)
        split = split_from_paired(paired, t.host_bound_max_lag_steps)
        assert split is not None
        base_ms = split.baseline.period_ms
        saved_ns = (base_ms - base_ms / est.speedup) * 1e6
        launch[launch_verdict(mode_in, base_in, speed, split, t).status] += 1
        fusion[fusion_verdict(mode_in, base_in, speed, t, unprofiled_saved_ns=saved_ns).status] += 1
    return launch, fusion


HOST_BOUND = Side(host_ms=1.0, gpu_ms=0.3, kernels=20)
GPU_BOUND = Side(host_ms=0.3, gpu_ms=1.0, kernels=20)
SCENARIOS = (
    Scenario("host-bound baseline, the mode cuts host issue time 40 %", HOST_BOUND,
             Side(host_ms=0.6, gpu_ms=0.3, kernels=20), seed=11),
    Scenario("host-bound baseline, the mode becomes GPU-bound (graph replay)", HOST_BOUND,
             Side(host_ms=0.05, gpu_ms=0.28, kernels=20), seed=12),
    Scenario("GPU-bound baseline, the mode fuses 20 → 5 kernels and cuts GPU time 40 %",
             GPU_BOUND, Side(host_ms=0.1, gpu_ms=0.6, kernels=5), seed=13),
    Scenario("equal modes, host-bound", HOST_BOUND, HOST_BOUND, seed=14),
    Scenario("equal modes, GPU-bound", GPU_BOUND, GPU_BOUND, seed=15),
)


def main() -> None:
    for s in SCENARIOS:
        launch, fusion = run(s)
        def rates(counts: Counter[str], n: int = s.trials) -> str:
            return ", ".join(f"{k} {v / n * 100:.1f} %" for k, v in sorted(counts.items()))

        print(f"{s.name} ({s.trials} trials): launch {rates(launch)}; fusion {rates(fusion)}")


if __name__ == "__main__":
    main()
