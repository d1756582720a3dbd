"""The straggler confirmation's calibration cells, for ``docs/comparison.md``'s generated prose.

``python -m scripts.straggler_facts`` runs the cells of ``tests/test_straggler_confirmation.py``
(the same :func:`~tests.test_straggler_confirmation.found_share` and
:func:`~tests.test_straggler_confirmation.named_share`: 100 seeds of 15 lockstep blocks, 2000
resamples) and prints JSON for the ``json-format`` filter; every share is the fraction (0–1) of
the seeds whose rank the check confirms as the straggler, over 2 and 4 ranks and a per-process
host offset τ of 0 and 5 % of the step:

* ``injected_30``: ``[lowest, highest]``, a host delay of 30 % of the step, noise 5–10 %;
* ``injected_large``: ``[lowest, highest]``, delays of 50 % and 200 %, noise 5–20 %;
* ``injected_10``: the highest, a delay of 10 % with 5 % noise (within the processes' spread);
* ``symmetric``: ``[lowest, highest]``, no delay, noise 5–20 %: the slowest process named;
* ``symmetric_share_5``: the same with τ = 5 % and 5 % noise on 4 ranks, judged at a share of
  0.05 (the default before 2026-11-28).

Needs the test suite (it imports it) but no data: a few seconds on a laptop.
"""

from __future__ import annotations

import json

from tests.test_straggler_confirmation import found_share, named_share

RANKS = (2, 4)
TAUS = (0.0, 0.05)


def _range(shares: list[float]) -> list[float]:
    return [min(shares), max(shares)]


def facts() -> dict[str, list[float] | float]:
    """The calibration shares the page quotes (fractions of the seeds)."""
    return {
        "injected_30": _range([found_share(r, 0.3, s, tau=t) for r in RANKS for t in TAUS
                               for s in (0.05, 0.1)]),
        "injected_large": _range([found_share(r, d, s, tau=t) for r in RANKS for t in TAUS
                                  for d in (0.5, 2.0) for s in (0.05, 0.1, 0.2)]),
        "injected_10": max(found_share(r, 0.1, 0.05, tau=t) for r in RANKS for t in TAUS),
        "symmetric": _range([named_share(r, s, t) for r in RANKS for t in TAUS
                             for s in (0.05, 0.1, 0.2)]),
        "symmetric_share_5": named_share(4, 0.05, 0.05, min_share=0.05),
    }


if __name__ == "__main__":
    print(json.dumps(facts()))
