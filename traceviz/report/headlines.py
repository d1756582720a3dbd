"""Per-mode headlines kept in a run's manifest (``traceviz profile`` writes each mode's
``headline`` from the comparison, :mod:`traceviz.analyze.compare.headline`); the profile summary
shows them where they exist, and nothing breaks where they do not (older manifests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def manifest_headlines(modes: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``{mode: headline}`` from manifest mode entries (``headline`` or
    ``analysis_summary.headline``), for ``traceviz profile``'s summary."""
    out: dict[str, str] = {}
    for mode, e in modes.items():
        text = e.get("headline") or (e.get("analysis_summary") or {}).get("headline")
        if text:
            out[str(mode)] = str(text)
    return out
