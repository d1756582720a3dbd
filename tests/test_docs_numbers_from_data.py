"""Measured numbers in README.md and docs/*.md come from committed data, not from a keyboard.

A *measured-looking number* is a time (``12 ms``, ``3.5 µs``, ``135.38s``), a ratio
(``1.40×``) or a pytest summary (``passed in``). It may stand:

* inside an ``<!-- output: … -->`` block, which ``python -m scripts.docs_outputs`` regenerates
  from committed run directories, traces and results files (``tests/test_docs_outputs.py``
  checks that every block is current);
* inside a ``<!-- recorded: … -->`` block that is a fenced transcript (a run that no committed
  file holds, e.g. a GPU run's live progress, labelled with where it came from), or prose whose
  marker names a committed file that holds the numbers (a ``benchmarks/results/`` record);
* in inline code (a command line or an option value, not a claim);
* as a constant of the code, listed in :data:`CONSTANTS` with the code value it must equal;
* as the construction of an example or a test, listed in :data:`BY_CONSTRUCTION` with why, or
  inside a ``<!-- by construction: TEST_FILE -->`` worked example listed in
  :data:`WORKED_EXAMPLES` (a hand-built trace's numbers and the reader's arithmetic on them,
  pinned by that test);
* in the pages' remaining hand-typed numbers, counted in :data:`UNROUTED` (none left): a new
  one fails here, and a page whose count falls must lower its entry.

A *percentage* (``3 %``, ``92%``) is held to the same rule on every page, with none left
hand-typed.

``docs/calibration.md`` is left out: ``benchmarks/calibration/standing.txt`` generates it whole
(``tests/test_calibration_page.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from scripts import docs_outputs as d

ROOT = Path(__file__).resolve().parents[1]
PAGES = tuple(p for p in d.DEFAULT_PAGES if p != "docs/calibration.md")
#: A time in ms / µs / us / ns / s, a ratio ``N×``, or pytest's ``passed in``.
MEASURED = re.compile(r"(?<![\w.])\d[\d.,]*\s*(?:ms|µs|us|ns|s)\b|(?<![\w.])\d[\d.]*×|passed in")
INLINE_CODE = re.compile(r"`[^`\n]+`")
#: A percentage: ``3 %``, ``92%``, ``0.5 %``.
PERCENT = re.compile(r"(?<![\w.])\d+(?:\.\d+)? ?%")
#: A committed path a recorded marker may name (a results file or a run directory).
CITED = re.compile(r"(?:benchmarks/results|reports|tests/data)/[\w./+-]*[\w/]")


def _code_constant(module: str, name: str) -> Callable[[], object]:
    def get() -> object:
        import importlib

        return getattr(importlib.import_module(module), name)
    return get


def _default(module: str, cls: str, name: str) -> Callable[[], object]:
    """A field's default value of a settings dataclass."""
    def get() -> object:
        import importlib

        return getattr(getattr(importlib.import_module(module), cls)(), name)
    return get


def _ci_tails() -> tuple[float, float]:
    """The percentiles of the paired speed-up's bootstrap CI: (lower, upper), in percent."""
    from traceviz.analyze.stats import DEFAULT_LEVEL

    return round(50 * (1 - DEFAULT_LEVEL), 9), round(100 - 50 * (1 - DEFAULT_LEVEL), 9)


def _threshold(name: str) -> Callable[[], object]:
    def get() -> object:
        from traceviz.analyze.verdicts import Thresholds

        return getattr(Thresholds(), name)
    return get


