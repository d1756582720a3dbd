"""pandas, imported on first use.

``import traceviz`` and the CLI's start do not import pandas (0.3–0.8 s): a command that never
builds a table does not pay for it, and the loader imports it while its worker processes decode
a big trace (:func:`traceviz.trace.parallel.decode_spans_parallel`), so the import costs no
wall time there. Modules write ``from traceviz.lazy import pandas as pd`` and use ``pd`` as
usual; type checkers see the real module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any


class LazyModule:
    """Stands for the module ``name``, imported when an attribute is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


if TYPE_CHECKING:
    import pandas as pandas
else:
    pandas = LazyModule("pandas")
