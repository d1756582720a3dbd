"""The comparison report of one run directory's modes (or of trace files), as ``compare``
and ``report RUN_DIR`` render it: a payload in a format (:func:`comparison_output`) or text
fitted to the terminal (:func:`print_fitted_comparison`), and its default HTML file
(:func:`comparison_default`). Both take thresholds already parsed, once per command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from traceviz.analyze.verdicts import Thresholds
    from traceviz.api import Comparison


def _comparison(inputs: list[Path], baseline: str | None, thresholds: Thresholds,
                workers: int | None, health_out: list[tuple[str, Any]] | None) -> Comparison:
    """The comparison of ``inputs`` against ``baseline`` (loaded by ``workers``); each
    analysed mode's ``(mode, health warnings)`` appended to ``health_out`` (``--strict``)."""
    from traceviz.api import Comparison

    comparison = Comparison.from_paths(inputs, baseline, thresholds, workers=workers)
    if health_out is not None:
        health_out.extend(comparison.mode_health())
    return comparison


def comparison_output(
    inputs: list[Path], baseline: str | None, thresholds: Thresholds, fmt: str,
    plotlyjs: str, workers: int | None, health_out: list[tuple[str, Any]] | None = None,
) -> str:
    """Render the comparison of ``inputs`` (through :class:`traceviz.api.Comparison`, loaded
    by ``workers``; its default HTML path: :func:`comparison_default`). ``health_out``
    receives ``(mode, health warnings)`` of each analysed mode (``--strict``)."""
    return _comparison(inputs, baseline, thresholds, workers, health_out).render(fmt, plotlyjs)


def comparison_default(inputs: list[Path]) -> Path:
    """Where a comparison's HTML goes without ``-o``: the run dir's ``report.html``, else
    ``traceviz-compare.html``."""
    from traceviz.report.run_dir import is_run_dir

    return inputs[0] / "report.html" if is_run_dir(inputs[0]) else Path("traceviz-compare.html")


def print_fitted_comparison(inputs: list[Path], baseline: str | None, thresholds: Thresholds,
                            workers: int | None,
                            health_out: list[tuple[str, Any]] | None = None) -> None:
    """Print the text comparison fitted to the terminal's width in columns (columns dropped,
    not wrapped); ``workers`` and ``health_out`` as for :func:`comparison_output`."""
    from rich.console import Console

    comparison = _comparison(inputs, baseline, thresholds, workers, health_out)
    console = Console()
    console.print(comparison.text_renderable(console.width))
