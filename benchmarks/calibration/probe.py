"""Measure this device once, outside traceviz: the base's size per step target and the injected
effects' costs, timed alone or within a loop of the step (the calibration's "truth" where it
is not known by construction).

``python -m benchmarks.calibration.probe --device cpu|cuda --targets-us 20,200,2000,20000``
prints one JSON object:

``ladder``   per matrix size ``m``: one ``tanh(y @ w)`` round's cost (ns, below).
``bases``    per target (µs): the chosen ``m`` and ``k`` (rounds) and the predicted step (ns).
``effects``  per target: each effect's cost alone, ``{"host_ns", "gpu_ns"}``: ``rep`` (one more
             round), ``tail_<form>`` (each tail form of :mod:`benchmarks.calibration.steps`),
             ``sync`` (``y[0, 0].item()``), on the CPU ``rep_compiled`` (one more round in a
             compiled function: ``k + 1`` rounds under ``torch.compile`` against ``k``, a
             paired difference, so the compiled call's own overhead is not counted), and the
             two tail effects timed as differences,
             ``tail_split_minus_one`` and ``tail_fused_minus_chain`` (:func:`paired_diff`),
             and the same timed within the step loop, ``…_in_step`` (:func:`in_step_diff`;
             with ``reps``, the tail's repeats per step, which its ``host_ns`` is for, as
             :func:`benchmarks.calibration.cells.tail_reps` sets them, and
             ``old_step_host_ns``, side A's whole step timed alike).

Costs: on the CPU, ``host_ns`` is the wall time per call (the host is the device) and
``gpu_ns`` is 0. On CUDA, ``host_ns`` is the host's issue time per call with the GPU idle
(launch calls only; no synchronisation), and ``gpu_ns`` is the GPU's time per call between two
CUDA events, measured with the host far ahead (a sleep kernel queued first), so launch gaps do
not count. Each is the median over :data:`REPEATS` blocks of :data:`CALLS` calls (the CPU's
wall time: the fastest block, since other processes sharing the cores only add time).

A tail effect is a difference of two forms' host costs, tens of µs each. Timed one form after
the other, the two fastest blocks come from different moments of a shared machine: on one
2-core VM two probes gave the ``launches`` effect as +31.8 and +57.1 µs, while the runs'
paired step changes read +35 to +38 µs both times. :func:`paired_diff` times the two forms in
alternating blocks (ABBA, :data:`PAIRS` pairs) and takes the median of the per-pair
differences, so a change in the machine's speed lands on both forms alike.

Timed alone, the forms still cost other than within the step: on one 2-core VM one probe read
the same 32 × 32 ``launches`` tail as +46.0, +54.8, +33.5 and +56.7 µs at four moments while
the steps' paired changes read +34.3 to +36.8 µs at every size, and on an H200 launches into a
GPU busy with a 2 ms step cost the host 16 µs each against 11 µs into an idle GPU. So the
tails' truths are timed where they run, within the step loop (:func:`in_step_diff`): the tail's
own calls, bracketed by the clock, in a loop of the whole step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.calibration.cells import tail_reps
from benchmarks.calibration.steps import TAIL_OPS, tail, tail_input
from traceviz.collect.paired import PairedSettings
from traceviz.collect.timing import iterations_for

#: Blocks per measurement, and calls per block.
REPEATS = 7
CALLS = 50
#: Matrix sizes tried for the base, per device type.
LADDER = {"cpu": (8, 16, 32, 64, 128, 256, 512),
          "cuda": (8, 64, 256, 512, 1024, 2048, 4096)}
#: Most rounds per step.
MAX_K = 8
#: Pairs of blocks of :func:`paired_diff`.
PAIRS = 15
#: Sleep-kernel cycles queued before a GPU measurement (tens of ms on current GPUs).
HEAD_START_CYCLES = 50_000_000


def _host_ns(fn: Callable[[], Any], cuda: bool) -> float:
    """Median host time per call (ns); on CUDA the GPU is idle first and not waited for."""
    fn()
    blocks = [_block_ns(fn, cuda) for _ in range(REPEATS)]
    if cuda:
        torch.cuda.synchronize()
        return statistics.median(blocks)
    return min(blocks)  # other processes on the CPU only ever add time


def _gpu_ns(fn: Callable[[], Any]) -> float:
    """Median GPU time per call (ns) between CUDA events, the host ahead of the GPU."""
    blocks = []
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        torch.cuda._sleep(HEAD_START_CYCLES)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(CALLS):
            fn()
        end.record()
        end.synchronize()
        blocks.append(start.elapsed_time(end) * 1e6 / CALLS)
    return statistics.median(blocks)


def _block_ns(fn: Callable[[], Any], cuda: bool) -> float:
    """Host ns per call over one block of :data:`CALLS` calls (CUDA: from an idle GPU)."""
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(CALLS):
        fn()
    return (time.perf_counter_ns() - t0) / CALLS


def paired_diff(a: Callable[[], Any], b: Callable[[], Any], cuda: bool) -> float:
    """``b``'s host cost per call minus ``a``'s (ns): the median over :data:`PAIRS` pairs of
    blocks timed in ABBA order (module doc)."""
    a()
    b()
    pairs = _abba(lambda: _block_ns(a, cuda), lambda: _block_ns(b, cuda), cuda)
    return statistics.median(tb - ta for ta, tb in pairs)


def _abba(block_a: Callable[[], Any], block_b: Callable[[], Any], cuda: bool
          ) -> list[tuple[Any, Any]]:
    """:data:`PAIRS` pairs ``(block_a(), block_b())``, the two blocks of every other pair run
    in the opposite order (ABBA), so a change in the machine's speed lands on both alike."""
    pairs = []
    for i in range(PAIRS):
        if i % 2:
            b = block_b()
            pairs.append((block_a(), b))
        else:
            a = block_a()
            pairs.append((a, block_b()))
    if cuda:
        torch.cuda.synchronize()
    return pairs


