"""Two versions of a step timed against each other in one process (``profile NEW --against OLD``).

The child ``python -m traceviz.collect.child against NEW MODE OUT --old OLD`` loads both
workload files, checks that their inputs have the same shapes and dtypes
(:func:`input_signature`; differing inputs fail the mode with both signatures in the reason),
builds both steps in ``MODE`` on their own fresh inputs, runs each ``check_steps`` times (the
first call compiles or captures: ``first_call_s``), then times them in ABBA pairs exactly as a
mode is timed against eager (:func:`traceviz.collect.paired.measure_paired`, the old step in the
baseline's place: ``baseline`` is ``"old"``). Each version's own trace, correctness check and
compile diagnostics come from its own mode process (the run directory holds NEW's run and, in
``old/``, OLD's); this process only times the pair, so its record is the ``against`` block of
NEW's mode entry: ``{"status", "reason", "old_first_call_s", "new_first_call_s",
"outputs_vs_old", "paired"}``.

``outputs_vs_old`` compares the two versions' outputs after ``check_steps`` steps, when their
inputs are equal in value too (same shapes, dtypes and numbers); otherwise it says why it was
not compared. It is information, not a status: a change that alters numerics on purpose is the
reviewer's call.
"""

from __future__ import annotations

import time
from typing import Any

#: The ``paired`` block's name for the old version (it takes the baseline's place).
OLD = "old"


class InputsDifferError(ValueError):
    """The two versions' inputs differ in shape or dtype (the message shows both)."""


def input_signature(inputs: tuple[Any, ...]) -> list[str]:
    """One ``dtype[d0,d1,…]`` string per input tensor, e.g. ``float32[4096,4096]``."""
    return [f"{str(t.dtype).removeprefix('torch.')}[{','.join(str(d) for d in t.shape)}]"
            for t in inputs]


def signature_mismatch(new: list[str] | None, old: list[str] | None) -> str | None:
    """Why two input signatures are not the same contract (``None``: they are, or one is
    unknown)."""
    if new is None or old is None or new == old:
        return None
    return (f"the two versions' inputs differ: NEW make_inputs() gives ({', '.join(new)}), "
            f"OLD gives ({', '.join(old)}); --against times two versions of one step on the "
            "same inputs")


def run_against(new_path: str, old_path: str, mode: str, device: str,
                settings: dict[str, Any], enter: Any) -> dict[str, Any]:
    """Time NEW against OLD in ``mode`` (module doc); ``enter(phase)`` announces each phase.

    Returns the ``against`` record; exceptions propagate (the child records them)."""
    import torch

    from traceviz.collect.correctness import compare
    from traceviz.collect.modes import build_step
    from traceviz.collect.paired import PairedSettings, measure_paired
    from traceviz.collect.timing import StepClock
    from traceviz.collect.workload import load_workload

    cuda = device == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def fresh(workload: Any) -> tuple[Any, ...]:
        torch.manual_seed(0)
        made = workload.make_inputs(torch.device(device))
        return tuple(made) if isinstance(made, (tuple, list)) else (made,)

    record: dict[str, Any] = {"status": "failed", "reason": None}
    enter("loading both versions")
    new = load_workload(new_path, alias="new")
    old = load_workload(old_path, alias=OLD)
    new_inputs, old_inputs = fresh(new), fresh(old)
    problem = signature_mismatch(input_signature(new_inputs), input_signature(old_inputs))
    if problem:
        raise InputsDifferError(problem)
    same_values = all(torch.equal(a, b) for a, b in zip(new_inputs, old_inputs, strict=True))
    check_steps = max(int(settings["check_steps"]), 1)
    steps, outputs = {}, {}
    for name, workload, inputs in (("new", new, new_inputs), (OLD, old, old_inputs)):
        enter(f"{name}: building {mode}")
        step = build_step(mode, workload, inputs)
        begin = time.perf_counter()
        out = step(*inputs)
        sync()
        record[f"{name}_first_call_s"] = time.perf_counter() - begin
        for _ in range(check_steps - 1):
            out = step(*inputs)
        outputs[name] = tuple(t.detach().clone() for t in out)
        sync()
        steps[name] = (step, inputs)
    if same_values:
        check = compare(outputs["new"], outputs[OLD], new.rtol, new.atol)
        record["outputs_vs_old"] = {"compared": True, **check.to_dict()}
    else:
        record["outputs_vs_old"] = {"compared": False,
                                    "reason": "the two versions' inputs differ in value"}
    del outputs
    enter("paired timing: old vs new")
    s = settings
    paired_settings = PairedSettings(
        budget_s=float(s["timing_budget_s"]), min_repeat_ms=float(s["min_repeat_ms"]),
        max_iters=int(s["max_iters"]), warmup=int(s["warmup"]))
    (new_step, new_in), (old_step, old_in) = steps["new"], steps[OLD]
    record["paired"] = measure_paired(lambda: old_step(*old_in), lambda: new_step(*new_in),
                                      StepClock(cuda), paired_settings, baseline_name=OLD)
    record.update(status="ok", reason=None)
    return record