#: Genuine constants stated in prose: (page, the phrase, the code value, what it must equal).
CONSTANTS: tuple[tuple[str, str, Callable[[], object], object], ...] = (
    # The minimum warm-up of unprofiled timing on CUDA.
    ("docs/guide.md", "at least 4 s on CUDA",
     _code_constant("traceviz.collect.timing", "WARM_MIN_S"), 4.0),
    ("docs/guide.md", "today's 4 s", _code_constant("traceviz.collect.timing", "WARM_MIN_S"),
     4.0),
    ("docs/guide.md", "the 4 s warm-up", _code_constant("traceviz.collect.timing",
                                                         "WARM_MIN_S"), 4.0),
    # `profile --timing-budget-s`'s default.
    ("docs/guide.md", "default 30 s", _code_constant("traceviz.cli.profile_defaults",
                                                     "DEFAULT_TIMING_BUDGET_S"), 30.0),
    # The paired speed-up's confidence level, the paired protocol's target CI half-width, the
    # speed rule's margin and the share of the host wait a named call path holds.
    ("docs/guide.md", "with a 95 %", _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"),
     0.95),
    ("docs/guide.md", "the 95 % CI of the median",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/guide.md", "its 95 % bootstrap CI",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/guide.md", "95 % percentile", _code_constant("traceviz.analyze.stats",
                                                          "DEFAULT_LEVEL"), 0.95),
    ("docs/guide.md", "speed-up is within ±5 %",
     _default("traceviz.collect.paired", "PairedSettings", "target_half_width"), 0.05),
    ("docs/guide.md", "`min_speedup` (3 %)", _threshold("min_speedup"), 0.03),
    ("docs/guide.md", "below 1 − 3 %", _threshold("min_speedup"), 0.03),
    ("docs/guide.md", "within ±3 %, else", _threshold("min_speedup"), 0.03),
    ("docs/guide.md", "at least 10 %** of the", _code_constant(
        "traceviz.analyze.host_wait.informative", "MIN_PHRASE_SHARE"), 0.1),
    ("docs/guide.md", "default 80 % of the memory available",
     _code_constant("traceviz.trace.limits", "DEFAULT_SHARE"), 0.8),
    # The profiled-period ratio that profiler inflation may explain.
    ("docs/guide.md", "inflation can explain (2×)", _threshold("max_profiler_inflation"), 2.0),
    # A launch call that returned this long before its work started makes the gap `queued`.
    ("docs/guide.md", "≥ 50 µs before", _code_constant("traceviz.analyze.trace.queued",
                                                       "QUEUED_MIN_NS"), 50_000),
    # A Dask scheduler that does not answer fails after this long.
    ("docs/guide.md", "after 30 s", _code_constant("traceviz.scale.dask_cluster",
                                                   "CONNECT_TIMEOUT_S"), 30),
    # The gap split's threshold, the launch-latency warning and the clock-offset bound.
    ("docs/metrics.md", "`QUEUED_MIN` = **50 µs**",
     _code_constant("traceviz.analyze.trace.queued", "QUEUED_MIN_NS"), 50_000),
    ("docs/metrics.md", "at least 50 µs before",
     _code_constant("traceviz.analyze.trace.queued", "QUEUED_MIN_NS"), 50_000),
    ("docs/metrics.md", "returned ≥ 50 µs before",
     _code_constant("traceviz.analyze.trace.queued", "QUEUED_MIN_NS"), 50_000),
    ("docs/metrics.md", "*Why 50 µs.*",
     _code_constant("traceviz.analyze.trace.queued", "QUEUED_MIN_NS"), 50_000),
    ("docs/metrics.md", "50 µs is ten times",
     _code_constant("traceviz.analyze.trace.queued", "QUEUED_MIN_NS"), 50_000),
    ("docs/metrics.md", "**1 ms** (`LAUNCH_LATENCY_WARN_NS`",
     _code_constant("traceviz.analyze.trace.queued", "LAUNCH_LATENCY_WARN_NS"), 1_000_000),
    ("docs/metrics.md", "at or above 1 ms",
     _code_constant("traceviz.analyze.trace.queued", "LAUNCH_LATENCY_WARN_NS"), 1_000_000),
    ("docs/metrics.md", "more than **60 s**",
     _code_constant("traceviz.analyze.distributed.matching", "MAX_CLOCK_OFFSET_NS"), 60 * 10**9),
    ("docs/metrics.md", "more than 60 s apart",
     _code_constant("traceviz.analyze.distributed.matching", "MAX_CLOCK_OFFSET_NS"), 60 * 10**9),
    ("docs/metrics.md", "The 60 s bound",
     _code_constant("traceviz.analyze.distributed.matching", "MAX_CLOCK_OFFSET_NS"), 60 * 10**9),
    # The clock-offset spread warning, the straggler's share and concentration, and the host
    # wait's call-path shares (icicle cut-off, informative paths, the profiler-overhead note).
    ("docs/metrics.md", "A spread above 10 % of the median", _code_constant(
        "traceviz.analyze.distributed.matching", "SPREAD_WARN_SHARE"), 0.10),
    ("docs/metrics.md", "`clock_offset_spread` at 10 %", _code_constant(
        "traceviz.analyze.distributed.matching", "SPREAD_WARN_SHARE"), 0.10),
    ("docs/metrics.md", "`straggler_min_host_share` (15 %)",
     _threshold("straggler_min_host_share"), 0.15),
    ("docs/metrics.md", "**at least 50 %**", _code_constant(
        "traceviz.analyze.distributed.metrics", "CONCENTRATION_SHARE"), 0.5),
    ("docs/metrics.md", "no index reaches 50 %", _code_constant(
        "traceviz.analyze.distributed.metrics", "CONCENTRATION_SHARE"), 0.5),
    ("docs/metrics.md", "0.1 % of the host wait are left out", _code_constant(
        "traceviz.report.host_wait_section", "MIN_PATH_SHARE"), 0.001),
    ("docs/metrics.md", "**at least 10 %** of the trace's", _code_constant(
        "traceviz.analyze.host_wait.informative", "MIN_PHRASE_SHARE"), 0.1),
    ("docs/metrics.md", "below it reaches 10 %", _code_constant(
        "traceviz.analyze.host_wait.informative", "MIN_PHRASE_SHARE"), 0.1),
    ("docs/metrics.md", "When it holds at least\n1 % of the host wait", _code_constant(
        "traceviz.report.host_wait_section", "PROFILER_NOTE_SHARE"), 0.01),
    # The supervisor's waits on a child session (traceviz/collect/runner.py).
    ("docs/reliability.md", "waits at most 10 s", _code_constant("traceviz.collect.runner",
                                                                 "KILL_GRACE_S"), 10.0),
    ("docs/reliability.md", "after 10 s more", _code_constant("traceviz.collect.runner",
                                                              "KILL_GRACE_S"), 10.0),
    ("docs/reliability.md", "every 0.5 s", _code_constant("traceviz.collect.runner", "POLL_S"),
     0.5),
    ("docs/reliability.md", "`EXIT_GRACE_S` (30 s)", _code_constant("traceviz.collect.runner",
                                                                    "EXIT_GRACE_S"), 30.0),
    ("docs/reliability.md", "had not exited 30 s", _code_constant("traceviz.collect.runner",
                                                                  "EXIT_GRACE_S"), 30.0),
    ("docs/reliability.md", "`BROKEN_GRACE_S` (10 s)",
     _code_constant("traceviz.collect.runner", "BROKEN_GRACE_S"), 10.0),
    ("docs/reliability.md", "were killed 10 s later",
     _code_constant("traceviz.collect.runner", "BROKEN_GRACE_S"), 10.0),
    # A rank's default share of the memory; the fusion verdict's kernel-drop threshold.
    ("docs/reliability.md", "Default: 80 % of the memory available",
     _code_constant("traceviz.trace.limits", "DEFAULT_SHARE"), 0.8),
    ("docs/reliability.md", "exactly 20 %, but", _threshold("fusion_min_kernel_drop"), 0.2),
    # The benchmarks' own settings: the fuzzer's and the adversarial campaign's time limits,
    # and the synthetic many-steps trace's kernel.
    ("docs/reliability.md", "(60 s; the child is killed)",
     _code_constant("benchmarks.fuzz", "TIMEOUT_S"), 60.0),
    ("docs/reliability.md", "a hang (60 s; 240 s for `profile`)",
     _code_constant("benchmarks.adversarial.harness", "TIMEOUT_S"), 60.0),
    ("docs/reliability.md", "a hang (60 s; 240 s for `profile`)",
     _code_constant("benchmarks.adversarial.outputs", "PROFILE_TIMEOUT_S"), 240.0),
    ("docs/reliability.md", "one 1.5 µs kernel each",
     _code_constant("benchmarks.many_steps", "KERNEL_NS"), 1_500),
    # The paired speed-up's confidence level and a rank's default share of the memory.
    ("README.md", "95 % CI", _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/index.md", "95 % CI", _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/api.md", "default: 80 % of the available memory",
     _code_constant("traceviz.trace.limits", "DEFAULT_SHARE"), 0.8),
    # The benchmarks' warm-up (profile's, which inflation_spread copies) and clock sampling.
    ("docs/comparison.md", "build, 4 s warm-up", _code_constant("traceviz.collect.timing",
                                                               "WARM_MIN_S"), 4.0),
    ("docs/comparison.md", "`nvidia-smi` every 10 ms",
     _code_constant("benchmarks.gpu_clocks", "SAMPLE_MS"), 10),
    # The unprofiled split's tail allowance, the launch queue's depth and the headline's parts.
    ("docs/comparison.md", "`block_tail_allowance_us` (150 µs)",
     _threshold("block_tail_allowance_us"), 150.0),
    ("docs/comparison.md", "`LAUNCH_QUEUE_DEPTH` (1,022)",
     _code_constant("traceviz.analyze.compare.unprofiled", "LAUNCH_QUEUE_DEPTH"), 1022),
    ("docs/comparison.md", "at least 0.5 µs/step",
     _code_constant("traceviz.analyze.compare.headline", "MIN_PART_NS"), 500),
    # The paired speed-up's confidence level, and the CI's percentiles that follow from it.
    ("docs/comparison.md", "95 % percentile-bootstrap CI (2,000",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/comparison.md", "\"S× faster (95 % CI low–high",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/comparison.md", "(speed-up 1/S, 95 % CI",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/comparison.md", "95 % percentile-bootstrap CI over the pairs",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/comparison.md", "The 95 % percentile bootstrap",
     _code_constant("traceviz.analyze.stats", "DEFAULT_LEVEL"), 0.95),
    ("docs/comparison.md", "the 2.5 / 97.5 % quantiles", _ci_tails, (2.5, 97.5)),
    # The verdicts' thresholds (their table and the prose that names them).
    ("docs/comparison.md", "`baseline_drift_margin` (default 10 %)",
     _threshold("baseline_drift_margin"), 0.1),
    ("docs/comparison.md", "widened by 10 % ([Baseline drift]",
     _threshold("baseline_drift_margin"), 0.1),
    ("docs/comparison.md", "clear 1 ± 3 % for WIN", _threshold("min_speedup"), 0.03),
    ("docs/comparison.md", "±3 %\": the difference is real", _threshold("min_speedup"), 0.03),
    ("docs/comparison.md", "must fall by ≥ 20 %", _threshold("fusion_min_kernel_drop"), 0.2),
    ("docs/comparison.md", "an exact 20 % drop", _threshold("fusion_min_kernel_drop"), 0.2),
    ("docs/comparison.md", "short of the 20%", _threshold("fusion_min_kernel_drop"), 0.2),
    ("docs/comparison.md", "must explain ≥ 50 % of the period",
     _threshold("launch_min_wait_share"), 0.5),
    ("docs/comparison.md", "at least 25 % of the unprofiled step time saved",
     _threshold("fusion_min_busy_share"), 0.25),
    ("docs/comparison.md", "by at least 15 % of the unprofiled step",
     _threshold("straggler_min_host_share"), 0.15),
    ("docs/comparison.md", "by at least 5 % of the step (one rank's compute",
     _threshold("straggler_min_share"), 0.05),
    ("docs/comparison.md", "`straggler_min_host_share` (0.15)",
     _threshold("straggler_min_host_share"), 0.15),
    # `kernel-diff --min-change`'s default.
    ("docs/comparison.md", "`--min-change`, default 5 %",
     _code_constant("traceviz.analyze.review.kernel_diff", "MIN_CHANGE"), 0.05),
)

#: Worked examples whose numbers are a hand-built trace's construction and the reader's
#: arithmetic on it, between ``<!-- by construction: TEST_FILE -->`` and ``<!-- /by
#: construction -->``: (page, the test file that builds the trace and pins the numbers).
WORKED_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("docs/metrics.md", "tests/test_ranks_handbuilt.py"),
    ("docs/metrics.md", "tests/test_host_wait_handbuilt.py"),
)
BY_CONSTRUCTION_BLOCK = re.compile(
    r"^<!-- by construction: (?P<test>\S+) -->\n.*?^<!-- /by construction -->$", re.M | re.S)

