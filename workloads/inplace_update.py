"""A step that writes its result into one of its inputs: CUDA-graph trees refuse it.

``out`` is a preallocated buffer passed in as an input; the step overwrites it
(``torch.mul(x, 2, out=out)``, then four in-place ops) and returns it. Nothing reads the old
value, so every mode computes the same thing, but the step *mutates an input*:

* ``reduce-overhead`` / ``max-autotune``: Inductor skips CUDA graphs ("skipping cudagraphs due
  to mutated inputs", recorded in the manifest with where the mutation is) and runs the fused
  kernel without a graph: the launch-overhead win that mode promises does not happen.
* ``cudagraph`` (manual): captures fine, but copies both inputs into the graph's static
  buffers every step: 1 graph launch + 2 input copies instead of 5 kernel launches.
* ``compile``: one fused kernel (plus the copy back into ``out``).

4,096 floats: launch-bound, so launches decide the step time.
"""

import torch

DESCRIPTION = "5 pointwise ops written into an input buffer (mutated input: cudagraphs skipped)"
RTOL = 1e-4
ATOL = 1e-5

N = 4096


def make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]:
    """The data ``x`` and the output buffer ``out`` the step overwrites."""
    return torch.randn(N, device=device), torch.empty(N, device=device)


def step(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``out = tanh(0.5 * (sin(2x) + x))``, computed in ``out``."""
    torch.mul(x, 2.0, out=out)
    out.sin_()
    out.add_(x)
    out.mul_(0.5)
    out.tanh_()
    return out
