"""Unit conversion for display: integer ns → µs / ms; fractions → percent text."""

from __future__ import annotations


def us(ns: int | float | None) -> float | None:
    """Nanoseconds → microseconds, rounded to the nanosecond (3 decimals)."""
    return None if ns is None else round(ns / 1000, 3)


def ms(ns: int | float | None) -> float | None:
    """Nanoseconds → milliseconds, rounded to the nanosecond (6 decimals)."""
    return None if ns is None else round(ns / 1_000_000, 6)


def share(x: float | None) -> float | None:
    """A fraction rounded to 6 decimals for output."""
    return None if x is None else round(x, 6)


def pct(share: float | None, digits: int = 0) -> str:
    """A fraction as percent text with ``digits`` decimals (``0.256`` → ``"26%"``); ``–`` for
    ``None``."""
    return "–" if share is None else f"{share * 100:.{digits}f}%"
