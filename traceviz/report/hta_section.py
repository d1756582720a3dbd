"""The "HTA" report section: an :class:`~traceviz.holistic.HtaResult` as Markdown or as an HTML
fragment. Both render the same tables; they format, never compute. Times are HTA's µs.

Every string that comes from HTA or from the trace (file name, API names, categories, errors)
is escaped: ``html.escape`` in HTML, table pipes and line breaks in Markdown.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from traceviz.holistic import HtaResult

TITLE = "HTA (Holistic Trace Analysis)"
_IDLE_CATEGORIES = ("host_wait", "kernel_wait", "other")


@dataclass(frozen=True)
class _Table:
    """One small table: a title, column names and already formatted cells."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""


def hta_markdown(result: HtaResult) -> str:
    """The section as GitHub-flavoured Markdown (starts with a ``##`` heading)."""
    out = [f"## {TITLE}", "", _md(_summary(result)), ""]
    for table in _tables(result):
        out += [f"### {_md(table.title)}", ""]
        out.append("| " + " | ".join(_md(h) for h in table.header) + " |")
        out.append("| " + " | ".join(["---"] + ["---:"] * (len(table.header) - 1)) + " |")
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in table.rows]
        if table.caption:
            out += ["", _md(table.caption)]
        out.append("")
    for heading, items in _lists(result):
        out += [f"### {heading}", ""] + [f"- {_md(item)}" for item in items] + [""]
    return "\n".join(out).rstrip() + "\n"


def hta_html(result: HtaResult) -> str:
    """The section as an HTML fragment: ``<section id="hta">`` with small tables, no scripts."""
    e = html.escape
    out = ['<section id="hta">', f"<h2>{e(TITLE)}</h2>", f"<p>{e(_summary(result))}</p>"]
    for table in _tables(result):
        out.append(f'<table class="hta-table"><caption>{e(table.title)}</caption>')
        out.append("<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in table.header))
        out.append("</tr></thead><tbody>")
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in table.rows]
        out.append("</tbody></table>")
        if table.caption:
            out.append(f'<p class="hta-caption">{e(table.caption)}</p>')
    for heading, items in _lists(result):
        out.append(f"<h3>{e(heading)}</h3><ul>")
        out += [f"<li>{e(item)}</li>" for item in items]
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out) + "\n"


# --- content ----------------------------------------------------------------------------------


def _summary(r: HtaResult) -> str:
    version = f"HTA {r.hta_version}" if r.hta_version else "HTA (not installed)"
    rounding = "ns rounding disabled" if r.ns_rounding_disabled else "ns rounded to whole µs"
    last = "last ProfilerStep kept" if r.include_last_profiler_step else "last ProfilerStep dropped"
    ops = ", ".join(f"{n:,} {cat}" for cat, n in r.gpu_ops.items())
    text = (
        f"{version} on {Path(r.trace_path).name}, rank {r.rank} ({r.rank_source}); "
        f"{rounding}; {last}; {r.seconds:.1f} s."
    )
    return text + (f" GPU ops analysed by HTA: {ops}." if ops else "")


def _tables(r: HtaResult) -> list[_Table]:
    tables = []
    if r.temporal_breakdown:
        tables.append(_temporal_table(r.temporal_breakdown))
    if r.idle_time_breakdown:
        tables.append(_idle_table(r.idle_time_breakdown))
    if r.launch_calls:
        tables.append(
            _Table(
                "Launch calls by API (runtime/driver calls correlated with GPU ops)",
                ("API", "calls", "in HTA's launch stats"),
                tuple(
                    (api, f"{c['calls']:,}", f"{c['in_launch_stats']:,}")
                    for api, c in r.launch_calls.items()
                ),
            )
        )
    if r.launch_stats and r.launch_stats["launches"]:
        tables.append(_launch_table(r.launch_stats))
    if r.critical_path:
        tables.append(_critical_path_table(r.critical_path))
    return tables


def _temporal_table(tb: dict[str, float]) -> _Table:
    return _Table(
        "Temporal breakdown (µs)",
        ("kernel time", "idle", "compute", "non-compute"),
        (
            (
                _us(tb["kernel_time_us"]),
                f"{_us(tb['idle_time_us'])} ({tb['idle_pct']:.2f} %)",
                f"{_us(tb['compute_time_us'])} ({tb['compute_pct']:.2f} %)",
                f"{_us(tb['non_compute_time_us'])} ({tb['non_compute_pct']:.2f} %)",
            ),
        ),
        "kernel time: first → last event on any stream (HTA spans GPU ops and any other row that "
        "has a stream).",
    )


def _idle_table(rows: tuple[dict[str, Any], ...]) -> _Table:
    by_stream: dict[int, dict[str, float]] = {}
    for row in rows:
        by_stream.setdefault(row["stream"], {})[row["category"]] = row["idle_time_us"]
    cells = []
    for stream, cats in by_stream.items():
        total = sum(cats.values())
        cells.append((str(stream), *(_us(cats.get(c, 0.0)) for c in _IDLE_CATEGORIES), _us(total)))
    return _Table(
        "Idle time breakdown per stream (µs)",
        ("stream", "host wait", "kernel wait", "other", "total"),
        tuple(cells),
    )


def _launch_table(ls: dict[str, Any]) -> _Table:
    rows = []
    for key, label in (
        ("cpu_duration_us", "launch call duration"),
        ("gpu_duration_us", "GPU op duration"),
        ("launch_delay_us", "launch delay"),
    ):
        stats = ls[key]
        if stats:
            rows.append((label, *(_us(stats[s]) for s in ("mean", "p50", "p95", "max"))))
    caption = (
        f"{ls['launches']:,} launches; {ls['runtime_outliers']:,} launch calls over "
        f"{ls['runtime_cutoff_us']} µs, {ls['launch_delay_outliers']:,} launch delays over "
        f"{ls['launch_delay_cutoff_us']} µs, {ls['short_gpu_ops']:,} GPU ops shorter than "
        "their launch call."
    )
    return _Table(
        "Kernel launch statistics (µs)", ("", "mean", "p50", "p95", "max"), tuple(rows), caption
    )


def _critical_path_table(cp: dict[str, Any]) -> _Table:
    rows = tuple(
        (b["bound_by"] or "(dependency edges)", _us(b["duration_us"]), f"{b['pct']:.2f} %")
        for b in cp.get("bound_by", ())
    )
    return _Table(
        f"Critical path, {cp['window']} (µs)",
        ("bound by", "µs", "share"),
        rows,
        f"critical path length {_us(cp['length_us'])} µs.",
    )


def _lists(r: HtaResult) -> list[tuple[str, list[str]]]:
    out = []
    if r.notes:
        out.append(("Where HTA's definitions differ from traceviz's", list(r.notes)))
    if r.errors:
        out.append(("HTA errors", [f"{name}: {msg}" for name, msg in r.errors.items()]))
    return out


def _us(value: float) -> str:
    return f"{value:,.3f}"


def _md(text: str) -> str:
    """Make a string safe inside a Markdown table cell or list item (control characters
    shown escaped: :func:`~traceviz.report.inert.visible`)."""
    from traceviz.report.inert import visible

    return visible(" ".join(str(text).split())).replace("\\", "\\\\").replace("|", "\\|")
