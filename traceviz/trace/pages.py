"""Memory-page policy for the large temporary arrays of table building and analysis.

numpy advises the kernel to back every array of 4 MiB or more with transparent huge pages
(``madvise(MADV_HUGEPAGE)``). Where transparent huge pages are in ``madvise`` mode with
``defrag = madvise`` (common on VMs and distribution kernels), the first touch of such an array
may compact memory synchronously to find a 2 MiB page. Building the tables and analysing a
multi-million-event trace allocates hundreds of such arrays and streams over each a few times,
so huge pages buy little there and the compaction is pure cost: on the 1 GB benchmark trace it
was 0.6–1.1 s of system time in the analysis alone (0.4 s without the advice). Results do not
depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np


def _advice_setter() -> Callable[[bool], bool] | None:
    """numpy's switch for the huge-page advice (returns the previous setting); ``None`` on a
    numpy without it."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    return getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)


@contextmanager
def small_pages() -> Iterator[None]:
    """Turn numpy's huge-page advice off for a block (or a function, as a decorator) and
    restore the previous setting after it, also on errors."""
    set_advice = _advice_setter()
    if set_advice is None:
        yield
        return
    before = set_advice(False)
    try:
        yield
    finally:
        set_advice(before)
