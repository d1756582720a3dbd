"""Gate calibration, after: ``pointwise.py``'s step with a sin/cos/exp chain added.

The "after" side of ``benchmarks/gate_repeats.py``: the same inputs, :data:`CHAIN` rounds of
``exp(cos(sin(y)))`` before the ``relu`` (transcendental passes over 4,096 floats: about 20–30×
the ``pointwise.py`` step on a CPU, one thread)."""

import torch

DESCRIPTION = "pointwise step on 4096 floats plus a sin/cos/exp chain (gate calibration, after)"
RTOL = 1e-4
ATOL = 1e-5

N = 4096
#: Intra-op threads. On a loaded 2-core machine, Inductor's OpenMP region waited 10–30 ms per
#: step for its second thread to be scheduled (a 10 µs step timed as the scheduler's); one
#: thread keeps each step the code's time, and the processes' spread the machine's.
THREADS = 1
CHAIN = 2


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Pin torch to one intra-op thread (:data:`THREADS`), then one float32 vector of :data:`N`
    elements (as ``pointwise.py``)."""
    torch.set_num_threads(THREADS)
    return (torch.randn(N, device=device),)


def step(x: torch.Tensor) -> torch.Tensor:
    """``relu(x * 2 + 1)`` with ``exp(cos(sin(·)))`` applied :data:`CHAIN` times first."""
    y = x * 2 + 1
    for _ in range(CHAIN):
        y = torch.exp(torch.cos(torch.sin(y)))
    return torch.relu(y)
