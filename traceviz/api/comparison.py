"""``traceviz.compare(...) -> Comparison`` and ``traceviz.load_run(run_dir) -> Run``.

Thin wrappers over :mod:`traceviz.report.compare_report` (loading, comparing, the report
model) that add DataFrames, ``to_json()`` (exactly ``traceviz compare --format json``),
``to_html(path)`` and ``_repr_html_``. Definitions of rows, waterfalls and verdicts:
``docs/comparison.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceviz.errors import UsageError
from traceviz.lazy import pandas as pd

if TYPE_CHECKING:
    from traceviz.analyze.compare.modes import Comparison as ComparisonResult
    from traceviz.analyze.review.version_diff import VersionComparison
    from traceviz.analyze.verdicts import Thresholds, Verdict
    from traceviz.api.analysis import Analysis
    from traceviz.report.compare_report import Inputs
    from traceviz.report.model import Report

PathLike = str | os.PathLike


def as_thresholds(thresholds: Thresholds | Mapping[str, float] | None) -> Thresholds:
    """``None`` → defaults; a mapping ``{name: value}`` → defaults with those overridden
    (unknown names raise :class:`UsageError`); a :class:`Thresholds` as is."""
    from traceviz.analyze.verdicts import Thresholds, parse_thresholds

    if thresholds is None:
        return Thresholds()
    if isinstance(thresholds, Thresholds):
        return thresholds
    if isinstance(thresholds, Mapping):
        return parse_thresholds([f"{k}={v}" for k, v in thresholds.items()])
    raise UsageError(f"thresholds must be a Thresholds, a mapping or None, not "
                     f"{type(thresholds).__name__}")


class Comparison:
    """Several modes (or traces) against one baseline.

    DataFrames: :attr:`rows` (one per mode, the columns of
    :class:`~traceviz.analyze.compare.modes.ComparisonRow`), :attr:`verdicts` (mode, kind, status,
    explanation, evidence, thresholds), :attr:`waterfalls` (change in mean GPU period per step,
    ns, split into five parts). :attr:`result` is the frozen comparison.
    """

    def __init__(self, inputs: Inputs, result: ComparisonResult, report: Report) -> None:
        self._inputs = inputs
        self._result = result
        self._report = report

    @classmethod
    def from_inputs(cls, inputs: Inputs, baseline: str | None = None,
                    thresholds: Thresholds | Mapping[str, float] | None = None) -> Comparison:
        """Compare already loaded inputs (``baseline``: a mode name; default eager, else the
        first)."""
        from traceviz.report import compare_report

        result, report = compare_report.build(inputs, baseline, as_thresholds(thresholds))
        return cls(inputs, result, report)

    @classmethod
    def from_paths(cls, paths: list[Path], baseline: str | None = None,
                   thresholds: Thresholds | Mapping[str, float] | None = None, *,
                   workers: int | None = None) -> Comparison:
        """One run directory, or two or more trace files (modes named after the files);
        ``workers``: processes decoding each big trace and analysing it (``None``: every
        usable core, as :func:`traceviz.analyze`)."""
        from traceviz.report import compare_report
        from traceviz.trace.parallel import check_workers

        inputs = compare_report.load_inputs([Path(p) for p in paths],
                                            workers=check_workers(workers))
        return cls.from_inputs(inputs, baseline, thresholds)

    def mode_health(self) -> list[tuple[str, tuple[Any, ...]]]:
        """``(mode, health warnings)`` of every analysed mode (``--strict`` fails on the
        data-validity ones; ``docs/metrics.md``, "Trace health")."""
        return [(m.mode, m.analysis.health) for m in self._inputs.modes
                if m.analysis is not None]

    @property
    def result(self) -> ComparisonResult:
        return self._result

    @cached_property
    def versions(self) -> VersionComparison | None:
        """A ``profile NEW --against OLD`` run's old → new comparison, per mode (``None`` for
        other inputs; :mod:`traceviz.analyze.review.version_diff`)."""
        from traceviz.report.compare_report import versions_of

        return versions_of(self._inputs, self._result.thresholds)

    @property
    def report(self) -> Report:
        """The report model (sections, tables, figures) every renderer formats."""
        return self._report

    @property
    def baseline(self) -> str:
        return self._result.baseline

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(r.mode for r in self._result.rows)

    def __repr__(self) -> str:
        """The verdicts counted by the badge every report shows (a skipped mode's are SKIPPED,
        a failed mode's FAILED: :mod:`traceviz.report.badges`), in badge order."""
        from collections import Counter

        from traceviz.report.badges import BADGES, badge, not_run_badges

        not_run = not_run_badges(self._result.rows)
        counts = Counter(badge(v.status, v.mode, not_run) for v in self._result.verdicts)
        said = ", ".join(f"{counts[b]} {b}" for b in BADGES if counts[b]) or "no verdicts"
        return f"<traceviz.Comparison of {len(self.modes)} modes vs {self.baseline}: {said}>"

    @cached_property
    def rows(self) -> pd.DataFrame:
        """One row per mode; columns as :class:`~traceviz.analyze.compare.modes.ComparisonRow`
        (``None`` where not known)."""
        return pd.DataFrame([asdict(r) for r in self._result.rows])

    @cached_property
    def verdicts(self) -> pd.DataFrame:
        """One row per (mode, kind) decision: ``mode``, ``kind`` (speed, fusion, launch),
        ``status`` (WIN, NO_WIN, REGRESSION, INCONCLUSIVE; SKIPPED for a mode the run skipped),
        ``explanation``, ``evidence`` and ``thresholds`` (dicts)."""
        cols = ["mode", "kind", "status", "explanation", "evidence", "thresholds"]
        return pd.DataFrame([{c: getattr(v, c) for c in cols} for v in self._result.verdicts],
                            columns=cols)

    @cached_property
    def waterfalls(self) -> pd.DataFrame:
        """One row per non-baseline mode: ``mode``, ``baseline``, ``units``,
        ``baseline_period_ns``, ``period_ns``, ``delta_ns`` and the parts, float64 ns, adding
        up to ``delta_ns``. ``units == "unprofiled"`` (runs with the unprofiled split):
        ``gpu_busy_ns``, ``host_overhead_ns``, ``other_idle_ns`` and the cross-check
        ``issue_delta_ns``; ``"profiled"``: ``gpu_busy_ns``, ``host_wait_ns``,
        ``sync_wait_ns``, ``queued_ns``, ``graph_internal_ns``, ``other_idle_ns``
        (``docs/comparison.md``).
        Parts a row's kind lacks are NaN."""
        return pd.DataFrame([
            {"mode": w.mode, "baseline": w.baseline, "units": w.units,
             "baseline_period_ns": w.baseline_period_ns, "period_ns": w.period_ns,
             "delta_ns": w.delta_ns, **w.parts, **w.cross_check}
            for w in self._result.waterfalls
        ])

    @cached_property
    def unprofiled(self) -> pd.DataFrame:
        """One row per mode with an unprofiled split (paired blocks with host issue times):
        pair-level step and host issue ms per step of both sides, the GPU's lag behind the host
        (steps), host-bound flags, and the savings with their CIs (ms per step; the share as a
        fraction). Definitions: :mod:`traceviz.analyze.compare.unprofiled`."""
        rows = []
        for mode, s in self._result.unprofiled.items():
            share = s.issue_share
            rows.append({
                "mode": mode, "pairs": s.pairs,
                "baseline_ms": s.baseline.period_ms, "mode_ms": s.mode.period_ms,
                "baseline_issue_ms": s.baseline.issue_ms, "mode_issue_ms": s.mode.issue_ms,
                "baseline_lag_steps": s.baseline.lag_steps.value,
                "mode_lag_steps": s.mode.lag_steps.value,
                "baseline_host_bound": s.baseline.host_bound,
                "mode_host_bound": s.mode.host_bound,
                "saved_ms": s.saved_ms.value, "saved_ms_low": s.saved_ms.low,
                "saved_ms_high": s.saved_ms.high,
                "issue_saved_ms": s.issue_saved_ms.value,
                "issue_saved_ms_low": s.issue_saved_ms.low,
                "issue_saved_ms_high": s.issue_saved_ms.high,
                "issue_share": None if share is None else share.value,
                "issue_share_low": None if share is None else share.low,
                "issue_share_high": None if share is None else share.high,
            })
        return pd.DataFrame(rows)

    def verdict(self, mode: str, kind: str) -> Verdict | None:
        """The verdict of ``mode`` of ``kind`` ("speed", "fusion" or "launch"), ``None`` if none."""
        return next((v for v in self._result.verdicts if v.mode == mode and v.kind == kind),
                    None)

    def headlines(self) -> dict[str, str]:
        """One line per compared mode: the outcome first (speed-up and CI), then where the
        time went and the context (:mod:`traceviz.analyze.compare.headline`)."""
        return {h.mode: h.text for h in self._result.headlines}

    def to_dict(self) -> dict[str, Any]:
        from traceviz.report.compare_report import comparison_to_dict

        return comparison_to_dict(self._result, self._report)

    def to_json(self) -> str:
        """Exactly what ``traceviz compare ... --format json`` prints."""
        return self.render("json")

    def render(self, fmt: str = "html", plotlyjs: str = "inline") -> str:
        """The comparison report as ``html``, ``json``, ``md`` or ``text``."""
        from traceviz.report.compare_report import render

        return render(self._result, self._report, fmt, plotlyjs, self.versions)

    def text_renderable(self, width: int | None = None) -> Any:
        """A rich renderable of the comparison and verdicts that fits ``width`` columns."""
        from traceviz.report.compare_report import render_text

        return render_text(self._result, width=width, versions=self.versions)

    def to_html(self, path: PathLike, *, plotlyjs: str = "inline", force: bool = True) -> Path:
        """Write the HTML comparison report to ``path`` (atomically); return the path."""
        from traceviz.report.output import write_atomic

        return write_atomic(Path(path), self.render("html", plotlyjs), force=force)

    def _repr_html_(self) -> str:
        from traceviz.api.notebook import comparison_html

        return comparison_html(self)


class Run:
    """A run directory written by ``traceviz profile``: its manifest, the analysis of every
    mode's trace, and their comparison. ``workers``: the count its traces were loaded by,
    and :meth:`analysis` loads one again by."""

    def __init__(self, path: Path, inputs: Inputs, workers: int | None = None) -> None:
        self._path = path
        self._inputs = inputs
        self._workers = workers
        self._analyses: dict[str, Analysis] = {}

    @property
    def path(self) -> Path:
        return self._path

    @property
    def manifest(self) -> dict[str, Any]:
        """The run's ``manifest.json`` as a dict."""
        return dict(self._inputs.manifest or {})

    @property
    def modes(self) -> tuple[str, ...]:
        """Every mode in the manifest, in run order (including skipped or failed ones)."""
        return tuple(m.mode for m in self._inputs.modes)

    @property
    def traced_modes(self) -> tuple[str, ...]:
        """The modes that left a trace."""
        return tuple(m.mode for m in self._inputs.modes if m.analysis is not None)

    def __repr__(self) -> str:
        return f"<traceviz.Run {self._path}: modes {', '.join(self.modes)}>"

    def analysis(self, mode: str) -> Analysis:
        """The :class:`~traceviz.api.Analysis` of one mode's trace (loaded again on first
        access: the run keeps only the frozen results)."""
        from traceviz.api.analysis import Analysis
        from traceviz.trace import load

        entry = next((m for m in self._inputs.modes if m.mode == mode), None)
        if entry is None:
            raise UsageError(f"no mode {mode!r} in {self._path}; modes: {', '.join(self.modes)}")
        if entry.analysis is None or entry.trace_path is None:
            raise UsageError(f"mode {mode!r} of {self._path} left no trace")
        if mode not in self._analyses:
            self._analyses[mode] = Analysis(load(entry.trace_path, workers=self._workers),
                                            entry.analysis)
        return self._analyses[mode]

    def compare(self, baseline: str | None = None,
                thresholds: Thresholds | Mapping[str, float] | None = None) -> Comparison:
        """The comparison of the run's modes (``baseline``: a mode; default eager)."""
        return Comparison.from_inputs(self._inputs, baseline, thresholds)

    @cached_property
    def comparison(self) -> Comparison:
        """The comparison against the default baseline and thresholds."""
        return self.compare()

    def _repr_html_(self) -> str:
        from traceviz.api.notebook import comparison_html

        return comparison_html(self.comparison, title=f"traceviz run {self._path.name}")


def load_run(run_dir: PathLike, *, workers: int | None = None) -> Run:
    """Load a run directory from ``traceviz profile`` (``manifest.json`` + one trace per
    mode) and analyse every trace; ``workers``: processes decoding each big trace and
    analysing it (``None``: every usable core, as :func:`traceviz.analyze`)."""
    from traceviz.report import compare_report
    from traceviz.trace.parallel import check_workers

    path = Path(run_dir)
    check_workers(workers)
    if not compare_report.is_run_dir(path):
        raise UsageError(f"{path}: not a run directory (no {compare_report.MANIFEST})")
    return Run(path, compare_report.load_run_dir(path, workers=workers), workers)


def compare(baseline: PathLike | Run, *others: PathLike,
            thresholds: Thresholds | Mapping[str, float] | None = None,
            workers: int | None = None) -> Comparison:
    """Compare traces against ``baseline``: ``compare("eager.json.gz", "compiled.json.gz")``
    (modes are named after the files), or a run directory's modes:
    ``compare("runs/x")`` / ``compare(run)`` (baseline eager, else the first mode).

    ``thresholds``: verdict thresholds to override, ``{name: value}`` (``docs/comparison.md``)
    or a :class:`~traceviz.analyze.verdicts.Thresholds`. ``workers``: processes decoding each
    big trace and analysing it (``None``: every usable core; a :class:`Run` is already
    analysed).
    """
    from traceviz.report import compare_report
    from traceviz.trace.parallel import check_workers

    check_workers(workers)
    if isinstance(baseline, Run):
        if others:
            raise UsageError("compare(run) takes no other inputs")
        return baseline.compare(thresholds=thresholds)
    first = Path(baseline)
    if not others:
        if not compare_report.is_run_dir(first):
            raise UsageError(f"compare({str(first)!r}) needs a run directory, or a baseline "
                             "trace and at least one other trace")
        return load_run(first, workers=workers).compare(thresholds=thresholds)
    inputs = compare_report.load_inputs([first, *(Path(p) for p in others)], workers=workers)
    return Comparison.from_inputs(inputs, inputs.modes[0].mode, thresholds)