#: Numbers that are the construction of an example or a test, not a measurement: (page, the
#: phrase, why). Each phrase must be on its page.
BY_CONSTRUCTION: tuple[tuple[str, str, str], ...] = (
    ("docs/metrics.md", "overlap for 0 ns", "touching intervals share no time, by definition"),
    ("docs/metrics.md", "more than 0 ns", "a gap counts for a source that got any of it"),
    ("docs/metrics.md", "A 1 ns window is fine", "the smallest positive window, as an example"),
    ("docs/metrics.md", "under 0.1 ms", "the printing rule's threshold, stated as a rule"),
    ("docs/metrics.md", "moved by at most 10 % of its value",
     "the rule of traceviz/analyze/host_wait/shift.py (`abs(delta) <= 0.1 * mode`, a literal, "
     "no named constant), stated as a rule"),
    ("docs/reliability.md", "1 ns too long", "the deliberate mutation adds 1 ns to a period"),
    ("docs/reliability.md", "1 ns on",
     "the edge tests place a timestamp 1 ns either side of each threshold"),
    ("docs/reliability.md", "then in 30 % of examples",
     "the fuzzer's construction: benchmarks/fuzz.py mutates the bytes when rng.random() < 0.3"),
    ("docs/reliability.md", "kernel count fell 20.0%, short of the 20% drop that fusion needs",
     "the message the code gives for the campaign's example, 20 → 16 kernels"),
    ("docs/reliability.md", "(5 % or\n500 %?)",
     "the two readings of the refused bare `5`, an example"),
    ("docs/comparison.md", "from 0.1 ms up", "the headline's printing rule, stated as a rule"),
    ("docs/comparison.md", "5 steps of 20 ms with the host at\n70 % of the GPU",
     "a hypothetical GPU-bound block, the reader's arithmetic on the lag rule"),
    ("docs/comparison.md", "a 5.4 ms step with 0.26 ms of compute",
     "issue 36's NCCL-spinning rank, rebuilt by tests/test_bound_call.py with these times"),
    ("docs/comparison.md", "5 % or 500 %?", "the two readings of the refused bare `5`, an example"),
    ("docs/comparison.md", "--max-slowdown 5%", "the limit the example CI workflow chooses"),
    ("docs/comparison.md", "steps of 20 µs to 20 ms",
     "the step sizes tests/test_bound_call.py builds its paired blocks with"),
    ("docs/comparison.md", "60.0 µs/step → 20.0 µs/step",
     "tests/test_bounding_rank.py's hand-built ranks: the headline it pins"),
    ("docs/comparison.md", "its 100 µs all-reduce overlapped 40 → 80 µs by compute, so exposed "
     "60 → 20 µs/step", "tests/test_bounding_rank.py's hand-built ranks"),
    ("docs/comparison.md", "22× slower CPU run (eager 0.545 → 12.37 ms/step, +2169 %",
     "the issue's case, rebuilt by tests/test_gate_spread.py with these step times"),
    ("docs/comparison.md", "true 1.15× speed-up",
     "a simulated scenario of tests/calibration.py (the true speed-up it draws around)"),
    ("docs/comparison.md", "1.2× slower",
     "a simulated scenario of tests/run_calibration.py (the slowdown it builds in)"),
    ("docs/comparison.md", "1.2× slowdown", "the same scenario, named in the reading"),
)

