"""Read a trace file's JSON text into one mutable buffer, within a memory limit.

Gzip is recognised by its magic number, not by the suffix, and inflated as a stream (ISA-L's
``isal_zlib.decompressobj``, multi-member aware) straight into the buffer: the compressed file
is never held whole and the inflated text exists once. The inflated size is counted while
streaming and reading stops as soon as it passes the limit; the gzip trailer's ``ISIZE``
(the size mod 2³²) refuses a too-large file before any inflating when it is believable.
Plain JSON is checked against the limit by its size on disk, then read into the buffer; from
``threads_from_bytes`` on, by several threads at once (``os.preadv`` into slices of the buffer
releases the GIL, so the copy and the page faults of a GB-sized buffer run on all cores). The
file is read, not mapped: a mapped file truncated by its writer meanwhile would kill the
process with SIGBUS; a read sees a short file and reports it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

from traceviz.errors import TraceDecodeError, TraceNotFoundError, TraceTooLargeError
from traceviz.file_kind import file_kind
from traceviz.trace.limits import format_size, max_memory_bytes
from traceviz.trace.parallel import thread_map
from traceviz.trace.text import pread_into

#: ``scheme://`` at the start of a trace target: an fsspec URL (rank traces read remotely).
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
GZIP_MAGIC = b"\x1f\x8b"
#: Compressed bytes read, and inflated bytes produced, per step of the stream.
PIECE_BYTES = 8 * 1024 * 1024
#: Deflate cannot expand data by more than this factor; an ISIZE beyond it is a lie.
MAX_DEFLATE_RATIO = 1032


def is_url(target: str) -> bool:
    """Whether ``target`` is an fsspec URL rather than a local path."""
    return URL.match(target) is not None


def too_large(path: Path, size: str, limit: int, source: str) -> TraceTooLargeError:
    return TraceTooLargeError(
        f"{path}: the trace {size} but the memory limit is {format_size(limit)} ({source}); "
        f"raise it with --max-memory"
    )


#: Bytes each reading thread copies per call.
READ_SLICE_BYTES = 64 * 1024 * 1024


def read_trace_bytes(
    path: str | Path, limit: int | None = None, source: str = "--max-memory",
    threads: int = 1, threads_from_bytes: int = 0,
) -> tuple[bytearray, bool, int]:
    """Return ``(json_bytes, was_gzipped, size_on_disk_bytes)`` for ``path``.

    Plain JSON of at least ``threads_from_bytes`` bytes is read by ``threads`` threads.
    Raises :class:`TraceTooLargeError` when the JSON text is larger than
    ``limit`` bytes (``source`` says where the limit comes from; ``None``:
    :func:`limits.max_memory_bytes`).
    """
    if limit is None:
        limit, source = max_memory_bytes()
    p = Path(path)
    if not p.exists():
        raise TraceNotFoundError(f"{p}: no such file")
    if not p.is_file():
        raise TraceNotFoundError(f"{p}: not a regular file ({file_kind(p.stat().st_mode)}); "
                                 "traces are read from regular files")
    try:
        with p.open("rb") as f:
            on_disk = p.stat().st_size
            if f.read(2) == GZIP_MAGIC:
                _check_isize(f, p, on_disk, limit, source)
                return _inflate(f, p, limit, source), True, on_disk
            if on_disk > limit:
                raise too_large(p, f"is {format_size(on_disk)} of JSON", limit, source)
            if threads > 1 and on_disk >= threads_from_bytes:
                buf = _unfilled_bytearray(on_disk)
                n = _read_threaded(f.fileno(), buf, threads)
            else:
                buf = bytearray(on_disk)
                f.seek(0)
                n = f.readinto(buf)
            if n != on_disk:
                del buf[n:]
            return buf, False, on_disk
    except OSError as exc:
        raise TraceNotFoundError(f"{p}: cannot read ({exc.strerror or exc})") from None


def _unfilled_bytearray(size: int) -> bytearray:
    """A ``size``-byte bytearray whose memory is allocated but not written (CPython's
    ``PyByteArray_FromStringAndSize(NULL, size)``), so its pages are first touched by the
    reading threads, in parallel; ``bytearray(size)`` zero-fills it first, one page fault
    after another in this thread (0.85 s for 1 GB on the 16-core benchmark VM). Elsewhere,
    ``bytearray(size)``. The caller overwrites every byte or cuts the rest off."""
    import ctypes

    api = getattr(ctypes, "pythonapi", None)
    if api is None or not hasattr(api, "PyByteArray_FromStringAndSize"):  # pragma: no cover
        return bytearray(size)  # not CPython
    proto = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_ssize_t)
    buf = proto(("PyByteArray_FromStringAndSize", api))(None, size)
    assert isinstance(buf, bytearray) and len(buf) == size
    return buf


def _read_threaded(fd: int, buf: bytearray, threads: int) -> int:
    """Fill ``buf`` from ``fd`` with ``threads`` threads, :data:`READ_SLICE_BYTES` per call;
    returns the bytes read (less than ``len(buf)`` if the file shrank meanwhile)."""
    view = memoryview(buf)
    offsets = range(0, len(buf), READ_SLICE_BYTES)

    got = thread_map(lambda at: pread_into(fd, view[at : at + READ_SLICE_BYTES], at), offsets,
                     threads)
    full = 0
    for at, n in zip(offsets, got, strict=True):
        if n < min(READ_SLICE_BYTES, len(buf) - at):
            return at + n
        full = at + n
    return full


def gzip_isize(f: BinaryIO, on_disk: int) -> int | None:
    """The gzip trailer's ISIZE (the inflated size mod 2³²) of the ``on_disk``-byte gzip file
    ``f`` when believable — no more than deflate's maximum expansion of the file — else
    ``None``. Leaves ``f`` at its start."""
    if on_disk < 18:
        return None
    f.seek(on_disk - 4)
    isize = int.from_bytes(f.read(4), "little")
    f.seek(0)
    return isize if isize <= MAX_DEFLATE_RATIO * on_disk else None


def _check_isize(f: BinaryIO, path: Path, on_disk: int, limit: int, source: str) -> None:
    """Refuse at once when the trailer's believable ISIZE is already over ``limit``."""
    isize = gzip_isize(f, on_disk)
    if isize is not None and isize > limit:
        raise too_large(path, f"inflates to at least {format_size(isize)} (gzip trailer)",
                        limit, source)


