"""The memory limit a trace is checked against before decoding (``--max-memory``).

The loader holds one copy of the trace's (inflated) JSON text while it decodes; that size,
in bytes, is what is compared with the limit. The default is 80 % of the memory available
now (``MemAvailable`` in ``/proc/meminfo``, else free physical pages).
"""

from __future__ import annotations

import os
import re

from traceviz.errors import UsageError

#: Share of the available memory a trace may use when no limit is given.
DEFAULT_SHARE = 0.8

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")

_override: int | None = None


def parse_size(text: str) -> int:
    """``"4GB"`` → 4·10⁹, ``"500MiB"`` → 500·2²⁰, ``"1.5G"`` → 1.5·2³⁰, ``"123"`` → 123 bytes.

    Decimal units (kB, MB, GB, TB) are powers of 10; binary ones (KiB/K, MiB/M, GiB/G, TiB/T)
    powers of 2. Raises :class:`~traceviz.errors.UsageError` on anything else.
    """
    m = _SIZE.match(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS:
        raise UsageError(f"--max-memory {text!r}: expected a size such as 4GB, 500MiB or 2G")
    value = int(float(m.group(1)) * _UNITS[unit])
    if value <= 0:
        raise UsageError(f"--max-memory {text!r}: must be more than 0 bytes")
    return value


def format_size(n_bytes: int) -> str:
    """Human-readable decimal size: ``2.15 GB``, ``512.0 MB``, ``900 B``."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.2f} {unit}" if unit in ("TB", "GB") else \
                f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes} B"


def available_memory_bytes() -> int:
    """Memory available to a new allocation now, in bytes."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # pragma: no cover - no sysconf: no limit but the machine's
        return 2**62


def set_max_memory(n_bytes: int | None) -> None:
    """Set the process-wide limit used when ``load`` is given none (the CLI's ``--max-memory``);
    ``None`` restores the default."""
    global _override
    _override = n_bytes


def max_memory_bytes(explicit: int | None = None) -> tuple[int, str]:
    """The limit in bytes and where it comes from (for the refusal message)."""
    if explicit is not None:
        return explicit, "--max-memory"
    if _override is not None:
        return _override, "--max-memory"
    return int(available_memory_bytes() * DEFAULT_SHARE), "80% of available memory"
