"""Pure analysis functions: a loaded :class:`~traceviz.trace.Trace` → frozen results."""

from traceviz.analyze.analysis import analyze
from traceviz.analyze.model import Analysis

__all__ = ["Analysis", "analyze"]
