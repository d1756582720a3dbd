"""Pure analysis functions: a loaded :class:`~traceviz.trace.Trace` → frozen results.

``analyze`` and ``Analysis`` are imported on first use: importing the package (which
``import traceviz`` does) costs nothing, and ``traceviz.analyze(path)`` imports the analysis
while the loader's worker processes decode the trace.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.model import Analysis

__all__ = ["Analysis", "analyze"]

_HOME = {"analyze": "traceviz.analyze.analysis", "Analysis": "traceviz.analyze.model"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
