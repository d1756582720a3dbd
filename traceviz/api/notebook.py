"""``_repr_html_`` of the API objects: a summary table, the headlines/verdicts and the main
figure, so a notebook cell shows them without extra calls.

Only formatting; every string is escaped. plotly is imported here, when a notebook asks for the
HTML, never on ``import traceviz``. A figure embeds plotly.js inline by default (it draws
offline; about 4.8 MB per figure output); :func:`set_plotlyjs` ``("cdn")`` opts in to loading it
from plotly's CDN instead (small outputs, needs internet to draw).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from traceviz.api.analysis import Analysis
    from traceviz.api.comparison import Comparison

_STYLE = {"WIN": "#1e6b34", "NO_WIN": "#3d4452", "REGRESSION": "#a12622",
          "INCONCLUSIVE": "#7a5a00", "SKIPPED": "#2f4f75", "FAILED": "#6e2477"}
#: Where notebook figures get plotly.js: "inline" (default, offline) or "cdn".
_PLOTLYJS = {"mode": "inline"}


def set_plotlyjs(mode: str) -> None:
    """How notebook figures load plotly.js: ``"inline"`` (default: embedded, draws offline)
    or ``"cdn"`` (a ``<script src>`` to cdn.plot.ly: small outputs, needs internet)."""
    if mode not in ("inline", "cdn"):
        raise ValueError(f"plotlyjs must be 'inline' or 'cdn', not {mode!r}")
    _PLOTLYJS["mode"] = mode


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(fig: Any) -> str:
    import plotly.io as pio

    inline = _PLOTLYJS["mode"] == "inline"
    return pio.to_html(fig, full_html=False, include_plotlyjs=True if inline else "cdn",
                       config={"displaylogo": False, "responsive": True})


def _num(value: float | None, fmt: str = ",.1f") -> str:
    return "–" if value is None else format(value, fmt)


def analysis_html(a: Analysis) -> str:
    """Summary table, trace-health warnings (the headlines of one trace) and the per-step
    breakdown figure."""
    from pathlib import Path

    from traceviz.report import figures

    s = a.summary
    share = "–" if s.cpu_bound_share is None else f"{s.cpu_bound_share:.1%}"
    rows = [
        ["device", _e(s.device or "not recorded")],
        ["steps (with GPU work)", f"{s.steps} ({s.steps_with_gpu})"],
        ["kernels / step", _num(s.kernels_per_step, "g")],
        ["launch calls / step", _num(s.launches_per_step, "g")],
        ["GPU activities / launch", _num(s.activities_per_launch, ".2f")],
        ["GPU period / step (µs)", _num(s.period_us)],
        ["GPU busy / step (µs)", _num(s.gpu_busy_us)],
        ["host wait / step (µs)", _num(s.host_wait_us)],
        ["cpu_bound_share (median step)", share],
        ["idle gaps", f"{s.gaps:,}"],
        ["CUDA-graph replays", f"{s.graph_replays:,}"],
        ["torch.compile markers", "yes" if s.compiled else "no"],
    ]
    parts = [f"<h3>traceviz analysis: {_e(Path(s.trace).name)}</h3>",
             "<p>Per-step values: medians over the steps with GPU work.</p>",
             _table(["", "value"], rows)]
    warnings = a.result.health
    if warnings:
        items = "".join(f"<li>{_e(w.message)}</li>" for w in warnings)
        parts.append(f"<p><b>Trace health</b></p><ul>{items}</ul>")
    if (a.result.steps.column("period_ns") > 0).any():
        parts.append(_figure(figures.step_breakdown(a.result)))
    return "<div>" + "".join(parts) + "</div>"


def comparison_html(c: Comparison, title: str | None = None) -> str:
    """Verdicts, per-mode headlines (when the comparison has them), the side-by-side table and
    the step-time figure."""
    from traceviz.report import figures
    from traceviz.report.badges import badge, not_run_badges
    from traceviz.report.comparison_model import ROW_COLUMNS, row_cells

    r = c.result
    not_run = not_run_badges(r.rows)
    shown = [(v, badge(v.status, v.mode, not_run)) for v in r.verdicts]
    verdicts = [[_e(v.mode), _e(v.kind),
                 f'<b style="color:{_STYLE.get(b, "inherit")}">{_e(b)}</b>',
                 _e(v.explanation)] for v, b in shown]
    parts = [f"<h3>{_e(title or c.report.title)}</h3>",
             f"<p>Baseline: {_e(r.baseline)}. Definitions: docs/comparison.md.</p>",
             _table(["mode", "verdict", "status", "why"], verdicts)]
    headlines = c.headlines()
    if headlines:
        items = "".join(f"<li><b>{_e(m)}</b>: {_e(h)}</li>" for m, h in headlines.items())
        parts.append(f"<ul>{items}</ul>")
    parts.append(_table([name for name, _ in ROW_COLUMNS],
                        [[_e(x) for x in row_cells(row)] for row in r.rows]))
    parts.append(_figure(figures.compare_times(r)))
    return "<div>" + "".join(parts) + "</div>"
