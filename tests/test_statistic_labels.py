"""One statistic per sentence: headlines, waterfalls and verdict explanations say whether a
number is a median over steps or a mean, the numbers of one sentence share that statistic, and
every share says what it is over (median step vs whole trace). Real traces and runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import traceviz
from tests.conftest import GPU_TRACES
from traceviz.analyze.compare.headline import _per_step
from traceviz.report.compare_report import build, load_inputs, load_run_dir
from traceviz.report.units import pct

REPORTS = Path(__file__).resolve().parents[1] / "reports"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} absent")
    return path


@pytest.fixture(scope="module")
def traces_comparison():
    paths = [_need(GPU_TRACES / f"elementwise_{m}.pt.trace.json.gz") for m in ("eager",
                                                                              "compile")]
    return build(load_inputs(paths))[0]


@pytest.fixture(scope="module")
def run_comparison():
    return build(load_run_dir(_need(REPORTS / "gemm_mlp")))[0]


def test_a_profiled_headline_labels_the_median_period_and_the_mean_waterfall(traces_comparison):
    c = traces_comparison
    h, w = c.headline("elementwise_compile"), c.waterfalls[0]
    rows = {r.mode: r for r in c.rows}
    median = (f"median GPU period {rows['elementwise_eager'].period_ms:.3f} → "
              f"{rows['elementwise_compile'].period_ms:.3f} ms/step")
    assert h is not None and median in h.text
    # the waterfall sentence: its total and parts are all means, and it says so
    mean = f"profiled, mean over steps: period {_per_step(w.delta_ns)}: "
    assert mean in h.text
    clause = h.text.split(mean, 1)[1].split(";", 1)[0]
    for word, name in (("host wait", "host_wait_ns"), ("GPU busy", "gpu_busy_ns")):
        if f"{word} " in clause:
            assert f"{word} {_per_step(w.parts[name])}" in clause
    # the median change and the mean change differ here: each is labelled where it appears
    med_delta = (rows["elementwise_compile"].period_ms - rows["elementwise_eager"].period_ms) * 1e6
    assert abs(med_delta - w.delta_ns) > 500


def test_the_profiled_launch_verdict_splits_its_medians_from_its_means(traces_comparison):
    c = traces_comparison
    launch = next(v for v in c.verdicts if v.kind == "launch")
    w = c.waterfalls[0]
    text = launch.explanation
    assert "medians over steps: launches/step" in text
    m = re.search(r"means over steps: profiled period saved (-?[\d,.]+) µs/step", text)
    assert m and float(m[1].replace(",", "")) == pytest.approx(-w.delta_ns / 1000, abs=0.05)


def test_headline_and_fusion_quote_the_same_gpu_busy_saving(run_comparison):
    c = run_comparison
    w = next(w for w in c.waterfalls if w.mode == "compile")
    busy = w.parts["gpu_busy_ns"]
    h = c.headline("compile")
    assert h is not None and f"GPU busy {_per_step(busy)} (lean-trace mean)" in h.text
    assert "without the profiler (pair-level median)" in h.text
    fusion = next(v for v in c.verdicts if (v.mode, v.kind) == ("compile", "fusion"))
    m = re.search(r"([\d,.]+) µs/step of GPU busy saved \(lean-trace mean\) is", fusion.explanation)
    assert m and float(m[1]) == pytest.approx(-busy / 1000, abs=0.05)
    assert f"{-w.delta_ns / 1000:,.1f} µs/step saved without the profiler (pair-level median)" \
        in fusion.explanation
    assert "medians over steps: kernels/step" in fusion.explanation


def test_host_wait_sources_in_a_verdict_say_they_are_means(run_comparison):
    launch = next(v for v in run_comparison.verdicts if (v.mode, v.kind) == ("compile",
                                                                              "launch"))
    assert "means per step: host + sync wait" in launch.explanation
    assert "medians inside" in launch.explanation  # the unprofiled part, labelled as before


@pytest.fixture(scope="module")
def eager_trace():
    return traceviz.analyze(_need(REPORTS / "train_step" / "eager.stack.pt.trace.json.gz"))


def test_text_report_labels_each_cpu_bound_share(eager_trace):
    a = eager_trace
    text = " ".join(a.render("text", text_width=300).split())
    median = pct(a.result.per_step.cpu_bound_share, 1)
    whole = pct(a.result.totals.cpu_bound_share, 1)
    assert f"CPU-bound share (median step) │ {median}" in text
    assert f"CPU-bound share (whole trace) │ {whole}" in text
    if a.result.host_wait_sources is not None and a.result.host_wait_sources.total_ns:
        assert f"{pct(a.result.totals.cpu_bound_share)} CPU-bound (whole trace)" in text


def test_markdown_and_html_facts_label_each_cpu_bound_share(eager_trace):
    a = eager_trace
    md = a.render("md").replace("\\_", "_")
    assert (f"**cpu_bound_share (whole trace)**: {pct(a.result.totals.cpu_bound_share)}: "
            "host + sync wait over the summed step periods") in md
    assert (f"**cpu_bound_share (median step)**: {pct(a.result.per_step.cpu_bound_share)}"
            in md)
    if a.result.host_wait_sources is not None and a.result.host_wait_sources.total_ns:
        assert "CPU-bound (whole trace):" in md


def test_comparison_table_says_its_cpu_bound_is_the_median_step(run_comparison):
    from traceviz.report.comparison_model import ROW_COLUMNS

    assert ("cpu-bound (median step)", True) in ROW_COLUMNS
