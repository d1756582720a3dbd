"""The per-mode headline hook: one line per mode saying what changed, when the comparison
provides it.

Comparison rows (:class:`~traceviz.analyze.compare.ComparisonRow`) or manifest mode entries
may carry a ``headline``; every display (terminal, notebook) asks :func:`mode_headlines` and
shows what it returns, so a headline appears wherever it exists and nothing breaks where it
does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def mode_headlines(rows: Iterable[Any]) -> dict[str, str]:
    """``{mode: headline}`` for the comparison rows carrying a non-empty ``headline``."""
    out: dict[str, str] = {}
    for r in rows:
        text = getattr(r, "headline", None)
        if text:
            out[str(r.mode)] = str(text)
    return out


def manifest_headlines(modes: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``{mode: headline}`` from manifest mode entries (``headline`` or
    ``analysis_summary.headline``), for ``traceviz profile``'s summary."""
    out: dict[str, str] = {}
    for mode, e in modes.items():
        text = e.get("headline") or (e.get("analysis_summary") or {}).get("headline")
        if text:
            out[str(mode)] = str(text)
    return out
