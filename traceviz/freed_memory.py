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

``traceviz`` (the CLI) calls :func:`return_freed_memory` at start; Python API users may call
it themselves. Elsewhere than on glibc it does nothing and says so (``False``).
"""

from __future__ import annotations

import sys

#: ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (glibc ``malloc.h``).
M_MMAP_THRESHOLD = -3
#: Allocations of at least this many bytes are mapped on their own (and unmapped when freed).
MMAP_THRESHOLD_BYTES = 1 << 17


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD_BYTES`; ``True`` when it was set
    (``False`` off Linux, or without glibc's ``mallopt``)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
