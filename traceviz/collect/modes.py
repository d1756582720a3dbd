"""Apply a mode to a workload's step function: the callable that one timed step calls.

Imports torch lazily; used in the child process only. Every returned callable takes the step's
inputs and returns its outputs as a tuple of tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traceviz.collect.mode_names import CUDAGRAPH_TREE_MODES
from traceviz.collect.workload import Workload

#: Side-stream warm-up calls before a manual CUDA-graph capture.
CAPTURE_WARMUP_CALLS = 3

StepFn = Callable[..., tuple[Any, ...]]


def as_outputs(result: Any) -> tuple[Any, ...]:
    """Normalise a step's return value to a tuple of tensors; raise TypeError otherwise."""
    import torch

    outputs = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if not outputs or not all(isinstance(t, torch.Tensor) for t in outputs):
        raise TypeError(
            "step() must return a tensor or a tuple of tensors, got "
            f"{type(result).__name__}"
        )
    return outputs


def _returning_outputs(fn: Callable[..., Any]) -> StepFn:
    def call(*inputs: Any) -> tuple[Any, ...]:
        return as_outputs(fn(*inputs))

    return call


def _compiled(workload: Workload, mode: str, inputs: tuple[Any, ...]) -> StepFn:
    import torch

    kwargs: dict[str, Any] = {} if mode == "compile" else {"mode": mode}
    compiled = torch.compile(workload.step, **kwargs)
    if mode not in CUDAGRAPH_TREE_MODES:
        return _returning_outputs(compiled)
    for index in workload.static_inputs:
        # State updated in place keeps its address: cudagraph trees neither copy it into the
        # graph's buffers nor refuse the graph for mutating it (the documented KV-cache recipe).
        torch._dynamo.mark_static_address(inputs[index])

    def call(*inputs: Any) -> tuple[Any, ...]:
        # Tell cudagraph trees a new iteration starts, so outputs of the last replay may be
        # overwritten (the documented pattern for loops that do not consume outputs).
        torch.compiler.cudagraph_mark_step_begin()
        return as_outputs(compiled(*inputs))

    return call


def _static_copy(t: Any) -> Any:
    """A buffer with ``t``'s value and type that a captured graph can own."""
    import torch

    copy = t.detach().clone()
    if isinstance(t, torch.nn.Parameter):
        return torch.nn.Parameter(copy, requires_grad=t.requires_grad)
    return copy.requires_grad_(t.requires_grad)


class ManualCudaGraph:
    """Manual ``torch.cuda.CUDAGraph`` around a step.

    The first call makes the static input buffers (clones of the per-step inputs; the workload's
    ``STATIC_INPUTS`` state tensors are used in place), warms the step up on a side stream
    (:data:`CAPTURE_WARMUP_CALLS` calls, which also runs lazy initialisation outside capture,
    after which the state is restored), and captures one step. Every call then copies its
    per-step inputs into the static buffers and calls ``replay()``; outputs are the graph's
    static output tensors, overwritten by the next replay.
    """

    def __init__(self, step: Callable[..., Any], static_inputs: tuple[int, ...]) -> None:
        self.step = step
        self.in_place = frozenset(static_inputs)
        self.graph: Any = None
        self.static_inputs: tuple[Any, ...] = ()
        self.static_outputs: tuple[Any, ...] = ()

    def _capture(self, inputs: tuple[Any, ...]) -> None:
        import torch

        self.static_inputs = tuple(
            t if i in self.in_place else _static_copy(t) for i, t in enumerate(inputs)
        )
        saved_state = {i: inputs[i].detach().clone() for i in self.in_place}
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(CAPTURE_WARMUP_CALLS):
                as_outputs(self.step(*self.static_inputs))
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        with torch.no_grad():  # the warm-up advanced the state; this call starts from it
            for i, value in saved_state.items():
                self.static_inputs[i].copy_(value)
        del saved_state
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.static_outputs = as_outputs(self.step(*self.static_inputs))
        self.graph = graph

    def _copy_in(self, inputs: tuple[Any, ...]) -> None:
        import torch

        with torch.no_grad():
            for i, (dst, src) in enumerate(zip(self.static_inputs, inputs, strict=True)):
                if i not in self.in_place:
                    dst.copy_(src)

    def __call__(self, *inputs: Any) -> tuple[Any, ...]:
        if self.graph is None:
            self._capture(inputs)
        self._copy_in(inputs)
        self.graph.replay()
        return self.static_outputs


def build_step(mode: str, workload: Workload, inputs: tuple[Any, ...]) -> StepFn:
    """The callable that runs one step of ``workload`` in ``mode`` on ``inputs``.

    Raises ValueError for a mode this workload cannot run (callers record skips before this).
    """
    if mode == "eager":
        return _returning_outputs(workload.step)
    if mode == "triton":
        if workload.triton_step is None:
            raise ValueError("the workload has no triton_step")
        return _returning_outputs(workload.triton_step)
    if mode == "cudagraph":
        return ManualCudaGraph(workload.step, workload.static_inputs)
    return _compiled(workload, mode, inputs)
