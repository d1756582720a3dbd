"""Adversarial traces for host-wait attribution: deep nesting with many gaps (ns).

Two shapes (issue 37, item 8), both one CPU thread under one ``ProfilerStep#1``:

* :func:`deep_chain`: ``depth`` CPU ops each enclosing the next, with ``launches`` kernel
  launches inside the innermost one; every host-wait gap has the whole chain open.
* :func:`deep_stacks`: ``stacks`` such chains of ``depth`` ops one after another, with
  ``launches_per_stack`` launches inside each innermost op.

Op names repeat every ``names`` levels (default: all distinct, the most inclusive sources).
Each launch call runs 1 µs from its start; its kernel starts 2 µs after the call and runs
1 µs; launches are 5 µs apart, so each gap is 2 µs of waiting window and 2 µs of launch tail.

``python -m tests.deep_nesting OUT {chain,stacks}`` writes the 3 MB / 29 MB cases of the issue.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.kineto import TraceBuilder

#: Spacing of launches (ns); a kernel starts 2 µs after its launch call and runs 1 µs.
LAUNCH_EVERY = 5_000


def _stack(b: TraceBuilder, t0: int, depth: int, launches: int, names: int, tag: str) -> int:
    """``depth`` nested ops opening 1 ns apart from ``t0``, ``launches`` launches inside the
    innermost; returns the instant after the outermost op closes."""
    inner_start = t0 + depth
    first = inner_start + 1_000
    inner_end = first + launches * LAUNCH_EVERY
    for d in range(depth):
        b.cpu_op(f"{tag}op{d % names}", t0 + d, (inner_end + depth - d) - (t0 + d))
    for j in range(launches):
        at = first + j * LAUNCH_EVERY
        b.kernel(launch_ts=at, ts=at + 2_000, dur=1_000)
    return inner_end + depth + 1_000


def deep_chain(depth: int = 20_000, launches: int = 2_000, names: int | None = None
               ) -> TraceBuilder:
    """One chain of ``depth`` nested ops with ``launches`` launches inside the innermost."""
    b = TraceBuilder()
    end = _stack(b, 1_000, depth, launches, names or depth, "")
    b.step(1, 0, end + 1_000)
    return b


def deep_stacks(stacks: int = 500, depth: int = 200, launches_per_stack: int = 4,
                names: int | None = None) -> TraceBuilder:
    """``stacks`` chains of ``depth`` nested ops, one after another."""
    b = TraceBuilder()
    t = 1_000
    for s in range(stacks):
        t = _stack(b, t, depth, launches_per_stack, names or depth, f"s{s % 8}.")
    b.step(1, 0, t + 1_000)
    return b


def main(argv: list[str]) -> None:
    out, shape = Path(argv[0]), argv[1]
    b = deep_chain() if shape == "chain" else deep_stacks()
    b.write(out, gzipped=out.suffix == ".gz")
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB, {len(b.events)} events")


if __name__ == "__main__":
    main(sys.argv[1:])