#: Hand-typed measured numbers still in each page's prose (the debt this test ratchets down).
UNROUTED: dict[str, int] = {}


def _allowed_spans(page: str, text: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in d.BLOCK.finditer(text)]
    spans += [(m.start(), m.end()) for m in INLINE_CODE.finditer(text)]
    for m in d.RECORDED.finditer(text):
        marker, rest = m.group().split("\n", 1)
        inner = rest.rsplit("\n", 1)[0].strip("\n")  # between the two marker lines
        fenced = inner.startswith("```") and inner.endswith("```") and inner.count("```") == 2
        cited = CITED.findall(marker)
        if fenced or (cited and all((ROOT / c).exists() for c in cited)):
            spans.append((m.start(), m.end()))
    for m in BY_CONSTRUCTION_BLOCK.finditer(text):
        if (page, m["test"]) in WORKED_EXAMPLES:
            spans.append((m.start(), m.end()))
    for constant_page, phrase, *_ in (*CONSTANTS, *BY_CONSTRUCTION):
        if constant_page == page:
            spans += [(m.start(), m.end()) for m in re.finditer(re.escape(phrase), text)]
    return spans


def unrouted(page: str, text: str, pattern: re.Pattern[str] = MEASURED) -> list[str]:
    """``LINE: NUMBER`` of each match of ``pattern`` (by default a measured-looking number) in
    ``text`` outside the allowed spans."""
    spans = _allowed_spans(page, text)
    return [f"{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
            for m in pattern.finditer(text)
            if not any(a <= m.start() < b for a, b in spans)]


