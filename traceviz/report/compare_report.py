"""The comparison report: load a run directory or a set of traces, compare, render.

Entry points: :func:`load_inputs` (run dir or trace files → :class:`ModeInput` list),
:func:`build` (→ comparison + report model), :func:`render` (html / md / json / text), and
:func:`write_run_report`, which ``traceviz profile`` calls at the end of a run.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from traceviz.analyze.compare import Comparison, ModeInput, compare
from traceviz.analyze.verdicts import Thresholds
from traceviz.errors import UsageError
from traceviz.report.model import Report, build_comparison_report

MANIFEST = "manifest.json"
FORMATS = ("html", "json", "md", "text")
SCHEMA = "traceviz.compare/1"
_TRACE_SUFFIX = re.compile(r"(\.pt\.trace)?\.json(\.gz)?$")


@dataclass(frozen=True)
class Inputs:
    """What is being compared and where it came from."""

    modes: list[ModeInput]
    source: str  # the run dir, or the trace paths joined
    manifest: dict[str, Any] | None  # the whole run manifest, if any


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()


def _analyze(path: Path) -> tuple[Any, str | None]:
    import traceviz

    trace = traceviz.load(path)
    device = ", ".join(sorted({d.name for d in trace.meta.devices})) or None
    return traceviz.analyze(trace), device


def load_run_dir(run_dir: Path) -> Inputs:
    """Every mode of a run directory's manifest, with the analysis of its trace if it has one."""
    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{run_dir / MANIFEST}: cannot read the manifest ({exc})") from exc
    modes = manifest.get("modes") if isinstance(manifest, dict) else None
    if not isinstance(modes, dict) or not modes:
        raise UsageError(f"{run_dir / MANIFEST}: no modes recorded")
    inputs = []
    for mode, entry in modes.items():
        trace_name = (entry.get("profiled") or {}).get("trace") if isinstance(entry, dict) else None
        analysis = device = None
        path = run_dir / trace_name if trace_name else None
        if path is not None and path.is_file():
            analysis, device = _analyze(path)
        inputs.append(ModeInput(str(mode), str(path) if path else None, analysis,
                                entry if isinstance(entry, dict) else None, device))
    return Inputs(inputs, str(run_dir), manifest)


def load_traces(paths: list[Path]) -> Inputs:
    """One mode per trace file, named after the file (``eager.pt.trace.json.gz`` → ``eager``)."""
    inputs: list[ModeInput] = []
    seen: set[str] = set()
    for p in paths:
        label = _TRACE_SUFFIX.sub("", p.name) or p.name
        base, n = label, 2
        while label in seen:
            label, n = f"{base}#{n}", n + 1
        seen.add(label)
        analysis, device = _analyze(p)
        inputs.append(ModeInput(label, str(p), analysis, None, device))
    return Inputs(inputs, ", ".join(str(p) for p in paths), None)


def load_inputs(paths: list[Path]) -> Inputs:
    """A single run directory, or two or more trace files."""
    if len(paths) == 1 and is_run_dir(paths[0]):
        return load_run_dir(paths[0])
    dirs = [p for p in paths if p.is_dir()]
    if dirs:
        raise UsageError(f"{dirs[0]}: not a run directory (no {MANIFEST}); pass trace files "
                         "or one run directory")
    if len(paths) < 2:
        raise UsageError("compare needs a run directory or at least two traces")
    return load_traces(paths)


def _facts(inputs: Inputs, comparison: Comparison) -> list[tuple[str, str]]:
    m = inputs.manifest or {}
    facts: list[tuple[str, str]] = [("source", inputs.source)]
    wl = m.get("workload") or {}
    if wl.get("name"):
        desc = f" — {wl['description']}" if wl.get("description") else ""
        facts.append(("workload", f"{wl['name']}{desc}"))
    env = m.get("environment") or {}
    if env:
        labels = (("gpu", ""), ("torch", "torch "), ("triton", "triton "), ("cuda", "CUDA "),
                  ("driver", "driver "), ("python", "Python "))
        facts.append(("environment", " · ".join(f"{label}{env[k]}" for k, label in labels
                                                 if env.get(k))))
    else:
        devices = sorted({i.device for i in inputs.modes if i.device})
        facts.append(("device", ", ".join(devices) or "not recorded"))
    if m.get("created"):
        facts.append(("run started", str(m["created"])))
    facts.append(("baseline", comparison.baseline))
    return facts


