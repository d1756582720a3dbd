"""Optional bridge to Holistic Trace Analysis (``pip install 'traceviz[hta]'``).

Importing this package does not import ``hta``; :func:`run_hta` does, when called.
"""

from traceviz.holistic.notes import Totals, definition_notes
from traceviz.holistic.result import HtaResult
from traceviz.holistic.run import hta_available, read_rank, run_hta

__all__ = [
    "HtaResult",
    "Totals",
    "definition_notes",
    "hta_available",
    "read_rank",
    "run_hta",
]