@pytest.mark.parametrize("page", PAGES)
def test_measured_numbers_in_the_prose_come_from_committed_data(page: str) -> None:
    found = unrouted(page, (ROOT / page).read_text(encoding="utf-8"))
    allowed = UNROUTED.get(page, 0)
    assert len(found) <= allowed, (
        f"{page}: {len(found)} hand-typed measured numbers, at most {allowed} allowed; put new "
        "ones in an <!-- output: … --> block (scripts/docs_outputs.py) or a <!-- recorded: "
        "benchmarks/results/… --> one:\n" + "\n".join(found))
    assert len(found) == allowed, (
        f"{page}: {len(found)} hand-typed numbers left, fewer than the {allowed} recorded: "
        f"lower UNROUTED[{page!r}] to {len(found)}")


@pytest.mark.parametrize("page", PAGES)
def test_percentages_in_the_prose_come_from_committed_data_or_the_code(page: str) -> None:
    found = unrouted(page, (ROOT / page).read_text(encoding="utf-8"), PERCENT)
    assert not found, (
        f"{page}: {len(found)} hand-typed percentages; generate them (scripts/docs_outputs.py) "
        "or list a code constant in CONSTANTS:\n" + "\n".join(found))


def test_a_typed_percentage_is_caught_and_a_listed_constant_is_not() -> None:
    text = "A 95 % CI; 92% of the time saved; `--max-slowdown 5%`.\n"
    assert unrouted("README.md", text, PERCENT) == ["1: 92%"]