def in_step_diff(m: int, k: int, forms: tuple[str, str], reps: int,
                 device: torch.device) -> dict[str, float]:
    """The host time per step that the tail's ``reps`` repeats take within a loop of the whole
    step (``k`` rounds on ``m × m``, then the tail), ``forms[1]`` minus ``forms[0]``:
    ``{"host_ns", "old_step_host_ns"}`` (ns per step).

    Each step reads :func:`time.perf_counter_ns` just before and after its tail, so the
    tail's calls are timed where they run: after the step's rounds were issued and, on CUDA,
    with the GPU busy with them (a launch into a busy GPU costs the host more than one into an
    idle GPU). The blocks are sized and started as traceviz's paired blocks are
    (:func:`_block_steps`; on CUDA from a synchronized device and one untimed lead-in step, no
    synchronization within) and paired ABBA (:func:`_abba`):
    ``host_ns`` is the median over :data:`PAIRS` pairs of the difference of the blocks' mean
    tail times. ``old_step_host_ns``: the median over the ``forms[0]`` blocks of their host
    time per step, the wall time of the block's calls (on CUDA the host's issue time, as
    traceviz defines it), the yardstick by which a run's host speed is compared with the
    probe's (:func:`benchmarks.calibration.score.host_speed_scale`)."""
    cuda = device.type == "cuda"
    x, w = _matrices(m, device)
    steps = [_timed_tail_step(x, w, k, form, reps) for form in forms]
    for step in steps:
        step()
    n = _block_steps(steps[0], cuda)
    pairs = _abba(lambda: _in_step_block(steps[0], n, cuda),
                  lambda: _in_step_block(steps[1], n, cuda), cuda)
    return {"host_ns": statistics.median(b[0] - a[0] for a, b in pairs),
            "old_step_host_ns": statistics.median(a[1] for a, _ in pairs)}


def _timed_tail_step(x: torch.Tensor, w: torch.Tensor, k: int, form: str,
                     reps: int) -> Callable[[], int]:
    """One step (``k`` rounds, then ``reps`` tails of ``form``) returning its tail's host ns."""
    def step() -> int:
        y = x
        for _ in range(k):
            y = torch.tanh(y @ w)
        out = tail_input(y)
        begin = time.perf_counter_ns()
        for _ in range(reps):
            out = tail(out, form)
        return time.perf_counter_ns() - begin

    return step


def _block_steps(step: Callable[[], int], cuda: bool) -> int:
    """Steps per in-step block by a 3-step estimate, sized by traceviz's own rule for its
    paired blocks (:func:`traceviz.collect.timing.iterations_for` with
    :class:`~traceviz.collect.paired.PairedSettings`' defaults)."""
    if cuda:
        torch.cuda.synchronize()
    begin = time.perf_counter_ns()
    for _ in range(3):
        step()
    if cuda:
        torch.cuda.synchronize()
    blocks = PairedSettings()
    return iterations_for((time.perf_counter_ns() - begin) / 3 / 1e6, blocks.min_repeat_ms,
                          blocks.max_iters)


