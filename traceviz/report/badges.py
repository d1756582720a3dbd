"""The status badge a report shows for a verdict or headline.

A verdict's ``status`` is one of :data:`traceviz.analyze.verdicts.STATUSES`; a mode the run
skipped has status ``SKIPPED`` in the data and the badge alike (``check`` gates on it too). A
mode that failed keeps ``INCONCLUSIVE`` in the data, but its badge says why: ``FAILED``
(failed, crashed, timed out or produced mismatching outputs). Each badge has its own colour in
every format (``docs/comparison.md``, "Badges").
"""

from __future__ import annotations

from collections.abc import Iterable

from traceviz.analyze.compare.modes import ComparisonRow
from traceviz.analyze.verdicts import SKIPPED, STATUSES

FAILED = "FAILED"
#: Every badge a report may show.
BADGES: tuple[str, ...] = (*STATUSES, FAILED)
#: Mode statuses (manifest / comparison row) of a mode that ran, or may have.
_RAN = frozenset({"ok", "missing"})


def not_run_badge(row_status: str) -> str | None:
    """``SKIPPED`` / ``FAILED`` for a mode that did not run; ``None`` for one that did."""
    if row_status in _RAN:
        return None
    return SKIPPED if row_status == "skipped" else FAILED


def not_run_badges(rows: Iterable[ComparisonRow]) -> dict[str, str]:
    """``{mode: badge}`` of the comparison rows that did not run."""
    return {r.mode: b for r in rows if (b := not_run_badge(r.status)) is not None}


def badge(status: str, mode: str, not_run: dict[str, str]) -> str:
    """The badge of a verdict / headline ``status`` of ``mode``."""
    return not_run.get(mode, status)
