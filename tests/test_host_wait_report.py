"""Host-wait sources in every output format, on a hand-built trace with known sources."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

import traceviz
from tests.kineto import TraceBuilder
from traceviz.report.host_wait_section import summary_sentence
from traceviz.report.html import render_html
from traceviz.report.jsonout import analysis_to_dict
from traceviz.report.markdown import render_markdown
from traceviz.report.model import build_trace_report
from traceviz.report.text import render_text


def wrapper_trace(path: Path, extra_ops: int = 0) -> tuple[traceviz.Trace, traceviz.Analysis]:
    """One gap of 100 µs (10–110), all inside `train_step` (10–110): `fwd` 30 µs, `opt` 40 µs,
    `tiny` 5 µs, `<script>x</script>` 4 µs, 20 µs in train_step itself, 1 µs launch tail; plus
    `extra_ops` ops of 10 ns, each followed by its own launch (gaps of their own)."""
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)
    b.cpu_op("train_step", 10_000, 100_000, cat="user_annotation")
    b.cpu_op("fwd", 10_000, 30_000)
    b.cpu_op("opt", 40_000, 40_000)
    b.cpu_op("tiny", 80_000, 5_000)
    b.cpu_op("<script>x</script>", 85_000, 4_000)
    b.kernel(launch_ts=109_000, launch_dur=500, ts=110_000, dur=1_000)  # gap 10–110
    t = 300_000
    for i in range(extra_ops):
        b.cpu_op(f"extra{i:02d}", t, 10)
        b.kernel(launch_ts=t + 10, launch_dur=5, ts=t + 20, dur=10)
        t += 1_000
    trace = traceviz.load(b.write(path))
    return trace, traceviz.analyze(trace)


def test_json_has_trace_and_step_tables_top_20_plus_the_rest(tmp_path: Path) -> None:
    trace, a = wrapper_trace(tmp_path / "t.json", extra_ops=25)
    doc = json.loads(json.dumps(analysis_to_dict(trace, a)))
    hw = doc["host_wait_sources"]
    assert set(hw) == {"trace", "steps"} and set(hw["trace"]) == {"inclusive", "self"}
    assert [s["step"] for s in hw["steps"]] == ["ProfilerStep#1"]
    rows = hw["trace"]["self"]
    assert len(rows) == 21 and rows[-1]["source"].endswith("other sources)")
    assert set(rows[0]) == {"source", "host_wait_us", "share", "gaps"}
    values = [r["host_wait_us"] for r in rows[:-1]]
    assert values == sorted(values, reverse=True)
    total_us = doc["totals"]["host_wait_us"] + doc["totals"]["sync_wait_us"]
    assert abs(sum(r["host_wait_us"] for r in rows) - total_us) < 1e-6 * len(rows)
    assert hw["trace"]["inclusive"][0]["source"] == "(python / untraced)"  # 111–300 µs
    step = hw["steps"][0]["inclusive"]
    assert {r["source"]: (r["host_wait_us"], r["gaps"]) for r in step}["train_step"] == (100, 1)


def test_summary_sentence_skips_wrappers_and_small_sources(tmp_path: Path) -> None:
    _, a = wrapper_trace(tmp_path / "t.json")
    assert a.host_wait_sources is not None
    s = summary_sentence(a.host_wait_sources, a.totals.cpu_bound_share)
    # train_step (100%) has callees with >= 10%; tiny (5%), the script op (4%), the tail (1%) < 10%.
    assert s == (f"{100 * a.totals.cpu_bound_share:.0f}% CPU-bound (whole trace): 40% of it in "
                 "`opt`, 30% in `fwd` (deepest call paths holding ≥ 10% each, not the table's "
                 "inclusive shares)")


def test_markdown_text_and_html_show_the_sources(tmp_path: Path) -> None:
    trace, a = wrapper_trace(tmp_path / "t.json", extra_ops=25)
    report = build_trace_report(trace, a)
    md = render_markdown(report)
    assert "### Why the GPU waited: host wait by CPU source" in md
    section = md.split("### Why the GPU waited")[1].split("\n### ")[0]
    assert sum(1 for line in section.splitlines() if line.startswith("| ") and "µs" not in line
               ) == 10
    assert "**host wait by source**" in md and "in \\`opt\\`" in md
    console = Console(width=200, record=True)
    console.print(render_text(trace, a))
    text = console.export_text()
    assert "Host wait by source" in text and "train_step" in text
    html = render_html(report, "cdn")
    assert "fig-host-wait" in html and "<script>x</script>" not in html


def test_json_step_rows_equal_the_per_step_tables(tmp_path: Path) -> None:
    from tests.test_host_wait_handbuilt import run as run_handbuilt
    from traceviz.report.host_wait_section import _rows, host_wait_json

    b = TraceBuilder()
    for n in range(1, 4):
        base = (n - 1) * 1_000_000
        b.step(n, base, 1_000_000)
        b.kernel(launch_ts=base + 1_000, ts=base + 3_000, dur=7_000)
        t = base + 10_000
        for i in range(10 * n):  # step 3 has 30 sources: top 20 + the rest
            b.cpu_op(f"op{i:02d}", t, 1_000 + 37 * ((i * 7 + n) % 11))
            t += 2_000
        b.kernel(launch_ts=t, launch_dur=500, ts=t + 1_000, dur=1_000)
    _, h = run_handbuilt(b, tmp_path)
    doc = host_wait_json(h)
    for i, s in enumerate(doc["steps"]):
        t = h.table(i)
        assert s["inclusive"] == _rows(t.inclusive, t.total_ns)
        assert s["self"] == _rows(t.self, t.total_ns)
    assert doc["steps"][2]["self"][-1]["source"].endswith("other sources)")
