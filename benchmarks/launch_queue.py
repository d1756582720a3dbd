"""How many kernel launches the CUDA driver queues before a launch call blocks the host.

``python -m benchmarks.launch_queue [--launches N] [--out FILE]`` keeps the GPU busy with one
long kernel (``torch.cuda._sleep``), then launches ``N`` tiny kernels, timing each launch call
on the host (``perf_counter_ns``). While the queue has room a launch returns in microseconds;
once it is full, the call waits for the long kernel. The first launch that takes longer than
``--blocked-us`` gives the depth: the launches queued before it (the sleep kernel included).
traceviz's :data:`traceviz.analyze.compare.unprofiled.LAUNCH_QUEUE_DEPTH` cites this measurement.
"""

from __future__ import annotations

import argparse
import json
import time


def measure(launches: int, sleep_cycles: int, blocked_us: float) -> dict[str, object]:
    """Launch timings (µs) after a long kernel; the index of the first blocked launch."""
    import torch

    x = torch.zeros(1, device="cuda")
    for _ in range(100):  # warm the add kernel and the allocator
        x.add_(1)
    torch.cuda.synchronize()
    torch.cuda._sleep(sleep_cycles)
    took = []
    for _ in range(launches):
        begin = time.perf_counter_ns()
        x.add_(1)
        took.append((time.perf_counter_ns() - begin) / 1000)
    torch.cuda.synchronize()
    first = next((i for i, t in enumerate(took) if t > blocked_us), None)
    fast = sorted(took[: min(100, len(took))])
    return {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "launches": launches,
        "sleep_cycles": sleep_cycles,
        "blocked_us": blocked_us,
        "median_launch_us_before": fast[len(fast) // 2],
        "first_blocked_launch": first,
        "queue_depth": None if first is None else first + 1,  # + the sleep kernel
        "blocked_launch_us": None if first is None else took[first],
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.launch_queue")
    parser.add_argument("--launches", type=int, default=4096)
    parser.add_argument("--sleep-cycles", type=int, default=2_000_000_000)
    parser.add_argument("--blocked-us", type=float, default=1000.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    runs = [measure(args.launches, args.sleep_cycles, args.blocked_us) for _ in range(3)]
    text = json.dumps({"runs": runs}, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
