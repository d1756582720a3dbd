"""Host-wait sources of a mode against the baseline: what grew, what shrank, the phrase."""

from __future__ import annotations

from pathlib import Path

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.compare.modes import ModeInput, compare
from traceviz.analyze.host_wait import UNTRACED


def two_steps(optimizer_ns: int, python_ns: int) -> TraceBuilder:
    """Per step: a kernel, then `python_ns` of untraced time, then an optimizer annotation of
    `optimizer_ns`, then the next launch (its 1 µs launch tail is outside the annotation)."""
    b = TraceBuilder()
    for n in (1, 2):
        base = (n - 1) * 1_000_000
        b.step(n, base, 1_000_000)
        b.kernel(launch_ts=base + 1_000, ts=base + 3_000, dur=7_000)
        t = base + 10_000 + python_ns
        b.cpu_op("Optimizer.step#SGD.step", t, optimizer_ns, cat="user_annotation")
        b.kernel(launch_ts=t + optimizer_ns, launch_dur=500, ts=t + optimizer_ns + 1_000,
                 dur=1_000)
    return b


def analysed(b: TraceBuilder, path: Path) -> traceviz.Analysis:
    return traceviz.analyze(traceviz.load(b.write(path)))


def test_shift_lists_grown_and_shrunk_sources_and_names_the_one_that_stays(
        tmp_path: Path) -> None:
    base = analysed(two_steps(optimizer_ns=600_000, python_ns=300_000), tmp_path / "b.json")
    mode = analysed(two_steps(optimizer_ns=620_000, python_ns=20_000), tmp_path / "m.json")
    c = compare([ModeInput("eager", None, base), ModeInput("graphs", None, mode)])
    (s,) = c.host_wait_shifts
    assert (s.mode, s.baseline) == ("graphs", "eager")
    # Per step (python, optimizer, launch tail): base 300 + 600 + 1 µs, mode 20 + 620 + 1 µs.
    # The tail hole between the steps (untraced, step 1 only) is averaged over both steps.
    assert [(g.source, g.delta_ns) for g in s.grew] == [("Optimizer.step#SGD.step", 20_000)]
    assert [x.source for x in s.shrank] == [UNTRACED]
    grew = sum(g.delta_ns for g in s.grew) + sum(x.delta_ns for x in s.shrank)
    assert grew == s.mode_ns - s.baseline_ns  # self changes add up to the total change
    assert s.top[0].source == "Optimizer.step#SGD.step" and s.top[0].mode_ns == 620_000
    assert "0.62 ms/step stays in `Optimizer.step#SGD.step` (baseline 0.60)" in s.phrase()


def test_a_source_that_changes_by_more_than_ten_percent_does_not_stay(tmp_path: Path) -> None:
    base = analysed(two_steps(optimizer_ns=300_000, python_ns=10_000), tmp_path / "b.json")
    mode = analysed(two_steps(optimizer_ns=600_000, python_ns=10_000), tmp_path / "m.json")
    (s,) = compare([ModeInput("eager", None, base), ModeInput("m", None, mode)]).host_wait_shifts
    assert "ms/step in `Optimizer.step#SGD.step` (baseline 0.30)" in s.phrase()
    assert "stays" not in s.phrase()


def optimizer_steps(optimizer_ns: int, region: bool) -> TraceBuilder:
    """Per step: a kernel, then the optimizer frame `opt.py(3): step` of `optimizer_ns` (inside
    a compiled region of the same span when ``region``), then the next launch."""
    b = TraceBuilder()
    for n in (1, 2):
        base = (n - 1) * 1_000_000
        b.step(n, base, 1_000_000)
        b.kernel(launch_ts=base + 1_000, ts=base + 3_000, dur=7_000)
        t = base + 10_000
        if region:
            b.cpu_op("Torch-Compiled Region: 2/0", t, optimizer_ns, cat="user_annotation")
        b.cpu_op("opt.py(3): step", t, optimizer_ns, cat="python_function")
        b.kernel(launch_ts=t + optimizer_ns, launch_dur=500, ts=t + optimizer_ns + 1_000,
                 dur=1_000)
    return b


def test_phrase_compares_a_frame_in_a_region_with_the_same_frame_in_an_eager_baseline(
        tmp_path: Path) -> None:
    base = analysed(optimizer_steps(400_000, region=False), tmp_path / "b.json")
    mode = analysed(optimizer_steps(250_000, region=True), tmp_path / "m.json")
    (s,) = compare([ModeInput("eager", None, base), ModeInput("ro", None, mode)]).host_wait_shifts
    # The region (one call inside) and the frame hold the same time: the frame is deeper and
    # named (beside the untraced time between the steps).
    top = {c.source: c for c in s.top}
    assert "Torch-Compiled Region: 2/0" not in top
    opt = top["Torch-Compiled Region: 2/0 › opt.py(3): step"]
    assert (opt.baseline_ns, opt.mode_ns) == (400_000, 250_000)
    assert "0.25 ms/step in `Torch-Compiled Region: 2/0 › opt.py(3): step` (baseline 0.40)" in (
        s.phrase())


def packed_steps(optimizer_ns: int) -> TraceBuilder:
    """Two back-to-back steps of ``optimizer_ns`` + 20 µs: kernel A 3–10 µs, the optimizer
    annotation from 10 µs, the next launch right after it and kernel B 1 µs later."""
    b = TraceBuilder()
    step_ns = optimizer_ns + 20_000
    for n in (1, 2):
        base = (n - 1) * step_ns
        b.step(n, base, step_ns)
        b.kernel(launch_ts=base + 1_000, ts=base + 3_000, dur=7_000)
        t = base + 10_000
        b.cpu_op("Optimizer.step#SGD.step", t, optimizer_ns, cat="user_annotation")
        b.kernel(launch_ts=t + optimizer_ns, launch_dur=500, ts=t + optimizer_ns + 1_000,
                 dur=4_000)
    return b


def test_phrase_keeps_two_significant_digits_under_a_tenth_of_a_ms(tmp_path: Path) -> None:
    base = analysed(packed_steps(optimizer_ns=100_000), tmp_path / "b.json")
    mode = analysed(packed_steps(optimizer_ns=4_200), tmp_path / "m.json")
    (s,) = compare([ModeInput("eager", None, base), ModeInput("m", None, mode)]).host_wait_shifts
    assert "0.0042 ms/step in `Optimizer.step#SGD.step` (baseline 0.10)" in s.phrase()
