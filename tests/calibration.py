"""Calibration of the paired speed verdict on simulated block times (seeded, CPU only).

The method (``docs/comparison.md``, "Calibration"):

* a block's time is ``true_ms × drift(position) × noise``, noise lognormal with
  ``sigma = asinh(0.15) / z90`` so that the p10–p90 spread of a block is 30 % of its median;
* blocks run in ABBA order: pair ``k`` is (baseline, mode) at positions (2k, 2k+1) for even
  ``k`` and (mode, baseline) for odd ``k``; ``drift(pos) = 1 + drift × pos / (2·max_pairs − 1)``
  (a machine that gets ``drift`` slower over the longest run);
* protocol: 15 pairs, then 10 more at a time until the CI half-width is ≤ 5 % or there are
  ``max_pairs`` pairs; the speed status is :func:`traceviz.analyze.compare.speed.paired_status`
  on the last CI (``min_speedup`` 0.03).

The CI is :func:`traceviz.analyze.stats.paired_speedup`'s, computed for many trials at once:
with a fixed seed its resample indices depend only on the pair count, so trials of equal length
share them. ``tests/test_speed_calibration.py`` checks that this gives exactly the same CI.

Run ``python -m tests.calibration`` to print the rates quoted in the docs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.compare.speed import paired_status
from traceviz.analyze.stats import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

Z90 = 1.2815515655446004  # standard normal quantile at 0.9
SIGMA_30 = float(np.arcsinh(0.15) / Z90)  # lognormal sigma: p90 - p10 = 30 % of the median
MIN_PAIRS, STEP_PAIRS, MAX_PAIRS, TARGET_HALF_WIDTH = 15, 10, 100, 0.05
MIN_SPEEDUP = 0.03
_CHUNK = 25  # trials per vectorised bootstrap (bounds memory)


@dataclass(frozen=True)
class Outcome:
    """The result of one scenario: statuses, estimates and pair counts per trial."""

    statuses: tuple[str, ...]
    speedups: np.ndarray
    pairs: np.ndarray

    def rate(self, *statuses: str) -> float:
        return sum(s in statuses for s in self.statuses) / len(self.statuses)


def simulate_blocks(
    rng: np.random.Generator, trials: int, speedup: float, drift: float,
    sigma: float = SIGMA_30, sequential: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and mode block times (ms), shape ``(trials, MAX_PAIRS)``, in pair order.

    ``sequential``: no pairing — all mode blocks first, then all baseline blocks (what timing
    modes in separate runs amounts to), to show what the drift does without ABBA.
    """
    k = np.arange(MAX_PAIRS)
    if sequential:
        mode_pos, base_pos = k, MAX_PAIRS + k
    else:
        even = k % 2 == 0
        base_pos = np.where(even, 2 * k, 2 * k + 1)
        mode_pos = np.where(even, 2 * k + 1, 2 * k)
    span = 2 * MAX_PAIRS - 1

    def factor(pos: np.ndarray) -> np.ndarray:
        return 1.0 + drift * pos / span

    noise = rng.lognormal(0.0, sigma, size=(2, trials, MAX_PAIRS))
    base = 1.0 * factor(base_pos) * noise[0]
    mode = (1.0 / speedup) * factor(mode_pos) * noise[1]
    return base, mode


def batched_ci(ratios: np.ndarray, level: float = DEFAULT_LEVEL,
               resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``paired_speedup``'s (speedup, low, high) for each row of ``ratios`` (trials × pairs)."""
    n = ratios.shape[1]
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    tail = (1.0 - level) / 2.0
    out = np.empty((len(ratios), 3))
    for lo in range(0, len(ratios), _CHUNK):
        part = ratios[lo:lo + _CHUNK]
        medians = np.median(part[:, idx], axis=2)
        out[lo:lo + _CHUNK, 0] = np.median(part, axis=1)
        out[lo:lo + _CHUNK, 1:] = np.quantile(medians, [tail, 1.0 - tail], axis=1).T
    return out


def run_protocol(base: np.ndarray, mode: np.ndarray, adaptive: bool = True) -> Outcome:
    """Apply the stopping rule and the speed rule to every trial (module doc)."""
    trials = len(base)
    ratios = base / mode
    final = np.full((trials, 3), np.nan)
    pairs = np.zeros(trials, dtype=np.int64)
    running = np.arange(trials)
    n = MIN_PAIRS if adaptive else MAX_PAIRS
    while len(running):
        est = batched_ci(ratios[running, :n])
        half = (est[:, 2] - est[:, 1]) / 2.0 / est[:, 0]
        done = (half <= TARGET_HALF_WIDTH) | (n >= MAX_PAIRS)
        final[running[done]] = est[done]
        pairs[running[done]] = n
        running = running[~done]
        n = min(n + STEP_PAIRS, MAX_PAIRS)
    statuses = tuple(paired_status(lo, hi, MIN_SPEEDUP) for _, lo, hi in final)
    return Outcome(statuses, final[:, 0], pairs)


def scenario(seed: int, trials: int, speedup: float, drift: float = 0.0,
             sequential: bool = False, adaptive: bool = True) -> Outcome:
    rng = np.random.default_rng(seed)
    base, mode = simulate_blocks(rng, trials, speedup, drift, sequential=sequential)
    return run_protocol(base, mode, adaptive=adaptive)


SCENARIOS = {
    "identical, 30 % spread": dict(seed=1, trials=200, speedup=1.0),
    "true 1.15x speed-up": dict(seed=2, trials=200, speedup=1.15),
    "identical, 20 % drift, ABBA": dict(seed=3, trials=200, speedup=1.0, drift=0.2),
    "identical, 20 % drift, ABBA, 100 pairs": dict(seed=4, trials=200, speedup=1.0, drift=0.2,
                                                   adaptive=False),
    "identical, 20 % drift, unpaired (mode first)": dict(seed=5, trials=200, speedup=1.0,
                                                         drift=0.2, sequential=True,
                                                         adaptive=False),
}


def main() -> None:
    print(f"lognormal sigma {SIGMA_30:.4f} (p10–p90 spread 30 % of the median per block)")
    for name, kw in SCENARIOS.items():
        o = scenario(**kw)  # type: ignore[arg-type]
        print(f"{name}: WIN {o.rate('WIN') * 100:.1f} %, REGRESSION "
              f"{o.rate('REGRESSION') * 100:.1f} %, NO_WIN {o.rate('NO_WIN') * 100:.1f} %, "
              f"INCONCLUSIVE {o.rate('INCONCLUSIVE') * 100:.1f} %; median speed-up "
              f"{np.median(o.speedups):.3f}; pairs median {int(np.median(o.pairs))}, "
              f"max {int(o.pairs.max())}")


if __name__ == "__main__":
    main()
