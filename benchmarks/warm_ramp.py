"""How long a small step runs slower than its steady state after the GPU has been idle.

``python -m benchmarks.warm_ramp [WORKLOAD] [--idle-s S] [--seconds T] [--out FILE]`` builds a
bundled workload's eager step on CUDA in a fresh process, runs it once, leaves the GPU idle for
``--idle-s`` seconds (as between two of ``traceviz profile``'s child processes), then times
consecutive windows of ``traceviz.collect.tracing.ACTIVE_STEPS`` steps (CUDA events around each
window, a synchronize after it) for ``--seconds``, recording each window's ms/step, the seconds
since the first window began and, where NVML answers, the SM clock (MHz). The steady state is
the median of the last half of the windows; the ramp ends at the first window from which every
later one is within 10 % of it. :data:`traceviz.collect.timing.WARM_MIN_S` cites this.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def _sm_clock_mhz() -> int | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        return int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
    except Exception:  # NVML absent or not answering: the clock column stays empty
        return None


def measure(workload: str, idle_s: float, seconds: float) -> dict[str, object]:
    """Window times (ms/step) after ``idle_s`` idle seconds; the ramp's end (s)."""
    import torch

    from traceviz.collect.modes import build_step
    from traceviz.collect.tracing import ACTIVE_STEPS
    from traceviz.collect.workload import load_workload

    wl = load_workload(str(Path("workloads") / f"{workload}.py"))
    torch.manual_seed(0)
    inputs = wl.make_inputs(torch.device("cuda"))
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    step = build_step("eager", wl, inputs)
    step(*inputs)
    torch.cuda.synchronize()
    time.sleep(idle_s)
    idle_clock = _sm_clock_mhz()
    windows = []
    begin = time.perf_counter()
    while time.perf_counter() - begin < seconds:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        at = time.perf_counter() - begin
        start.record()
        for _ in range(ACTIVE_STEPS):
            step(*inputs)
        end.record()
        end.synchronize()
        windows.append({"at_s": round(at, 4),
                        "ms_per_step": round(start.elapsed_time(end) / ACTIVE_STEPS, 4),
                        "sm_clock_mhz": _sm_clock_mhz()})
    steady = statistics.median(w["ms_per_step"] for w in windows[len(windows) // 2:])
    settled = len(windows)
    for i in range(len(windows) - 1, -1, -1):
        if abs(windows[i]["ms_per_step"] / steady - 1) > 0.10:
            break
        settled = i
    return {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "workload": workload,
        "idle_s": idle_s,
        "idle_sm_clock_mhz": idle_clock,
        "steady_ms_per_step": steady,
        "first_window_ms_per_step": windows[0]["ms_per_step"],
        "settled_at_s": windows[settled]["at_s"] if settled < len(windows) else None,
        "windows": windows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", default=["decode_loop"])
    ap.add_argument("--idle-s", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    results = []
    for name in args.workloads:
        r = measure(name, args.idle_s, args.seconds)
        results.append(r)
        print(f"{name}: first window {r['first_window_ms_per_step']:.3f} ms/step, steady "
              f"{r['steady_ms_per_step']:.3f}, within 10 % from {r['settled_at_s']} s "
              f"(idle SM clock {r['idle_sm_clock_mhz']} MHz)")
    if args.out:
        args.out.write_text(json.dumps(results, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
