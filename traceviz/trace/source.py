"""Read a trace file's JSON text into one mutable buffer, within a memory limit.

Gzip is recognised by its magic number, not by the suffix, and inflated as a stream (ISA-L's
``isal_zlib.decompressobj``, multi-member aware) straight into the buffer: the compressed file
is never held whole and the inflated text exists once. The inflated size is counted while
streaming and reading stops as soon as it passes the limit; the gzip trailer's ``ISIZE``
(the size mod 2³²) refuses a too-large file before any inflating when it is believable.
Plain JSON is checked against the limit by its size on disk, then read into the buffer —
or, from ``map_from_bytes`` on, mapped copy-on-write (``mmap.ACCESS_COPY``): no read pass and
no second copy of the text (the pages are the file's page cache until a byte is written, and
the decode writes two bytes per chunk), and forked decode workers fault their own chunks in.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import BinaryIO

from traceviz.errors import TraceDecodeError, TraceNotFoundError, TraceTooLargeError
from traceviz.trace.limits import format_size, max_memory_bytes

GZIP_MAGIC = b"\x1f\x8b"
#: Compressed bytes read, and inflated bytes produced, per step of the stream.
PIECE_BYTES = 8 * 1024 * 1024
#: Deflate cannot expand data by more than this factor; an ISIZE beyond it is a lie.
MAX_DEFLATE_RATIO = 1032


def too_large(path: Path, size: str, limit: int, source: str) -> TraceTooLargeError:
    return TraceTooLargeError(
        f"{path}: the trace {size} but the memory limit is {format_size(limit)} ({source}); "
        f"raise it with --max-memory"
    )


#: A writable buffer of the JSON text: read into memory, or mapped copy-on-write.
TraceBytes = bytearray | mmap.mmap


def read_trace_bytes(
    path: str | Path, limit: int | None = None, source: str = "--max-memory",
    map_from_bytes: int | None = None,
) -> tuple[TraceBytes, bool, int]:
    """Return ``(json_bytes, was_gzipped, size_on_disk_bytes)`` for ``path``.

    Plain JSON of at least ``map_from_bytes`` bytes (``None``: never) is mapped copy-on-write
    instead of read. Raises :class:`TraceTooLargeError` when the JSON text is larger than
    ``limit`` bytes (``source`` says where the limit comes from; ``None``:
    :func:`limits.max_memory_bytes`).
    """
    if limit is None:
        limit, source = max_memory_bytes()
    p = Path(path)
    if not p.exists():
        raise TraceNotFoundError(f"{p}: no such file")
    if not p.is_file():
        raise TraceNotFoundError(f"{p}: not a file")
    try:
        with p.open("rb") as f:
            on_disk = p.stat().st_size
            if f.read(2) == GZIP_MAGIC:
                _check_isize(f, p, on_disk, limit, source)
                return _inflate(f, p, limit, source), True, on_disk
            if on_disk > limit:
                raise too_large(p, f"is {format_size(on_disk)} of JSON", limit, source)
            if map_from_bytes is not None and on_disk >= max(1, map_from_bytes):
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY), False, on_disk
            f.seek(0)
            buf = bytearray(on_disk)
            n = f.readinto(buf)
            if n != on_disk:
                del buf[n:]
            return buf, False, on_disk
    except OSError as exc:
        raise TraceNotFoundError(f"{p}: cannot read ({exc.strerror or exc})") from None


def _check_isize(f: BinaryIO, path: Path, on_disk: int, limit: int, source: str) -> None:
    """Refuse at once when the trailer's ISIZE (true size mod 2³²) is already over ``limit``
    and is believable (no more than deflate's maximum expansion of the file)."""
    if on_disk < 18:
        return
    f.seek(on_disk - 4)
    isize = int.from_bytes(f.read(4), "little")
    f.seek(0)
    if limit < isize <= MAX_DEFLATE_RATIO * on_disk:
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
