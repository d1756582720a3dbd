"""Freed memory goes back to the system: glibc's mmap threshold fixed at 128 KiB (the CLI sets it).

glibc serves an allocation that its heap's free space cannot hold with a ``mmap`` of its own
when it is at least ``M_MMAP_THRESHOLD`` bytes — unmapped, returned to the system, when it is
freed — and by growing the heap when it is smaller; freed heap pages mostly stay in the
process. The threshold starts at 128 KiB but *grows* to the size of every mmapped block freed
(up to 32 MiB), so once the analysis has freed its first large numpy temporaries, the next ones
of up to that size grow the heap and their pages stay in the process after they are freed: its
RSS follows the sum of its temporaries rather than what is alive at once. Setting the
threshold turns the growth off: an array of 128 KiB (16 384 int64 values) or more that does
not fit in the heap's free space is mapped and unmapped on its own.
On the 10⁶-step benchmark trace (``benchmarks/many_steps.py``; load and analysis on one
process, stage by stage, 2026-11-25, with the columnar step tables but before the later
peak reductions) the peak RSS fell from 1,608 MiB to 1,441 MiB with a threshold fixed at 1 MiB.

128 KiB (glibc's own starting value) rather than 1 MiB: the serial decoder's per-chunk columns
and lists are just under 1 MiB each (a 16 MiB chunk holds ≈ 120 000 events: 8 bytes × 120 000)
and the analysis makes many arrays of 0.1–1 MiB; with a 1 MiB threshold they grew the heap,
whose freed pages then stayed behind the small objects allocated between them, and the
analysis's peak stood on top of them. ``traceviz report --format json --workers 1`` of the
10⁶-step trace (the same day, after the columnar tables and the peak reductions): maxrss 1,137
MiB at 1 MiB, 1,024 MiB at 128 KiB; in-process through ``traceviz.analyze``, peak RSS 1,123 MiB
at 1 MiB, 1,025 MiB at 256 KiB, 1,012 MiB at 128 KiB. The cost: on the 2×10⁵-step trace 3,233
``mmap`` / 2,659 ``munmap`` calls instead of 2,425 / 1,852 (0.07 s instead of 0.04 s in the
kernel by ``strace -c``) and ≈ 0.3 s more system time of ≈ 4.5 s CPU (fresh pages are zeroed by
the kernel).

Its cost is the page faults: every mapped block is faulted in afresh, page by page, and
zeroed by the kernel. The decoder's chunks and the jobs of the analysis's map (the host-wait
blocks and the other metrics, ``traceviz.analyze.analysis``) make many arrays and lists of
0.1–4 MiB that die with the chunk or the job; on a 304 MB replica of ``reports/train_step``
(1.18 M events, 3 610 steps; ``benchmarks/README.md``, "Stage shares") the fixed threshold
took ``traceviz report --format json`` from 0.6–0.8 s to 2.1–2.5 s of system time (≈ 500 000
more minor faults in the analysis alone, with one worker). :func:`reused_heap` serves such a
chunk or job from the heap, where the next temporary reuses the pages the last one freed,
and gives the freed pages back (``malloc_trim(0)``) when it ends: system time 1.91 → 1.40 s
(medians of 5 interleaved pairs, ``benchmarks/results/2026-11-28-paired-train-300mb-vm.json``)
and the 10⁶-step run's peak 1,035 MiB, within its bound of 1,075
(``benchmarks/results/2026-11-28-many-steps-reused-heap-vm.json``). The whole analysis run
this way, or a threshold of 1–4 MiB throughout, took that peak past the bound (1,099–1,308
MiB, 2026-11-28, this 2-core VM).

``traceviz`` (the CLI) calls :func:`return_freed_memory` at start; Python API users may call
it themselves; :func:`reused_heap` does nothing until it has been called. Elsewhere than on
glibc both do nothing (``False``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (glibc ``malloc.h``).
M_MMAP_THRESHOLD = -3
#: Allocations of at least this many bytes are mapped on their own (and unmapped when freed).
MMAP_THRESHOLD_BYTES = 1 << 17
#: Inside :func:`reused_heap`, allocations below this many bytes (32 MiB, glibc's largest
#: threshold on 64-bit) come from the heap.
REUSED_HEAP_THRESHOLD_BYTES = 1 << 25


class _Malloc:
    """glibc's ``mallopt`` and ``malloc_trim`` once :func:`return_freed_memory` set the
    threshold (``libc`` is ``None`` before, and off glibc); ``phases``: :func:`reused_heap`
    blocks now open, on any thread."""

    def __init__(self) -> None:
        self.libc: Any = None
        self.phases = 0
        self.lock = threading.Lock()


_MALLOC = _Malloc()


def _glibc() -> Any:
    """The C library with ``mallopt`` and ``malloc_trim`` typed, or ``None`` without them."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        libc.mallopt.restype = ctypes.c_int
        libc.malloc_trim.argtypes = (ctypes.c_size_t,)
        libc.malloc_trim.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD_BYTES`; ``True`` when it was set
    (``False`` off Linux, or without glibc's ``mallopt``)."""
    libc = _glibc()
    if libc is None or libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) != 1:
        return False
    _MALLOC.libc = libc
    return True


@contextmanager
def reused_heap() -> Iterator[None]:
    """Serve allocations below :data:`REUSED_HEAP_THRESHOLD_BYTES` from the heap while the
    block runs, then fix the threshold at :data:`MMAP_THRESHOLD_BYTES` again and give the
    heap's free pages back (``malloc_trim(0)``). For a job whose temporaries all die when it
    ends. Blocks may be open on several threads at once: the last to close restores. Does
    nothing before :func:`return_freed_memory` (the threshold is then glibc's own)."""
    libc = _MALLOC.libc
    if libc is None:
        yield
        return
    with _MALLOC.lock:
        _MALLOC.phases += 1
        libc.mallopt(M_MMAP_THRESHOLD, REUSED_HEAP_THRESHOLD_BYTES)
    try:
        yield
    finally:
        with _MALLOC.lock:
            _MALLOC.phases -= 1
            if _MALLOC.phases == 0:
                libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                libc.malloc_trim(0)
