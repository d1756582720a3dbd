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


def _table(t: Table) -> list[str]:
    numeric = t.numeric or (False,) * len(t.columns)
    lines = [f"**{_md(t.title)}**", "",
             "| " + " | ".join(_md(c) for c in t.columns) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in t.rows]
    if not t.rows:
        lines.append("| " + " | ".join("–" for _ in t.columns) + " |")
    if t.note:
        lines += ["", f"_{_md(t.note)}_"]
    return [*lines, ""]


def render_markdown(report: Report) -> str:
    """The report as Markdown: header facts, warnings, then every section's tables."""
    lines = [f"## {_md(report.title)}", ""]
    lines += [f"- **{_md(k)}**: {_md(v)}" for k, v in report.facts]
    lines.append("")
    if report.warnings:
        lines += ["> **Trace health**", ">"]
        lines += [f"> - {_md(w)}" for w in report.warnings]
        lines.append("")
    for s in report.sections:
        tables = [i for i in s.items if isinstance(i, Table)]
        figs = [i for i in s.items if isinstance(i, Figure)]
        if not tables and not s.intro:
            continue
        lines += [f"### {_md(s.title)}", "", _md(s.intro), ""]
        for t in tables:
            lines += _table(t)
        if figs:
            lines += [f"_Figures in the HTML report: {len(figs)}._", ""]
    return "\n".join(lines).rstrip() + "\n"
