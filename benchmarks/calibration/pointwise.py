"""Gate calibration, before: a pointwise step on 4,096 float32 (``relu(x * 2 + 1)``).

The "before" side of ``benchmarks/gate_repeats.py``; ``pointwise_trig.py`` is the same step
with a sin/cos/exp chain added (the "after" side, about 20–30× slower on a CPU)."""

import torch

DESCRIPTION = "pointwise step on 4096 floats (gate calibration, before)"
RTOL = 1e-4
ATOL = 1e-5

N = 4096
#: Intra-op threads. On a loaded 2-core machine, Inductor's OpenMP region waited 10–30 ms per
#: step for its second thread to be scheduled (a 10 µs step timed as the scheduler's); one
#: thread keeps each step the code's time, and the processes' spread the machine's.
THREADS = 1


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Pin torch to one intra-op thread (:data:`THREADS`), then one float32 vector of :data:`N`
    elements."""
    torch.set_num_threads(THREADS)
    return (torch.randn(N, device=device),)


def step(x: torch.Tensor) -> torch.Tensor:
    """``relu(x * 2 + 1)``."""
    return torch.relu(x * 2 + 1)
