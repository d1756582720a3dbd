"""Read a trace file's bytes: gzip is recognised by its magic number, not by the suffix."""

from __future__ import annotations

import zlib
from pathlib import Path

from traceviz.errors import TraceDecodeError, TraceNotFoundError

GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(data: bytes, path: Path) -> bytes:
    """Decompress gzip bytes (multi-member aware) with ISA-L when available."""
    try:
        from isal import igzip  # fast path: ~3x zlib on x86-64

        return igzip.decompress(data)
    except ImportError:  # pragma: no cover - isal is a declared dependency
        import gzip

        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceDecodeError(f"{path}: corrupt gzip data ({exc})") from None
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise TraceDecodeError(f"{path}: corrupt or truncated gzip data ({exc})") from None


def read_trace_bytes(path: str | Path) -> tuple[bytes, bool, int]:
    """Return ``(json_bytes, was_gzipped, size_on_disk_bytes)`` for ``path``."""
    p = Path(path)
    if not p.exists():
        raise TraceNotFoundError(f"{p}: no such file")
    if not p.is_file():
        raise TraceNotFoundError(f"{p}: not a file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise TraceNotFoundError(f"{p}: cannot read ({exc.strerror})") from None
    on_disk = len(raw)
    if raw[:2] == GZIP_MAGIC:
        return _gunzip(raw, p), True, on_disk
    return raw, False, on_disk
