"""What the text, Markdown and terminal outputs say, point by point: ``COLUMNS`` sets the width
of piped text; Markdown leads with the headline; a table with no row says "none"; a table
title that repeats its section heading is not printed twice; no format prints ``None``; a
kernel diff of two runs is titled by the runs and the mode; a speed-up the verdict cannot
vouch for is "not significant" and 1.00 is "no change"; a narrow table drops its empty columns
first; "noisy" is explained where it is shown; ``profile`` names its report once; ``export``
of a CPU-only trace says why its overlay is empty."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.kineto import TraceBuilder
from tests.synthetic_runs import COMPILED, EAGER, ModeSpec, paired, write_run_dir
from traceviz.analyze.compare.speed import PAIRED, SpeedEvidence, describe, format_speedup
from traceviz.report.compare_report import build, load_run_dir, render
from traceviz.report.elements import Section, Table
from traceviz.report.markdown import render_markdown
from traceviz.report.model import Report
from traceviz.report.report_text import render_report_text

SKIP = ModeSpec(kernels=(), status="skipped", reason="no CUDA device", correct=None)
#: A paired speed-up whose CI straddles ±3 %: an INCONCLUSIVE speed verdict.
UNSURE = replace(COMPILED, paired=paired(1.04, 0.96, 1.12))


def traceviz(*args: str, columns: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_run_dir(tmp_path_factory.mktemp("polish") / "run_a",
                         {"eager": EAGER, "compile": UNSURE, "cudagraph": SKIP})
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["modes"]["eager"]["timing"]["noisy"] = True
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def shown(renderable: object, width: int) -> str:
    """What a terminal ``width`` columns wide shows of ``renderable``."""
    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("args", [
    ("report", "{run}", "--format", "text"),
    ("kernel-diff", "{run}", "{run}", "--mode", "compile"),
    ("report", "{run}/eager.pt.trace.json.gz", "--format", "text"),
])
def test_piped_text_takes_its_width_from_columns(run: Path, args: tuple[str, ...]) -> None:
    argv = [a.format(run=run) for a in args]
    narrow = traceviz(*argv, columns="90")
    assert narrow.returncode == 0, narrow.stderr
    assert widest(narrow.stdout) <= 90
    wide = traceviz(*argv)
    assert widest(wide.stdout) > 90  # without COLUMNS: the wide default


def test_markdown_leads_with_the_headline_then_trace_health(run: Path) -> None:
    _, report = build(load_run_dir(run))
    md = render_markdown(replace(report, warnings=("compile: a note",)))
    assert md.index("### Headline") < md.index("Trace health") < md.index("### Verdicts")


def _report(*tables: Table, title: str = "Environment") -> Report:
    return Report("runs", "r", (), (), (Section("env", title, "", tables),))


def test_a_table_with_no_row_says_none() -> None:
    empty = Table("t", "Diagnostics", ("mode", "message"), ())
    md = render_markdown(_report(empty, title="Why"))
    assert "**Diagnostics**" in md and "_none_" in md and "| – |" not in md
    text = render_report_text(_report(empty, title="Why"))
    assert "Diagnostics: none" in text and "│ –" not in text


def test_a_table_titled_like_its_section_is_not_titled_again() -> None:
    env = Table("t", "Environment", ("", "A"), (("GPU", "H100"),))
    assert render_markdown(_report(env)).count("Environment") == 1
    assert render_report_text(_report(env)).count("Environment") == 1
    speed = Table("s", "Step time A → B", ("mode",), (("eager",),))
    assert "A → B" not in render_report_text(_report(speed, title="Step time"))


def test_no_format_prints_none_for_an_unrecorded_gpu(run: Path, tmp_path: Path) -> None:
    b = write_run_dir(tmp_path / "run_b", {"eager": EAGER, "compile": COMPILED})
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["environment"]["gpu"] = None
    (b / "manifest.json").write_text(json.dumps(manifest))
    for fmt in ("text", "md", "json"):
        r = traceviz("compare", str(b), str(run), "--format", fmt, columns="200")
        assert r.returncode == 0, r.stderr
        assert "different GPUs:" in r.stdout and "None" not in r.stdout, (fmt, r.stdout)
    html = traceviz("compare", str(b), str(run), "-o", str(tmp_path / "c.html"))
    assert html.returncode == 0, html.stderr
    assert ">None<" not in (tmp_path / "c.html").read_text()


def test_a_kernel_diff_of_two_runs_is_titled_by_the_runs_and_the_mode(run: Path,
                                                                      tmp_path: Path) -> None:
    from traceviz.report.kernel_diff_report import build as diff_build

    other = write_run_dir(tmp_path / "run_b", {"eager": EAGER, "compile": COMPILED})
    _, report = diff_build(run, other, "compile")
    assert report.title == "traceviz kernel diff: run_a (compile) → run_b (compile)"
    _, same = diff_build(run, run, "compile")
    assert same.title == f"traceviz kernel diff: {run} (compile) → {run} (compile)"
    trace = run / "eager.pt.trace.json.gz"
    _, files = diff_build(trace, run / "compile.pt.trace.json.gz")
    assert files.title == "traceviz kernel diff: eager.pt.trace.json.gz → compile.pt.trace.json.gz"


@pytest.mark.parametrize(("speedup", "significant", "text"), [
    (1.0, True, "no change (1.00×)"), (0.999, True, "no change (1.00×)"),
    (1.001, False, "no change (1.00×)"), (1.03, False, "1.03× (not significant)"),
    (0.95, False, "0.95× (not significant)"), (1.71, True, "1.71× faster"),
    (0.8, True, "1.25× slower"),
])
def test_speed_words_claim_only_what_the_verdict_can(speedup: float, significant: bool,
                                                     text: str) -> None:
    assert format_speedup(speedup, significant) == text


def test_an_inconclusive_speed_up_is_not_called_faster(run: Path) -> None:
    ev = SpeedEvidence(PAIRED, 1.03, 0.97, 1.10, 0.95, 12)
    assert describe(ev, "INCONCLUSIVE") == "1.03× (not significant) (95 % CI 0.97–1.10, 12 pairs)"
    comparison, _ = build(load_run_dir(run))
    head = next(h for h in comparison.headlines if h.mode == "compile")
    assert head.speed_status == "INCONCLUSIVE"
    assert head.text.startswith("1.04× (not significant)") and "faster" not in head.text


def test_a_narrow_table_drops_its_empty_columns_first() -> None:
    from traceviz.report.fit import KEEP, Column, fit_table

    columns = [Column("mode", priority=KEEP), Column("kernels /step", True, 9),
               Column("profiled ms", True, 1)]
    rows = [("eager", "-", "307.5 (2.02x)"), ("compile", "–", "47.99 (1.20x)")]
    text = shown(fit_table(columns, rows, 26), 26)
    table, caption = text.split("not shown")
    assert "307.5" in table and "kernels" not in table
    assert "kernels /step (empty)" in " ".join(caption.split())


def test_noisy_is_explained_where_it_is_shown(run: Path) -> None:
    from traceviz.cli.display import profile_summary
    from traceviz.report.noisy import NOISY_LEGEND

    modes = json.loads((run / "manifest.json").read_text())["modes"]
    assert NOISY_LEGEND in shown(profile_summary(modes, 200), 200)
    comparison, report = build(load_run_dir(run))
    for fmt in ("md", "text"):  # Markdown escapes the ">" at the end
        said = " ".join(render(comparison, report, fmt).split())
        assert "noisy: the step time varies: its p10–p90 spread is more than 10% of its " \
               "median" in said, fmt
    modes["eager"]["timing"]["noisy"] = False
    assert "noisy" not in shown(profile_summary(modes, 200), 200)


def test_profile_names_its_report_once() -> None:
    from traceviz.cli.profile_run import closing_lines

    run_dir = Path("runs/x")
    assert closing_lines(run_dir, run_dir / "report.html", "comparison report: runs/x/report.html"
                         ) == ["manifest: runs/x/manifest.json", "report: runs/x/report.html"]
    assert closing_lines(run_dir, None, "comparison report failed: ValueError: x")[1] == (
        "comparison report failed: ValueError: x")


def test_export_of_a_cpu_only_trace_says_why_the_overlay_is_empty(tmp_path: Path) -> None:
    b = TraceBuilder()
    for i in range(5):
        b.step(i + 1, i * 100_000, 90_000)
        b.cpu_op("aten::add", i * 100_000 + 1_000, 50_000)
    trace = b.write(tmp_path / "cpu.json")
    r = traceviz("export", str(trace), "-o", str(tmp_path / "out.json.gz"))
    assert r.returncode == 0, r.stderr
    assert "no overlay slice (a CPU-only trace (5 steps, no GPU activity or launch) has no GPU " \
           "work to mark" in r.stderr
