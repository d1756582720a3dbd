"""The straggler confirmation's calibration cells, for ``docs/comparison.md``'s generated prose.

``python -m scripts.straggler_facts`` runs the cells of ``tests/test_straggler_confirmation.py``
(the same :func:`~tests.test_straggler_confirmation.found_share`: 100 seeds of 15 lockstep
blocks, 2000 resamples) and prints JSON for the ``json-format`` filter; every share is the
fraction (0–1) of the seeds whose last rank the check confirms as the straggler:

* ``injected_10``: ``[lowest, highest]`` over 2 and 4 ranks of a host delay of 10 % of the
  step with 5 % noise;
* ``injected_10_min_share_tenth``: the same cell (2 ranks) judged with a ``straggler_min_share``
  of 0.1 instead of the default;
* ``injected_large``: ``[lowest, highest]`` over 2 and 4 ranks, delays of 50 % and 200 % of the
  step, noise 5–20 %;
* ``symmetric``: ``[lowest, highest]`` over 2 and 4 ranks with no delay and 10–20 % noise.

Needs the test suite (it imports it) but no data: a second or two on a laptop.
"""

from __future__ import annotations

import json

from tests.test_straggler_confirmation import found_share

RANKS = (2, 4)


def _range(shares: list[float]) -> list[float]:
    return [min(shares), max(shares)]


def facts() -> dict[str, list[float] | float]:
    """The calibration shares the page quotes (fractions of the seeds)."""
    return {
        "injected_10": _range([found_share(r, 0.1, 0.05) for r in RANKS]),
        "injected_10_min_share_tenth": found_share(2, 0.1, 0.05, min_share=0.1),
        "injected_large": _range([found_share(r, d, s) for r in RANKS for d in (0.5, 2.0)
                                  for s in (0.05, 0.1, 0.2)]),
        "symmetric": _range([found_share(r, 0.0, s) for r in RANKS for s in (0.1, 0.2)]),
    }


if __name__ == "__main__":
    print(json.dumps(facts()))
