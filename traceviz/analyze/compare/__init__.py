"""Modes against a baseline: is each mode faster, and where did the time go?

:mod:`.modes` builds the comparison (``compare(inputs) -> Comparison``) from the speed evidence
(:mod:`.speed`), the unprofiled host/GPU split (:mod:`.unprofiled`) and the launch verdict on it
(:mod:`.launch_unprofiled`), the waterfalls (:mod:`.waterfall`) and one headline per mode
(:mod:`.headline`). Rules: ``docs/comparison.md``.

``compare``, ``Comparison``, ``ComparisonRow`` and ``ModeInput`` are importable from here
(``from traceviz.analyze.compare import compare``), imported from :mod:`.modes` on first use:
importing one of this package's modules does not import the comparison and all it reads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from traceviz.analyze.compare.modes import Comparison, ComparisonRow, ModeInput, compare

__all__ = ["Comparison", "ComparisonRow", "ModeInput", "compare"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("traceviz.analyze.compare.modes"), name)
