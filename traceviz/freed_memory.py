"""Freed memory goes back to the system: glibc's mmap threshold fixed at 1 MiB (the CLI sets it).

glibc serves an allocation of at least ``M_MMAP_THRESHOLD`` bytes with a ``mmap`` of its own,
unmapped — returned to the system — when it is freed; smaller allocations come from the heap,
whose freed pages mostly stay in the process. The threshold starts at 128 KiB but *grows* to the
size of every mmapped block freed (up to 32 MiB), so once the analysis has freed its first
large numpy temporaries, the next ones of up to that size come from the heap and their pages
stay in the process after they are freed: its RSS follows the sum of its temporaries rather
than what is alive at once. Setting the threshold turns the growth off: every array of 1 MiB
or more is mapped and unmapped on its own (a few thousand ``mmap`` calls on a 400 MB trace).
On the 10⁶-step benchmark trace (``benchmarks/many_steps.py``; load and analysis on one
process, stage by stage, 2026-11-25, with the columnar step tables but before the later
peak reductions) the peak RSS fell from 1,608 MiB to 1,441 MiB with it.

``traceviz`` (the CLI) calls :func:`return_freed_memory` at start; Python API users may call
it themselves. Elsewhere than on glibc it does nothing and says so (``False``).
"""

from __future__ import annotations

import sys

#: ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (glibc ``malloc.h``).
M_MMAP_THRESHOLD = -3
#: Allocations of at least this many bytes are mapped on their own (and unmapped when freed).
MMAP_THRESHOLD_BYTES = 1 << 20


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