def _inflate(f: BinaryIO, path: Path, limit: int, source: str) -> bytearray:
    """Inflate every gzip member of ``f`` into one buffer, stopping once it passes ``limit``."""
    from isal import isal_zlib

    out = bytearray()
    d = isal_zlib.decompressobj(wbits=31)
    pending = b""
    at_eof = False
    try:
        while True:
            if not pending and not at_eof:
                pending = f.read(PIECE_BYTES)
                at_eof = not pending
            if not pending:
                out += d.flush()
                if len(out) > limit:
                    raise too_large(path, f"inflates to more than {format_size(limit)}",
                                    limit, source)
                if not d.eof:
                    raise TraceDecodeError(f"{path}: truncated gzip data (the file ends "
                                           f"mid-stream)")
                return out
            out += d.decompress(pending, PIECE_BYTES)
            if len(out) > limit:
                raise too_large(path, f"inflates to more than {format_size(limit)}",
                                limit, source)
            pending = d.unconsumed_tail
            if d.eof:
                rest = d.unused_data + pending
                if not rest and not at_eof:
                    rest = f.read(PIECE_BYTES)
                    at_eof = not rest
                if not rest:
                    return out
                if rest[:2] != GZIP_MAGIC:
                    if not rest.strip(b"\0") and not f.read(1):  # zero padding after the data
                        return out
                    raise TraceDecodeError(f"{path}: corrupt gzip data (garbage after a "
                                           f"member)")
                d = isal_zlib.decompressobj(wbits=31)
                pending = rest
    except (isal_zlib.error, ValueError, EOFError, OverflowError) as exc:
        raise TraceDecodeError(f"{path}: corrupt gzip data ({exc})") from None
