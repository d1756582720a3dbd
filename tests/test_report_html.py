"""HTML / Markdown / JSON reports: escaping, reproducibility, plotly.js, large traces."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from tests.synthetic_runs import standard_run
from traceviz.report import figures
from traceviz.report.compare_report import build, load_run_dir, render
from traceviz.report.html import render_html
from traceviz.report.markdown import render_markdown
from traceviz.report.model import build_trace_report

EVIL = "<script>alert(1)</script>"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300)


def evil_trace(path: Path) -> Path:
    """Two steps; one kernel is named like a script tag, the other has a pipe and backticks."""
    b = TraceBuilder()
    for n in range(2):
        s = n * 100_000
        b.step(n + 1, s, 100_000)
        b.kernel(launch_ts=s + 1_000, ts=s + 10_000, dur=5_000, name=EVIL)
        b.kernel(launch_ts=s + 30_000, ts=s + 40_000, dur=5_000, name="gemm|`x`*y*")
    return b.write(path)


def test_kernel_named_script_renders_as_text_everywhere(tmp_path: Path) -> None:
    trace = traceviz.load(evil_trace(tmp_path / "t.json"))
    page = render_html(build_trace_report(trace, traceviz.analyze(trace)), "cdn")
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the kernel table cell
    assert "alert(1)" in page.split("Plotly.newPlot", 1)[1]  # and the figures, JSON-escaped
    assert len(re.findall(r"<script\b", page)) == 1 + page.count("Plotly.newPlot")
    md = render_markdown(build_trace_report(trace, traceviz.analyze(trace)))
    assert EVIL not in md and "&lt;script&gt;" in md
    assert "gemm\\|\\`x\\`\\*y\\*" in md


def test_same_input_gives_byte_identical_html(tmp_path: Path) -> None:
    trace = evil_trace(tmp_path / "t.json")
    outs = [tmp_path / "a.html", tmp_path / "b.html"]
    for out in outs:
        r = cli("report", str(trace), "-o", str(out), "--plotlyjs", "cdn")
        assert r.returncode == 0, r.stderr
    assert outs[0].read_bytes() == outs[1].read_bytes()
    run = standard_run(tmp_path / "run")
    pages = [render(*build(load_run_dir(run)), "html", "cdn") for _ in range(2)]
    assert pages[0] == pages[1]
    assert 'id="fig-waterfall-0"' in pages[0]


def test_plotlyjs_is_inlined_once_by_default_and_linked_with_cdn(tmp_path: Path) -> None:
    trace = traceviz.load(evil_trace(tmp_path / "t.json"))
    model = build_trace_report(trace, traceviz.analyze(trace))
    inline, cdn = render_html(model), render_html(model, "cdn")
    assert 'src="https://cdn.plot.ly' not in inline and inline.count("Plotly.newPlot") >= 3
    assert len(inline) > 3_000_000 and len(cdn) < 200_000
    assert cdn.count('src="https://cdn.plot.ly/plotly-') == 1


def test_large_step_timeline_is_merged_and_says_so(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 20_000_000)
    for i in range(4000):
        b.kernel(launch_ts=1_000 + i * 4_000, ts=5_000 + i * 4_000, dur=2_000 + i % 3 * 100)
    trace = traceviz.load(b.write(tmp_path / "big.json"))
    fig, note = figures.timeline(trace, traceviz.analyze(trace))
    bars = sum(len(t.base) for t in fig.data)
    assert bars <= 3 * figures.MAX_BARS
    assert "kernel: 4,000 bars merged into" in note


def test_comparison_json_has_every_verdict_figure_and_threshold(tmp_path: Path) -> None:
    comparison, report = build(load_run_dir(standard_run(tmp_path)))
    doc = json.loads(render(comparison, report, "json"))
    assert doc["schema"] == "traceviz.compare/1" and doc["baseline"] == "eager"
    assert {(v["mode"], v["kind"]) for v in doc["verdicts"]} == {
        (m, k) for m in ("compile", "cudagraph", "broken") for k in ("speed", "fusion", "launch")}
    assert set(doc["headline"]) == {"compile", "cudagraph", "broken"}
    assert doc["headline"]["compile"]["evidence_source"] == "unpaired"
    assert doc["headline"]["compile"]["text"].startswith("2.00× faster by unpaired medians")
    assert {"fig-times", "fig-counts", "fig-waterfall-0", "fig-waterfall-1"} <= set(doc["figures"])
    assert all(f["data"] for f in doc["figures"].values())
    w = doc["waterfalls"][0]
    assert sum(w["parts_us"].values()) == pytest.approx(w["delta_us"], abs=1e-9)
    assert doc["thresholds"]["fusion_min_kernel_drop"] == 0.2


def test_comparison_markdown_is_a_verdict_table_for_a_pr_comment(tmp_path: Path) -> None:
    md = render(*build(load_run_dir(standard_run(tmp_path))), "md")
    assert md.startswith("## traceviz comparison: synthetic")
    assert ("| compile | fusion | ✅ **WIN** | 2.00 (unpaired) | unpaired | medians over "
            "steps: kernels/step 20 → 5"
            in md)
    assert "| compile | ✅ **WIN** | 2.00 (unpaired) | 2.00× faster by unpaired medians" in md
    assert md.index("### Headline") < md.index("### Verdicts")
    assert "| broken | speed | 💥 **FAILED** |" in md  # the failed mode: its own badge