@pytest.mark.parametrize(("page", "phrase", "value", "expected"), CONSTANTS,
                         ids=[f"{p}:{s}" for p, s, _, _ in CONSTANTS])
def test_each_allowed_constant_is_on_its_page_and_equals_the_code(
        page: str, phrase: str, value: Callable[[], object], expected: object) -> None:
    assert phrase in (ROOT / page).read_text(encoding="utf-8")
    assert value() == expected


@pytest.mark.parametrize(("page", "phrase", "why"), BY_CONSTRUCTION,
                         ids=[f"{p}:{s}" for p, s, _ in BY_CONSTRUCTION])
def test_each_number_by_construction_is_on_its_page(page: str, phrase: str, why: str) -> None:
    assert why
    assert phrase in (ROOT / page).read_text(encoding="utf-8")


@pytest.mark.parametrize(("page", "test"), WORKED_EXAMPLES,
                         ids=[f"{p}:{s}" for p, s in WORKED_EXAMPLES])
def test_each_worked_example_is_marked_on_its_page_and_its_test_exists(page: str,
                                                                        test: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert test in [m["test"] for m in BY_CONSTRUCTION_BLOCK.finditer(text)]
    assert (ROOT / test).is_file()


def test_a_typed_timing_outside_the_blocks_is_caught_and_one_inside_is_not() -> None:
    text = ("The suite took 2 passed in 10.94s and ran 1.40× faster in 3.2 ms.\n\n"
            "<!-- output: python scripts/x.py -->\nit ran 12 ms\n<!-- /output -->\n\n"
            "Run `traceviz profile --timing-budget-s 30 s`.\n\n"
            "<!-- recorded: a GPU run -->\n```\n$ traceviz profile w.py\n[eager] 4.2 ms\n```\n"
            "<!-- /recorded -->\n\n"
            "<!-- recorded: by hand -->\nprose of 5 ms\n<!-- /recorded -->\n\n"
            "<!-- recorded: benchmarks/results/2026-11-27-test-tiers-vm.json -->\n"
            "prose of 6 ms\n<!-- /recorded -->\n")
    assert unrouted("page.md", text) == ["1: passed in", "1: 10.94s", "1: 1.40×", "1: 3.2 ms",
                                         "17: 5 ms"]
