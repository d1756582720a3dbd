"""Render a :class:`~traceviz.report.model.Report` as one self-contained HTML page.

Only formatting happens here. Every string is escaped (``html.escape``); figure data is
embedded by plotly as JSON with ``<`` / ``>`` escaped. Output is reproducible: figures get the
fixed ids of the model, and nothing time-dependent is written.
"""

from __future__ import annotations

import html
import re

from traceviz._version import __version__
from traceviz.report.badges import BADGES
from traceviz.report.figures import NOT_DRAWN, drawn, not_drawn_line
from traceviz.report.model import Figure, Report, Table
from traceviz.report.shorten import shorten_names

PLOTLYJS_MODES = ("inline", "cdn")
#: Where a page built with ``--plotlyjs cdn`` loads plotly.js from.
CDN_URL = "https://cdn.plot.ly/"
#: What a CDN page shows in each plot's place until plotly.js has loaded (offline: for good).
CDN_NOTE = ("The plots load plotly.js from the CDN (cdn.plot.ly), which did not load: offline "
            "they cannot be drawn; rebuild the report with --plotlyjs inline.")
#: The CDN script tag's onload (offline the tag fails silently, and this never runs): marks
#: the page ``cdn-loaded`` when plotly.js is there, which hides every ``.cdn-note`` (CSS).
_CDN_LOADED = "if(window.Plotly)document.documentElement.classList.add('cdn-loaded')"