def _warnings(inputs: Inputs) -> list[str]:
    out = []
    devices = {i.device for i in inputs.modes if i.device}
    if len(devices) > 1:
        out.append("the traces come from different GPUs (" + ", ".join(sorted(devices))
                   + "): differences are not only due to the mode")
    for i in inputs.modes:
        if i.analysis is not None:
            out += [f"{i.mode}: {w.message}" for w in i.analysis.health if w.code != "format"]
    return out


def build(
    inputs: Inputs, baseline: str | None = None, thresholds: Thresholds | None = None
) -> tuple[Comparison, Report]:
    """Compare the inputs and build the report model."""
    names = [i.mode for i in inputs.modes]
    if baseline is not None and baseline not in names:
        raise UsageError(f"--baseline {baseline!r} is not one of: {', '.join(names)}")
    comparison = compare(inputs.modes, baseline, thresholds)
    wl = (inputs.manifest or {}).get("workload") or {}
    if wl.get("name"):
        subject = str(wl["name"])
    elif len(names) <= 3:
        subject = " vs ".join(names)
    else:
        subject = f"{len(names)} traces"
    title = f"traceviz comparison: {subject}"
    report = build_comparison_report(comparison, title, _facts(inputs, comparison),
                                     _warnings(inputs))
    return comparison, report


def comparison_to_dict(comparison: Comparison, report: Report) -> dict[str, Any]:
    """The comparison JSON: rows, waterfalls (µs), verdicts, thresholds and every figure."""
    figures = {f.id: json.loads(f.figure.to_json()) for f in report.figures()}
    return {
        "schema": SCHEMA,
        "title": report.title,
        "facts": dict(report.facts),
        "warnings": list(report.warnings),
        "baseline": comparison.baseline,
        "rows": [asdict(r) for r in comparison.rows],
        "waterfalls": [
            {"mode": w.mode, "baseline": w.baseline, "statistic": "mean over steps with GPU work",
             "baseline_period_us": w.baseline_period_ns / 1000, "period_us": w.period_ns / 1000,
             "delta_us": w.delta_ns / 1000,
             "parts_us": {k.removesuffix("_ns"): v / 1000 for k, v in w.parts.items()}}
            for w in comparison.waterfalls
        ],
        "verdicts": [v.as_dict() for v in comparison.verdicts],
        "thresholds": comparison.thresholds.as_dict(),
        "notes": list(comparison.notes),
        "figures": figures,
    }


def render_text(comparison: Comparison) -> Any:
    """A rich renderable: the comparison table and the verdicts."""
    from rich.console import Group
    from rich.table import Table

    from traceviz.report.model import ROW_COLUMNS, row_cells

    rows = Table(title=f"Modes (baseline {comparison.baseline})", title_justify="left")
    for name, numeric in ROW_COLUMNS:
        rows.add_column(name, justify="right" if numeric else "left", overflow="fold",
                        min_width=None if numeric else 9, max_width=None if numeric else 28)
    for r in comparison.rows:
        rows.add_row(*row_cells(r))
    style = {"WIN": "bold green", "NO_WIN": "bold", "REGRESSION": "bold red",
             "INCONCLUSIVE": "bold yellow"}
    verdicts = Table(title="Verdicts", title_justify="left")
    for name in ("mode", "verdict", "status", "why"):
        verdicts.add_column(name, overflow="fold")
    for v in comparison.verdicts:
        verdicts.add_row(v.mode, v.kind, f"[{style[v.status]}]{v.status}[/]", v.explanation)
    return Group(rows, verdicts)


def render(comparison: Comparison, report: Report, fmt: str, plotlyjs: str = "inline") -> str:
    """The comparison in one of :data:`FORMATS` as a string."""
    if fmt == "html":
        from traceviz.report.html import render_html

        return render_html(report, plotlyjs)
    if fmt == "md":
        from traceviz.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from traceviz.report.jsonout import dumps

        return dumps(comparison_to_dict(comparison, report))
    if fmt == "text":
        import io

        from rich.console import Console

        console = Console(record=True, width=200, file=io.StringIO())
        console.print(render_text(comparison))
        return console.export_text()
    raise UsageError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def write_run_report(
    run_dir: Path, *, plotlyjs: str = "inline", force: bool = True,
    thresholds: Thresholds | None = None,
) -> Path:
    """Write ``RUN_DIR/report.html`` (the comparison of every mode) and return its path.

    Called by ``traceviz profile`` at the end of a run; the run directory is its own, so an
    earlier report there is replaced unless ``force`` is false.
    """
    from traceviz.report.output import write_atomic

    comparison, report = build(load_run_dir(run_dir), thresholds=thresholds)
    return write_atomic(run_dir / "report.html", render(comparison, report, "html", plotlyjs),
                        force=force)
