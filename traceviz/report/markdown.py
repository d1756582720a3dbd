"""Render a :class:`~traceviz.report.model.Report` as GitHub-flavoured Markdown (PR comments).

Tables and verdicts only; figures are listed by title (they live in the HTML report). Text
from traces is escaped so it cannot break a table or inject HTML, and its control characters
are shown escaped (:func:`~traceviz.report.inert.visible`).
"""

from __future__ import annotations

import html

from traceviz.report.inert import visible
from traceviz.report.model import Figure, Report, Table

_STATUS_ICON = {"WIN": "✅", "NO_WIN": "➖", "REGRESSION": "❌", "INCONCLUSIVE": "❔",
                "SKIPPED": "⏭️", "FAILED": "💥"}


def _md(text: str) -> str:
    """Escape for a Markdown table cell: whitespace runs (newlines) to one space, control
    characters shown escaped, then HTML, pipes, backticks, emphasis."""
    out = visible(" ".join(text.split()))
    out = html.escape(out, quote=False).replace("|", "\\|").replace("`", "\\`")
    return out.replace("*", "\\*").replace("_", "\\_")


def _cell(text: str) -> str:
    if text in _STATUS_ICON:
        return f"{_STATUS_ICON[text]} **{_md(text)}**"
    return _md(text)


def _table(t: Table, title: str | None) -> list[str]:
    """``t`` under its ``title`` (``None``: none, the section's heading says it); a table with
    no row is the word "none", not a row of dashes."""
    numeric = t.numeric or (False,) * len(t.columns)
    lines = [f"**{_md(title)}**", ""] if title else []
    if t.rows:
        lines += ["| " + " | ".join(_md(c) for c in t.columns) + " |",
                  "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
        lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in t.rows]
    else:
        lines.append("_none_")
    if t.note:
        lines += ["", f"_{_md(t.note)}_"]
    return [*lines, ""]


def _health(report: Report) -> list[str]:
    """The trace-health block (empty without warnings)."""
    if not report.warnings:
        return []
    return ["> **Trace health**", ">", *(f"> - {_md(w)}" for w in report.warnings), ""]


def render_markdown(report: Report) -> str:
    """The report as Markdown: header facts, the headline section (when there is one), the
    trace-health warnings, then every other section's tables (HTML's order)."""
    lines = [f"## {_md(report.title)}", ""]
    lines += [f"- **{_md(k)}**: {_md(v)}" for k, v in report.facts]
    lines.append("")
    at = next((i + 1 for i, s in enumerate(report.sections) if s.id == "headline"), 0)
    if at == 0:
        lines += _health(report)
    for n, s in enumerate(report.sections, 1):
        tables = [i for i in s.items if isinstance(i, Table)]
        figs = [i for i in s.items if isinstance(i, Figure)]
        if tables or s.intro:
            lines += [f"### {_md(s.title)}", "", _md(s.intro), ""]
            for t in tables:
                lines += _table(t, s.table_title(t))
            if figs:
                lines += [f"_Figures in the HTML report: {len(figs)}._", ""]
        if n == at:
            lines += _health(report)
    return "\n".join(lines).rstrip() + "\n"