_CSS = """
:root{--fg:#1d2330;--muted:#5b6474;--line:#e3e6ec;--bg:#f7f8fa;--accent:#4C78A8}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header{background:#fff;border-bottom:1px solid var(--line);padding:20px 32px 12px}
h1{font-size:22px;margin:0 0 10px}
h2{font-size:18px;margin:0 0 6px}
h3{font-size:14px;margin:16px 0 6px;color:var(--muted)}
nav{padding:8px 32px;background:#fff;border-bottom:1px solid var(--line);position:sticky;top:0;
z-index:10}
nav a{margin-right:16px;color:var(--accent);text-decoration:none;font-weight:500}
main{padding:8px 32px 40px;max-width:1400px}
section{scroll-margin-top:48px;background:#fff;border:1px solid var(--line);border-radius:8px;
padding:18px 20px;margin:16px 0}
.intro{color:var(--muted);margin:0 0 10px;max-width:100ch}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
.facts dt{color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
nav a:first-child{margin-left:0}
.warnings{background:#fff7e6;border:1px solid #f3d19c;border-radius:8px;padding:10px 16px;
margin:16px 0}
.warnings h2{font-size:15px}
.warnings ul{margin:4px 0 0;padding-left:20px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f0f2f5;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.n{white-space:nowrap}
td.n.w{white-space:normal}
td.n.w span,th span{white-space:nowrap}
th.prose{min-width:18ch}
td{max-width:70ch;overflow-wrap:break-word}
td details summary{cursor:pointer;list-style-position:outside}
td details[open] summary{color:var(--muted)}
tr:last-child td{border-bottom:none}
.note{color:var(--muted);font-size:12px;margin:2px 0 8px}
.figure{margin:8px 0 16px;min-width:0}
.grid2{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:0 24px}
@media (max-width:1100px){.grid2{grid-template-columns:minmax(0,1fr)}}
#tbl-verdicts td,#tbl-headlines td{max-width:120ch}
#tbl-verdicts td:first-child,#tbl-headlines td:first-child,
#tbl-waterfall td:first-child,#tbl-waterfall-unprofiled td:first-child,
#tbl-unprofiled td:first-child,#tbl-diag td:first-child{white-space:nowrap}
.status{font-weight:700;border-radius:4px;padding:1px 6px;white-space:nowrap}
.st-WIN{background:#dff3e4;color:#1e6b34}
.st-NO_WIN{background:#eceff3;color:#3d4452}
.st-REGRESSION{background:#fde2e1;color:#a12622}
.st-INCONCLUSIVE{background:#fff1cc;color:#7a5a00}
.st-SKIPPED{background:#e3ecf7;color:#2f4f75}
.st-FAILED{background:#f3e0f5;color:#6e2477}
footer{color:var(--muted);font-size:12px;padding:0 32px 24px}
.figure-empty{border:1px dashed var(--line);border-radius:6px;padding:8px 12px;margin:8px 0 16px}
.figure{position:relative}
.cdn-note{position:absolute;top:45%;left:0;right:0;z-index:1;margin:0 auto;
max-width:90ch;text-align:center;color:var(--fg);background:#fff7e6;border:1px solid #f3d19c;
border-radius:6px;padding:8px 12px}
.cdn-loaded .cdn-note{display:none}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


#: Clipped cells longer than this show a prefix and expand on click.
CLIP_CHARS = 90


#: A numeric cell longer than this (characters) may wrap between its words ("0.709
#: (0.696–0.753) noisy"), each word kept whole (:func:`_whole`); shorter ones ("1.57 s") never
#: wrap.
WRAP_NUMERIC = 12
#: A text column with a cell longer than this (characters) is kept at least 18 characters
#: wide (``th.prose``): a long reason wraps as text, not one word per line.
PROSE_CHARS = 24


def _cell(text: str, numeric: bool, clip: bool, short: str = "") -> str:
    if text in BADGES:
        return f'<td><span class="status st-{text}">{_e(text)}</span></td>'
    if numeric and len(text) > WRAP_NUMERIC and " " in text:
        return f'<td class="n w">{" ".join(_whole(w) for w in text.split(" "))}</td>'
    if numeric:
        return f'<td class="n">{_e(text)}</td>'
    if clip and len(text) > CLIP_CHARS:
        return (f"<td><details><summary>{_e(short or text)}</summary>{_e(text)}"
                "</details></td>")
    return f"<td>{_e(text)}</td>"


def _shortened(t: Table, clip: tuple[bool, ...]) -> list[tuple[str, ...]]:
    """Each row's cells as a clipped cell's summary shows them: the column's long names
    shortened together (middle ellipsis; distinct names stay distinct), others ""."""
    cols = [shorten_names([r[i] for r in t.rows], CLIP_CHARS - 10) if k else [""] * len(t.rows)
            for i, k in enumerate(clip)]
    return list(zip(*cols, strict=True)) if cols else [() for _ in t.rows]


def _whole(word: str) -> str:
    """``word`` escaped, kept on one line when it holds a dash a browser would break at
    ("(0.924–1.239)", "cpu-bound"; such a word is a ``<span>``, which the CSS keeps whole)."""
    return f"<span>{_e(word)}</span>" if re.search("[-–]", word) else _e(word)


def _header(name: str) -> str:
    """A column header, escaped, that may wrap between its words and after a slash inside a
    word ("kernels/" "step"), never at a dash ("p10–p90" stays whole)."""
    return " ".join("<wbr>".join(_whole(p) for p in re.split(r"(?<=/)(?=.)", word))
                    for word in name.split(" "))


def _th(name: str, numeric: bool, prose: bool) -> str:
    """A header cell: right-aligned over numbers, at least 18 characters wide over long text
    (``prose``: a cell longer than :data:`PROSE_CHARS`)."""
    cls = ' class="n"' if numeric else ' class="prose"' if prose else ""
    return f"<th{cls}>{_header(name)}</th>"


def _table(t: Table) -> str:
    numeric = t.numeric or (False,) * len(t.columns)
    clip = t.clip or (False,) * len(t.columns)
    prose = [not n and i > 0 and any(len(r[i]) > PROSE_CHARS for r in t.rows)
             for i, n in enumerate(numeric)]
    head = "".join(_th(c, n, wide) for c, n, wide in zip(t.columns, numeric, prose, strict=True))
    body = "".join(
        "<tr>" + "".join(_cell(c, n, k, sh)
                         for c, n, k, sh in zip(r, numeric, clip, short, strict=True))
        + "</tr>"
        for r, short in zip(t.rows, _shortened(t, clip), strict=True)
    )
    clipped = any(k and len(c) > CLIP_CHARS for r in t.rows
                  for c, k in zip(r, clip, strict=True))
    text = " ".join(filter(None, [t.note, "Long names are shortened in the middle: click one to "
                                  "see it whole."
                                  if clipped else ""]))
    note = f'<p class="note">{_e(text)}</p>' if text else ""
    empty = '<p class="note">none</p>' if not t.rows else ""
    sort = ' class="sortable" title="click a column header to sort"' if t.sortable else ""
    return (f'<h3>{_e(t.title)}</h3><div class="scroll"><table id="{_e(t.id)}"{sort}><thead>'
            f"<tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{empty}{note}")


#: Sorts a ``table.sortable`` by the clicked column: numbers (thousands separators, signs, a
#: trailing unit or "×" allowed) by value, other text alphabetically, "–" last; a second click
#: reverses. Plain DOM, no library.
_SORT_JS = """<script>
document.querySelectorAll("table.sortable th").forEach(function(th,i){
th.style.cursor="pointer";th.addEventListener("click",function(){
var tb=th.closest("table").tBodies[0],asc=th.dataset.dir!=="asc";
th.closest("tr").querySelectorAll("th").forEach(function(h){delete h.dataset.dir});
th.dataset.dir=asc?"asc":"desc";
function key(tr){var t=tr.cells[i].textContent.trim();
if(t==="–"||t==="")return[2,0];var n=parseFloat(t.replace(/,/g,"").replace("−","-"));
return isNaN(n)?[1,t]:[0,n]}
Array.from(tb.rows).sort(function(a,b){var x=key(a),y=key(b);
if(x[0]!==y[0])return x[0]-y[0];var c=x[1]<y[1]?-1:x[1]>y[1]?1:0;return asc?c:-c})
.forEach(function(r){tb.appendChild(r)})})});
</script>"""


def _figure(f: Figure, cdn: bool = False) -> str:
    """The figure's plotly div and note; a figure that draws nothing is one line saying why
    (:func:`~traceviz.report.figures.not_drawn_line`) instead of an empty plot. ``cdn``: the
    page loads plotly.js from the CDN, so the div carries :data:`CDN_NOTE`, hidden once
    plotly.js has loaded."""
    import plotly.io as pio

    note = f'<p class="note">{_e(f.note)}</p>' if f.note else ""
    if not drawn(f.figure):
        line = _e(not_drawn_line(f.figure))
        return f'<p class="note figure-empty" id="{_e(f.id)}">{line}</p>{note}'
    height = f.figure.layout.height or 400
    div = pio.to_html(
        f.figure, full_html=False, include_plotlyjs=False, div_id=f.id,
        default_height=f"{height}px", config={"displaylogo": False, "responsive": True},
    )
    offline = ""
    if cdn:
        title = html.unescape(str(f.figure.layout.title.text or "This plot"))
        offline = f'<p class="cdn-note">{_e(title)}: {NOT_DRAWN}. {_e(CDN_NOTE)}</p>'
    return f'<div class="figure">{offline}{div}</div>{note}'


def _plotlyjs(mode: str, needed: bool) -> str:
    """plotly.js as ``mode`` says, or nothing when the page has no figure (``needed``)."""
    if mode not in PLOTLYJS_MODES:
        raise ValueError(f"plotlyjs must be one of {PLOTLYJS_MODES}")
    if not needed:
        return ""
    import plotly.offline as po

    if mode == "cdn":
        return (f'<script charset="utf-8" src="{CDN_URL}plotly-'
                f'{po.get_plotlyjs_version()}.min.js" onload="{_CDN_LOADED}"></script>')
    return f'<script charset="utf-8">{po.get_plotlyjs()}</script>'


def _perfetto(hint: tuple[str, str | None] | None) -> str:
    """The "open this in Perfetto" line: the export command, and a link to the overlay file
    when one exists."""
    if hint is None:
        return ""
    command, href = hint
    link = (f' An overlay was exported: <a href="{_e(href)}">{_e(href.rsplit("/", 1)[-1])}</a>.'
            if href else "")
    return (f'<p class="note" id="perfetto">Open this in Perfetto: <code>{_e(command)}</code> '
            "writes the trace with traceviz's steps, idle gaps by class and graph replays as "
            "tracks of a <i>traceviz</i> process; open that file in ui.perfetto.dev or "
            f"chrome://tracing.{link}</p>")


def render_html(report: Report, plotlyjs: str = "inline",
                perfetto: tuple[str, str | None] | None = None) -> str:
    """The whole page; ``plotlyjs`` is "inline" (works offline) or "cdn" (small file; each plot
    says why it is blank until plotly.js has loaded: :data:`CDN_NOTE`), left out of a page
    without a figure that draws something. ``perfetto``: (export command, link to an exported
    overlay or None) for a trace report."""
    script = _plotlyjs(plotlyjs, any(drawn(f.figure) for f in report.figures()))
    cdn = bool(script) and plotlyjs == "cdn"
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in report.facts)
    warnings = ""
    if report.warnings:
        items = "".join(f"<li>{_e(w)}</li>" for w in report.warnings)
        warnings = (f'<div class="warnings" id="health"><h2>Trace health</h2>'
                    f"<ul>{items}</ul></div>")
    nav = "".join(f'<a href="#{_e(s.id)}">{_e(s.title)}</a>' for s in report.sections)
    sections = []
    sortable = any(isinstance(i, Table) and i.sortable for s in report.sections for i in s.items)
    for s in report.sections:
        figs = "".join(_figure(i, cdn) for i in s.items if isinstance(i, Figure))
        tables = "".join(_table(i) for i in s.items if isinstance(i, Table))
        if s.grid:
            body = f'<div class="grid2">{figs}</div>{tables}'
        else:
            body = "".join(_table(i) if isinstance(i, Table) else _figure(i, cdn)
                           for i in s.items)
        sections.append(f'<section id="{_e(s.id)}"><h2>{_e(s.title)}</h2>'
                        f'<p class="intro">{_e(s.intro)}</p>{body}</section>')
    # The headline comes first; the health notes follow it (before everything else otherwise).
    at = next((i + 1 for i, s in enumerate(report.sections) if s.id == "headline"), 0)
    sections.insert(at, warnings)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(report.title)}</title><style>{_CSS}</style>{script}</head>"
        f'<body><header><h1>{_e(report.title)}</h1><dl class="facts">{facts}</dl>'
        f"{_perfetto(perfetto)}</header>"
        f"<nav>{nav}</nav><main>{''.join(sections)}</main>"
        f"<footer>Generated by traceviz {_e(__version__)}. Definitions: docs/metrics.md, "
        "docs/comparison.md."
        f"</footer>{_SORT_JS if sortable else ''}</body></html>\n"
    )
