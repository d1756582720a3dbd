"""``traceviz.analyze(path) -> Analysis``: one trace's analysis for notebooks and scripts.

:class:`Analysis` wraps the loaded :class:`~traceviz.trace.Trace` and the frozen
:class:`traceviz.analyze.model.Analysis` (``.result``) and adds what a notebook wants:
DataFrames (built on first access, see :mod:`traceviz.api.frames`), a :class:`Summary`, the
report in every CLI format (``to_json()`` is byte-for-byte ``traceviz report --format json``),
the Perfetto overlay export and ``_repr_html_``. It computes nothing itself.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceviz.api import frames
from traceviz.errors import TracevizError, UsageError
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace

if TYPE_CHECKING:
    from traceviz.analyze import model
    from traceviz.export.perfetto import ExportResult
    from traceviz.holistic.result import HtaResult

PathLike = str | os.PathLike
FORMATS = ("html", "json", "md", "text")
#: Width of the text report when it is not printed to a terminal.
TEXT_WIDTH = 140


class HtaMissingError(TracevizError):
    """``--hta`` / :meth:`Analysis.hta` was asked for but HTA is not installed."""

    def __init__(self) -> None:
        super().__init__("Holistic Trace Analysis is not installed; install it with: "
                         "pip install 'traceviz[hta]'")


@dataclass(frozen=True)
class Summary:
    """The headline numbers of one trace. Per-step values are medians over the steps with GPU
    work (as in ``docs/metrics.md``); times in microseconds (``*_us = ns / 1000``)."""

    trace: str
    device: str | None
    steps: int
    steps_with_gpu: int
    kernels_per_step: float
    launches_per_step: float
    activities_per_launch: float | None
    period_us: float
    gpu_busy_us: float
    host_wait_us: float
    sync_wait_us: float
    queued_us: float
    cpu_bound_share: float | None
    gaps: int
    graph_replays: int
    triton_kernels: int
    compiled: bool
    health: tuple[str, ...]  # warning codes


class Analysis:
    """One trace analysed. Construct with :func:`traceviz.analyze` (or :meth:`from_trace`).

    DataFrame properties (columns and dtypes in ``docs/api.md``): :attr:`steps`, :attr:`gaps`,
    :attr:`kernels`, :attr:`kernel_families`, :attr:`graph_replays`, :attr:`health`.
    The frozen results stay available as :attr:`result` (``.totals``, ``.per_step``,
    ``.compile``, ``.gap_stats``, ...).
    """

    def __init__(self, trace: Trace, result: model.Analysis) -> None:
        self._trace = trace
        self._result = result

    @classmethod
    def from_trace(cls, trace: Trace, *, workers: int | None = None) -> Analysis:
        """Analyse an already loaded trace (``workers``: as :func:`traceviz.analyze`)."""
        from traceviz.analyze.analysis import analyze as analyze_trace

        return cls(trace, analyze_trace(trace, workers=workers))

    @property
    def trace(self) -> Trace:
        """The loaded trace (columnar tables + metadata)."""
        return self._trace

    @property
    def result(self) -> model.Analysis:
        """The frozen analysis the report is made from."""
        return self._result

    @property
    def path(self) -> str:
        return self._trace.meta.path

    def __repr__(self) -> str:
        s = self.summary
        return (f"<traceviz.Analysis {Path(s.trace).name}: {s.steps} steps, "
                f"{s.kernels_per_step:g} kernels/step, {s.gaps} gaps>")

    # --- DataFrames ---------------------------------------------------------------------------

    @cached_property
    def steps(self) -> pd.DataFrame:
        """One row per step; see :func:`traceviz.api.frames.steps_frame`."""
        return frames.steps_frame(self._result)

    @cached_property
    def communication(self) -> pd.DataFrame:
        """One row per step: GPU busy split into compute and communication; see
        :func:`traceviz.api.frames.comm_frame` (no rows without communication kernels)."""
        return frames.comm_frame(self._result)

    @cached_property
    def gaps(self) -> pd.DataFrame:
        """One row per idle gap; see :func:`traceviz.api.frames.gaps_frame`."""
        return frames.gaps_frame(self._trace, self._result)

    @cached_property
    def kernels(self) -> pd.DataFrame:
        """One row per distinct GPU activity name; see :func:`traceviz.api.frames.kernels_frame`."""
        return frames.kernels_frame(self._trace, self._result)

    @cached_property
    def kernel_families(self) -> pd.DataFrame:
        """One row per kernel family; see :func:`traceviz.api.frames.kernel_families_frame`."""
        return frames.kernel_families_frame(self._result)

    @cached_property
    def graph_replays(self) -> pd.DataFrame:
        """One row per CUDA-graph replay; see :func:`traceviz.api.frames.graph_replays_frame`."""
        return frames.graph_replays_frame(self._result)

    @cached_property
    def health(self) -> pd.DataFrame:
        """One row per trace-health warning (``code``, ``message``, ``count``)."""
        return frames.health_frame(self._result)

    @cached_property
    def summary(self) -> Summary:
        r, m = self._result, self._trace.meta
        p, t = r.per_step, r.totals
        return Summary(
            trace=m.path,
            device=", ".join(sorted({d.name for d in m.devices})) or None,
            steps=t.steps,
            steps_with_gpu=t.steps_with_gpu,
            kernels_per_step=p.kernels,
            launches_per_step=p.launches,
            activities_per_launch=p.kernels_per_launch,
            period_us=p.period_ns / 1000,
            gpu_busy_us=p.gpu_busy_ns / 1000,
            host_wait_us=p.host_wait_ns / 1000,
            sync_wait_us=p.sync_wait_ns / 1000,
            queued_us=p.queued_ns / 1000,
            cpu_bound_share=p.cpu_bound_share,
            gaps=len(r.gaps),
            graph_replays=len(r.graph_replays),
            triton_kernels=t.triton_kernels,
            compiled=r.compile.compiled,
            health=tuple(w.code for w in r.health),
        )

    # --- reports ------------------------------------------------------------------------------

    def to_dict(self, *, max_step_rows: int | None = None) -> dict[str, Any]:
        """The JSON report as plain data (µs times; schema ``traceviz.report/1``). Per-step
        rows for at most ``max_step_rows`` steps (``None``: the default, 1000; ``0``: none),
        ``step_summary`` over all of them."""
        from traceviz.report.jsonout import analysis_to_dict

        return analysis_to_dict(self._trace, self._result, max_step_rows)

    def to_json(self, *, max_step_rows: int | None = None) -> str:
        """Exactly what ``traceviz report TRACE --format json [--max-step-rows N]`` prints."""
        import msgspec

        from traceviz.report.jsonout import analysis_document

        encoded = msgspec.json.encode(analysis_document(self._trace, self._result,
                                                        max_step_rows))
        return msgspec.json.format(encoded, indent=2).decode() + "\n"

    def render(self, fmt: str = "html", plotlyjs: str = "inline",
               text_width: int = TEXT_WIDTH, *, max_step_rows: int | None = None) -> str:
        """The report as ``html``, ``json``, ``md`` or ``text`` (what ``traceviz report``
        writes). ``plotlyjs`` (HTML): "inline" works offline, "cdn" is small.
        ``max_step_rows``: list at most this many steps (``None``: the default, 1000), with
        statistics over all steps when the trace has more (:mod:`traceviz.report.step_rows`)."""
        if fmt == "json":
            return self.to_json(max_step_rows=max_step_rows)
        if fmt == "text":
            from rich.console import Console

            console = Console(record=True, width=text_width, file=io.StringIO())
            console.print(self.text_renderable(text_width, max_step_rows=max_step_rows))
            return console.export_text()
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
        from traceviz.report.model import build_trace_report

        report = build_trace_report(self._trace, self._result, max_step_rows)
        if fmt == "md":
            from traceviz.report.markdown import render_markdown

            return render_markdown(report)
        from traceviz.report.html import render_html

        return render_html(report, plotlyjs, perfetto=self.perfetto_hint())

    def text_renderable(self, width: int | None = None, *,
                        max_step_rows: int | None = None) -> Any:
        """A rich renderable of the text report that fits ``width`` columns."""
        from traceviz.report.text import render_text

        return render_text(self._trace, self._result, width=width, max_step_rows=max_step_rows)

    def to_html(self, path: PathLike, *, plotlyjs: str = "inline", force: bool = True,
                max_step_rows: int | None = None) -> Path:
        """Write the HTML report to ``path`` (atomically) and return the path written."""
        from traceviz.report.output import write_atomic

        return write_atomic(Path(path), self.render("html", plotlyjs,
                                                    max_step_rows=max_step_rows), force=force)

    def perfetto_hint(self) -> tuple[str, str | None]:
        """What the HTML report says about the Perfetto overlay: the command that writes it,
        and the overlay file's URI when one already lies in the working directory (where
        ``traceviz export`` writes by default) or beside the trace (else ``None``)."""
        from traceviz.export.perfetto import default_output

        trace = Path(self._trace.meta.path)
        out = default_output(trace)
        command = f"traceviz export {trace.name} -o {out.name}"
        found = next((p for p in (out, default_output(trace, trace.parent)) if p.is_file()), None)
        return command, (found.resolve().as_uri() if found is not None else None)

    def export_perfetto(self, out: PathLike, *, force: bool = False) -> ExportResult:
        """Write the trace plus traceviz's overlay tracks for ui.perfetto.dev / chrome://tracing
        (see ``docs/api.md``); ``out`` ending in ``.gz`` is gzip-compressed."""
        from traceviz.export.perfetto import write_overlay

        return write_overlay(Path(self._trace.meta.path), Path(out), self._trace, self._result,
                             force=force)

    def hta(self, traceviz_overlap: float | None = None) -> HtaResult:
        """Holistic Trace Analysis's breakdowns for this trace (raises :class:`HtaMissingError`
        when HTA is not installed). ``traceviz_overlap``: this rank's communication/computation
        overlap by traceviz's definition (0–1, from the run's rank analysis), for the note
        beside HTA's (``docs/hta.md``)."""
        from traceviz.holistic import hta_available, run_hta

        if not hta_available():
            raise HtaMissingError()
        return run_hta(self._trace.meta.path, totals=self._result.totals,
                       traceviz_overlap=traceviz_overlap)

    def _repr_html_(self) -> str:
        from traceviz.api.notebook import analysis_html

        return analysis_html(self)
