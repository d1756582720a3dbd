"""``--strict``: exit 1 when a trace has a data-validity or ambiguity health warning.

The report is still produced (so the warnings can be read); the command then prints one line
naming the failing codes and exits 1. The failing codes (``HealthWarning.strict``) are
:data:`traceviz.analyze.health.validity.DATA_VALIDITY_CODES` and
:data:`traceviz.analyze.health.ambiguity.AMBIGUITY_CODES`; informational warnings
(``no_gpu_activity``, ``unlinked_activities``, ...) never fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from traceviz.cli.errors import fail

if TYPE_CHECKING:
    from traceviz.analyze.model import HealthWarning

StrictOpt = Annotated[
    bool,
    typer.Option("--strict", help="Exit 1 when a trace has a data-validity health warning "
                 "(invalid or negative ts/dur, degenerate steps, far-out events, stream overlap, "
                 "GPU before launch, shared correlation ids) or ambiguity warning (one-activity "
                 "launch with several activities, launch on several devices, flow ending before "
                 "it starts, nested steps); the report is still written."),
]


def strict_failures(health: Iterable[tuple[str, Sequence[HealthWarning]]]) -> list[str]:
    """``"label: code (count)"`` for each strict (data-validity or ambiguity) warning of each
    labelled trace."""
    return [f"{label}: {w.code} ({w.count})" for label, ws in health for w in ws if w.strict]


def enforce_strict(health: Iterable[tuple[str, Sequence[HealthWarning]]]) -> None:
    """Raise ``typer.Exit(1)`` after one stderr line when any strict warning is present."""
    failures = strict_failures(health)
    if failures:
        raise fail(f"--strict: {len(failures)} data-validity warning(s): {'; '.join(failures)}")
