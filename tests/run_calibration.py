"""Calibration of the two-run verdict (``compare RUN_A RUN_B``) on simulated runs (seeded, CPU).

The method (``docs/comparison.md``, "Two runs"):

* a run times ``MODES`` modes, each paired against eager in a process of its own; process
  ``k`` runs everything ``p_k`` times slower than typical, ``p_k`` lognormal with
  ``sigma_process`` (the process-to-process spread: machine state, clocks, allocator);
* in process ``k``, ``PAIRS`` pairs: eager blocks ``eager_ms × p_k × e`` and mode blocks
  ``mode_ms_k × p_k × e``, ``e`` lognormal with ``sigma_block`` (every block independent);
* runs A and B are drawn independently (new processes, new noise); B may scale one mode's true
  time (``slowdown``);
* each mode's verdict is the real code's: :func:`traceviz.analyze.review.run_speed.mode_timing` on
  the simulated manifest ``modes``, then :func:`~traceviz.analyze.review.run_speed.run_speed_change`
  (2,000 resamples, seed 0, ``min_speedup`` 0.03).

``sigma`` for a p10–p90 spread ``s`` of the median: ``asinh(s / 2) / z90``.
Run ``python -m tests.run_calibration`` to print the rates quoted in the docs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from traceviz.analyze.review.run_speed import mode_timing, run_speed_change

Z90 = 1.2815515655446004
MODES, PAIRS, TRIALS, MIN_SPEEDUP = 6, 20, 200, 0.03
EAGER_MS = 1.0
MODE_MS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.2)


def sigma(spread: float) -> float:
    """Lognormal sigma whose p10–p90 spread is ``spread`` of the median."""
    return float(np.arcsinh(spread / 2) / Z90)


@dataclass(frozen=True)
class Scenario:
    name: str
    block_spread: float  # p10–p90 of one block's noise, relative
    process_spread: float  # p10–p90 of the process factor, relative
    slowdown: float = 1.0  # B's true time of mode "m0" / A's


def simulate_run(rng: np.random.Generator, s: Scenario, slow: float) -> dict[str, object]:
    """One run's manifest ``modes``: eager and ``MODES`` paired modes (mode m0 ``× slow``)."""
    modes: dict[str, object] = {"eager": {"status": "ok"}}
    sb, sp = sigma(s.block_spread), sigma(s.process_spread)
    for k in range(MODES):
        p = float(np.exp(rng.normal(0, sp)))
        true = MODE_MS[k] * (slow if k == 0 else 1.0)
        base = EAGER_MS * p * np.exp(rng.normal(0, sb, PAIRS))
        mode = true * p * np.exp(rng.normal(0, sb, PAIRS))
        modes[f"m{k}"] = {"status": "ok", "paired": {
            "baseline": "eager", "baseline_block_ms": base.tolist(),
            "mode_block_ms": mode.tolist()}}
    return modes


def run_scenario(s: Scenario, trials: int = TRIALS, seed: int = 1) -> dict[str, Counter[str]]:
    """Per mode, the verdicts over ``trials`` simulated pairs of runs."""
    rng = np.random.default_rng(seed)
    out: dict[str, Counter[str]] = {m: Counter() for m in ["eager", *(f"m{k}" for k in
                                                                      range(MODES))]}
    for _ in range(trials):
        a, b = simulate_run(rng, s, 1.0), simulate_run(rng, s, s.slowdown)
        for m in out:
            ta, tb = mode_timing(a, m, "eager"), mode_timing(b, m, "eager")
            assert ta is not None and tb is not None
            out[m][run_speed_change(ta, tb, MIN_SPEEDUP).status] += 1
    return out


QUIET = Scenario("same code, quiet GPU (blocks 2 %, processes 1 %)", 0.02, 0.01)
QUIET_SLOWER = Scenario("m0 1.2× slower, quiet GPU", 0.02, 0.01, 1.2)
SCENARIOS = (
    QUIET, QUIET_SLOWER,
    Scenario("same code, blocks 5 %, processes 1 %", 0.05, 0.01),
    Scenario("same code, noisy shared host (blocks 30 %, processes 20 %)", 0.30, 0.20),
    Scenario("m0 1.2× slower, noisy shared host", 0.30, 0.20, 1.2),
)


def main() -> None:
    for s in SCENARIOS:
        res = run_scenario(s)
        others = sum((c for m, c in res.items() if m != "m0"), Counter())
        n = sum(others.values())
        print(f"{s.name}\n  m0: " + ", ".join(f"{k} {v / TRIALS:.1%}" for k, v in
                                             sorted(res['m0'].items()))
              + "\n  other modes: " + ", ".join(f"{k} {v / n:.1%}" for k, v in
                                                sorted(others.items())))


if __name__ == "__main__":
    main()
