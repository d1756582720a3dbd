"""Trace loading: file bytes → validated, columnar :class:`Trace` (no torch)."""

from traceviz.trace.loader import load
from traceviz.trace.tables import DeviceInfo, Trace, TraceMeta

__all__ = ["DeviceInfo", "Trace", "TraceMeta", "load"]
