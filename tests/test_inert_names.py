"""Names from a trace are inert in text and Markdown (issue 37, item 11): Rich markup in a name
prints as written, and control characters (ESC / OSC sequences, BEL, CR) never reach the output
raw; they are shown escaped (``\\x1b``)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tests.kineto import TraceBuilder
from traceviz.report.elements import Section, Table
from traceviz.report.fit import Column, fit_table
from traceviz.report.inert import inert_markup, visible
from traceviz.report.markdown import render_markdown
from traceviz.report.model import Report
from traceviz.report.ranks.text import render_ranks_text
from traceviz.report.report_text import render_report_text

CLOSING_TAG_OP = "[/bold]evil_op"
BRACKETED_OP = "[param|cuda]"
#: Sets the window title (OSC 0 … BEL), then clears the screen (CSI 2 J).
TERMINAL_KERNEL = "\x1b]0;pwned\x07evil\x1b[2Jkernel[red]x"
RAW = ("\x1b", "\x07", "\x08", "\x9b", "\r")


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def hostile_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two steps; the host waits in CPU ops named like Rich markup, and a kernel's name holds
    terminal control sequences."""
    b = TraceBuilder()
    for n in range(2):
        t0 = n * 200_000
        b.step(n + 1, t0, 150_000)
        b.cpu_op(CLOSING_TAG_OP, t0 + 500, 60_000)
        b.kernel(launch_ts=t0 + 1_000, ts=t0 + 10_000, dur=5_000, name=TERMINAL_KERNEL)
        b.cpu_op(BRACKETED_OP, t0 + 70_000, 30_000)
        b.kernel(launch_ts=t0 + 80_000, ts=t0 + 110_000, dur=5_000, name="k2")
    return b.write(tmp_path_factory.mktemp("hostile") / "hostile.json")


def test_a_cpu_op_named_with_a_closing_rich_tag_prints_as_written(hostile_trace: Path) -> None:
    r = traceviz("report", str(hostile_trace), "-f", "text")
    assert r.returncode == 0, r.stderr
    assert CLOSING_TAG_OP in r.stdout


def test_a_bracketed_host_wait_source_is_not_blank(hostile_trace: Path) -> None:
    r = traceviz("report", str(hostile_trace), "-f", "text")
    assert r.returncode == 0, r.stderr
    assert BRACKETED_OP in r.stdout


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_control_sequences_in_a_kernel_name_never_reach_the_output_raw(
        hostile_trace: Path, fmt: str) -> None:
    r = traceviz("report", str(hostile_trace), "-f", fmt)
    assert r.returncode == 0, r.stderr
    assert not [c for c in RAW if c in r.stdout]
    assert "\\x1b]0;pwned\\x07evil\\x1b[2Jkernel" in r.stdout


def test_a_text_file_report_holds_no_control_sequence(hostile_trace: Path,
                                                      tmp_path: Path) -> None:
    out = tmp_path / "r.txt"
    r = traceviz("report", str(hostile_trace), "-f", "text", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert CLOSING_TAG_OP in text and BRACKETED_OP in text
    assert not [c for c in RAW if c in text]


def test_visible_escapes_c0_del_c1_and_bidi_controls_and_keeps_the_rest() -> None:
    assert visible("a\x1b[2Jb\x07\x7f\x9b\u202e\u2028") == (
        "a\\x1b[2Jb\\x07\\x7f\\x9b\\u202e\\u2028")
    assert visible("void k<float>(int) [param|cuda] µs → …") == (
        "void k<float>(int) [param|cuda] µs → …")


def _plain(renderable: object) -> str:
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_a_fitted_tables_title_column_and_cells_are_never_markup() -> None:
    table = fit_table([Column("[b]name"), Column("n", True)],
                      [("[/red]a\x1b[2J", "1"), ("[param|cuda]", "2")], 120,
                      title="Top [/bold] of x\x1bc")
    text = _plain(table)
    for shown in ("Top [/bold] of x\\x1bc", "[b]name", "[/red]a\\x1b[2J", "[param|cuda]"):
        assert shown in text
    assert "\x1b" not in text
    assert _plain(inert_markup("[bold]x[/bold]\x07")).strip() == "[bold]x[/bold]\\x07"


def _hostile_report() -> Report:
    table = Table("tbl", "Kernels", ("kernel", "count"),
                  ((TERMINAL_KERNEL, "1"), (CLOSING_TAG_OP, "2")), (False, True),
                  note="note \x1b[31m", clip=(True, False))
    return Report(kind="kernel-diff", title="diff \x1b]0;t\x07", facts=(("trace", "a\x08b\r"),),
                  warnings=("warn \x9b2J",),
                  sections=(Section("s", "Section \x1b", "intro \x1b", (table,)),))


@pytest.mark.parametrize("render", [render_report_text, render_ranks_text, render_markdown],
                         ids=["report-text", "ranks-text", "markdown"])
def test_every_report_renderer_shows_control_characters_escaped(render: object) -> None:
    out = render(_hostile_report())  # type: ignore[operator]
    assert not [c for c in RAW if c in out]
    assert "\\x1b]0;pwned\\x07evil" in out and "a\\x08b" in out and "\\x9b2J" in out
