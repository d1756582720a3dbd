"""glibc's mmap threshold: fixed by the CLI, raised inside :func:`reused_heap` and fixed again
(with the freed heap pages given back) when the last such block ends.

Each case runs in a fresh interpreter (the threshold is process-wide) and reads glibc's own
count of mapped blocks (``mallinfo2().hblks``) around a 1 MiB ``malloc``: mapped on its own
under the fixed 128 KiB threshold, from the heap inside a block.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "mallinfo2"),
    reason="needs glibc >= 2.33 (mallinfo2)")

_PRELUDE = """
import ctypes, threading
from traceviz import freed_memory as fm

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)

def mapped(nbytes=1 << 20):
    '''Whether a fresh allocation of nbytes is mapped on its own.'''
    before = libc.mallinfo2().hblks
    p = libc.malloc(nbytes)
    got = libc.mallinfo2().hblks > before
    libc.free(p)
    return got
"""


def _run(body: str) -> str:
    code = _PRELUDE + textwrap.dedent(body)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return got.stdout.strip()


def test_reused_heap_leaves_glibc_alone_until_the_threshold_is_fixed() -> None:
    out = _run("""
        with fm.reused_heap():
            pass
        print(fm._MALLOC.libc is None, fm._MALLOC.phases)
    """)
    assert out == "True 0"


def test_a_block_serves_mib_allocations_from_the_heap_and_the_fixed_threshold_returns() -> None:
    out = _run("""
        assert fm.return_freed_memory()
        outside = mapped()
        with fm.reused_heap():
            inside = mapped()
        print(outside, inside, mapped())
    """)
    assert out == "True False True"


def test_the_last_of_overlapping_blocks_restores_the_threshold() -> None:
    out = _run("""
        assert fm.return_freed_memory()
        first_in, second_done = threading.Event(), threading.Event()
        seen = []

        def first():
            with fm.reused_heap():
                first_in.set()
                second_done.wait()
                seen.append(mapped())  # the other block has ended: still from the heap

        t = threading.Thread(target=first)
        t.start()
        first_in.wait()
        with fm.reused_heap():
            pass
        second_done.set()
        t.join()
        print(seen[0], mapped())
    """)
    assert out == "False True"


def test_freed_heap_pages_are_given_back_when_the_block_ends() -> None:
    out = _run("""
        import os
        assert fm.return_freed_memory()

        def rss_mib():
            with open(f"/proc/{os.getpid()}/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

        with fm.reused_heap():
            blocks, pins = [], []
            for _ in range(64):  # each block below a small live one: holes, not the heap's top
                blocks.append(libc.malloc(1 << 20))
                ctypes.memset(blocks[-1], 1, 1 << 20)
                pins.append(libc.malloc(200 << 10))
            for p in blocks:
                libc.free(p)
            held = rss_mib()
        print(held - rss_mib() > 48)
    """)
    assert out == "True"
