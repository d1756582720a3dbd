"""``benchmarks/cpu_placement.py``'s pinning and CPU sampling, on this machine's CPUs."""

from __future__ import annotations

import os
import threading

from benchmarks.cpu_placement import _cpu_of, pin_threads


def test_pin_moves_every_thread_to_the_cpu_and_the_sampler_sees_it_there():
    everyone = os.sched_getaffinity(0)
    started = threading.Event()
    done = threading.Event()
    worker = threading.Thread(target=lambda: (started.set(), done.wait(10)))
    worker.start()
    started.wait(10)
    cpu = max(everyone)
    try:
        pin_threads({cpu})
        for tid in os.listdir("/proc/self/task"):
            assert os.sched_getaffinity(int(tid)) == {cpu}
        sum(range(200_000))  # run a while on the pinned CPU
        assert _cpu_of(threading.get_native_id()) == cpu
    finally:
        pin_threads(everyone)
        done.set()
        worker.join()
    assert os.sched_getaffinity(0) == everyone