def _in_step_block(step: Callable[[], int], n: int, cuda: bool) -> tuple[float, float]:
    """``(tail ns, host ns)`` per step, means over one block of ``n`` steps (CUDA: after a
    lead-in step from a synchronized device; host ns: the block's calls' wall time, before
    any synchronization)."""
    if cuda:
        torch.cuda.synchronize()
        step()
    begin = time.perf_counter_ns()
    tails = sum(step() for _ in range(n))
    return tails / n, (time.perf_counter_ns() - begin) / n


def cost(fn: Callable[[], Any], cuda: bool) -> dict[str, float]:
    """``{"host_ns", "gpu_ns"}`` of one call of ``fn`` (module doc)."""
    return {"host_ns": _host_ns(fn, cuda), "gpu_ns": _gpu_ns(fn) if cuda else 0.0}


def _matrices(m: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(m, m, device=device), torch.randn(m, m, device=device) / m**0.5


def probe(device_name: str, targets_us: list[float]) -> dict[str, Any]:
    """The probe's record (module doc)."""
    device = torch.device(device_name)
    cuda = device.type == "cuda"
    ladder: dict[int, dict[str, float]] = {}
    for m in LADDER[device.type]:
        x, w = _matrices(m, device)
        ladder[m] = cost(lambda x=x, w=w: torch.tanh(x @ w), cuda)
    bases: dict[str, dict[str, Any]] = {}
    effects: dict[str, dict[str, dict[str, float]]] = {}
    for target in targets_us:
        m, k, predicted = _choose(ladder, target * 1000)
        bases[str(target)] = {"m": m, "k": k, "predicted_ns": predicted}
        x, w = _matrices(m, device)
        y = torch.tanh(x @ w)
        found = {"rep": cost(lambda y=y, w=w: torch.tanh(y @ w), cuda),
                 "sync": cost(lambda y=y: y[0, 0].item(), cuda)}
        if not cuda:
            base_fn, more_fn = torch.compile(_rounds(k)), torch.compile(_rounds(k + 1))
            found["rep_compiled"] = {
                "host_ns": paired_diff(lambda f=base_fn, x=x, w=w: f(x, w),
                                       lambda f=more_fn, x=x, w=w: f(x, w), cuda),
                "gpu_ns": 0.0}
        corner = tail_input(y)
        for form in TAIL_OPS:
            found[f"tail_{form}"] = cost(lambda y=corner, form=form: tail(y, form), cuda)
        for new, old in (("split", "one"), ("fused", "chain")):
            host = paired_diff(lambda y=corner, f=old: tail(y, f),
                               lambda y=corner, f=new: tail(y, f), cuda)
            gpu = found[f"tail_{new}"]["gpu_ns"] - found[f"tail_{old}"]["gpu_ns"]
            found[f"tail_{new}_minus_{old}"] = {"host_ns": host, "gpu_ns": gpu}
            reps = 1 if cuda else tail_reps(host, predicted)
            found[f"tail_{new}_minus_{old}_in_step"] = {
                **in_step_diff(m, k, (old, new), reps, device), "gpu_ns": reps * gpu,
                "reps": float(reps)}
        effects[str(target)] = found
    return {"device": device_name, "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(device) if cuda else None,
            "ladder": {str(m): c for m, c in ladder.items()}, "bases": bases,
            "effects": effects}


def _rounds(n: int) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """A function of ``n`` rounds of ``y = tanh(y @ w)`` (a new code object per call, so each
    compiles on its own)."""
    def rounds(y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for _ in range(n):
            y = torch.tanh(y @ w)
        return y

    return rounds


def _choose(ladder: dict[int, dict[str, float]], target_ns: float) -> tuple[int, int, float]:
    """The ``(m, k, predicted ns)`` whose ``k`` rounds (each costing the larger of host issue
    and GPU time) come nearest the target on a log scale; ties go to the smaller ``m``."""
    best: tuple[float, int, int, float] | None = None
    for m, c in ladder.items():
        per = max(c["host_ns"], c["gpu_ns"])
        for k in range(1, MAX_K + 1):
            predicted = k * per
            score = abs(float(torch.log(torch.tensor(predicted / target_ns))))
            if best is None or score < best[0] - 1e-9:
                best = (score, m, k, predicted)
    assert best is not None
    return best[1], best[2], best[3]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), required=True)
    parser.add_argument("--targets-us", default="20,200,2000,20000")
    args = parser.parse_args(argv)
    targets = [float(t) for t in args.targets_us.split(",") if t.strip()]
    print(json.dumps(probe(args.device, targets), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
