"""What "noisy" beside a step time means, for every report that prints it."""

from __future__ import annotations

from traceviz.vocab import NOISY_SPREAD

#: The legend shown under a table with a noisy step time (the definition is
#: :func:`traceviz.collect.timing.summarize`'s).
NOISY_LEGEND = (f"noisy: the step time varies: its p10–p90 spread is more than "
                f"{NOISY_SPREAD:.0%} of its median ((p90 − p10) / median > {NOISY_SPREAD:g})")
