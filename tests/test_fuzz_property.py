"""Property-based fuzzing (Hypothesis) of the analysis on generated Kineto traces.

Properties, on every generated trace:

* per step, ``gpu_busy + host_wait + sync_wait + graph_internal + other_idle == period``
  exactly (integer ns), every part >= 0; shares in [0, 1];
* ``attributed + unattributed == activities``; counts equal those known by construction;
* a valid trace raises no data-validity warning; a hostile one names each injected invalid
  value under its code, excludes exactly those events, and keeps every invariant;
* the JSON report is strict JSON (no NaN / Infinity);
* the output is identical across two runs, across the serial and the parallel loader, and
  across a one-worker analysis and a three-worker one (forked processes) cut into the
  smallest blocks.

CI runs a fixed, derandomized set of examples (``derandomize=True``). For a longer campaign
set ``TRACEVIZ_FUZZ_EXAMPLES=N`` (each test then runs N random examples):
``TRACEVIZ_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest -q tests/test_fuzz_property.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import msgspec
from hypothesis import HealthCheck, given, settings

import traceviz
import traceviz.trace.loader as loader
import traceviz.trace.parallel as parallel
import traceviz.trace.scanned as scanned
from tests.strategies import GeneratedTrace, hostile, kineto_traces
from traceviz.analyze.model import Analysis
from traceviz.report.jsonout import analysis_to_dict

# ``traceviz.analyze`` is also the API's function: reach the module itself.
host_wait_blocks = importlib.import_module("traceviz.analyze.host_wait.blocks")

_CAMPAIGN = int(os.environ.get("TRACEVIZ_FUZZ_EXAMPLES", "0"))


def fuzz_settings(ci_examples: int) -> settings:
    """``ci_examples`` derandomized examples in CI; ``TRACEVIZ_FUZZ_EXAMPLES`` random ones
    when set."""
    return settings(
        max_examples=_CAMPAIGN or ci_examples,
        derandomize=not _CAMPAIGN,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@contextmanager
def written(gen: GeneratedTrace) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield gen.builder.write(Path(d) / "t.json")


def strict_json(a: Analysis, trace: traceviz.Trace) -> bytes:
    """The report's JSON bytes, checked to be strict JSON (the CLI encodes it the same way)."""
    data = msgspec.json.encode(analysis_to_dict(trace, a))

    def reject(token: str) -> Any:
        raise AssertionError(f"non-standard JSON constant {token}")

    json.loads(data, parse_constant=reject)
    return data


def assert_invariants(a: Analysis) -> None:
    for s in a.steps:
        parts = (s.gpu_busy_ns, s.host_wait_ns, s.sync_wait_ns, s.graph_internal_ns,
                 s.other_idle_ns, s.queued_ns)
        assert all(p >= 0 for p in parts), s
        assert sum(parts) == s.period_ns, s
        if s.cpu_bound_share is not None:
            assert 0.0 <= s.cpu_bound_share <= 1.0
    t = a.totals
    assert t.attributed + t.unattributed == t.activities
    assert 0 <= t.unlinked <= t.unattributed
    assert t.gpu_busy_ns + t.host_wait_ns + t.sync_wait_ns + t.graph_internal_ns \
        + t.other_idle_ns + t.queued_ns == t.period_ns <= t.step_period_sum_ns
    for share in (t.cpu_bound_share, a.per_step.cpu_bound_share):
        assert share is None or 0.0 <= share <= 1.0
    for f in a.kernel_families:
        assert 0.0 <= f.share <= 1.0


@fuzz_settings(1200)
@given(kineto_traces())
def test_generated_traces_keep_every_invariant_and_their_known_counts(gen: GeneratedTrace
                                                                      ) -> None:
    with written(gen) as path:
        trace = traceviz.load(path)
    a = traceviz.analyze(trace)
    assert_invariants(a)
    e, t = gen.expected, a.totals
    assert (t.steps, t.activities, t.kernels, t.memcpys, t.memsets) == (
        e["steps"], e["activities"], e["kernel"], e["gpu_memcpy"], e["gpu_memset"])
    assert (t.launches, t.graph_launches, t.unlinked) == (
        e["launches"], e["graph_launches"], e["unlinked"])
    assert sum(r.nodes for r in a.graph_replays) == e["graph_nodes"]
    assert not [h.code for h in a.health if h.strict]
    assert t.excluded_events == 0
    strict_json(a, trace)


@fuzz_settings(1000)
@given(hostile())
def test_hostile_values_are_named_excluded_and_never_break_an_invariant(gen: GeneratedTrace
                                                                        ) -> None:
    with written(gen) as path:
        trace = traceviz.load(path)
    a = traceviz.analyze(trace)
    assert_invariants(a)
    counts = {h.code: h.count for h in a.health}
    for code, n in gen.injected.items():
        assert counts.get(code) == n, (code, counts)
    assert a.totals.excluded_events == sum(gen.injected.values())
    for h in a.health:
        if h.strict and h.code != "degenerate_step_windows":
            assert h.code in gen.injected, h
    strict_json(a, trace)


@contextmanager
def parallel_loader() -> Iterator[list[tuple[str, int, int]]]:
    """Force the parallel decoder on small traces (tiny chunks, no size threshold); yields a
    list that records each call of it as ``(path, chunks, workers)`` (path: ``threads``, where
    the C scanner decodes, else ``processes``), to prove the path was taken."""
    calls: list[tuple[str, int, int]] = []

    def counted(name: str, real: Any) -> Any:
        def call(buf, spans, workers, progress=None, meanwhile=None):  # type: ignore[no-untyped-def]
            calls.append((name, len(spans), workers))
            return real(buf, spans, workers, progress, meanwhile)
        return call

    with mock.patch.object(loader, "CHUNK_BYTES", 200), \
            mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "decode_spans_parallel",
                              counted("processes", parallel.decode_spans_parallel)), \
            mock.patch.object(loader, "decode_spans_threaded",
                              counted("threads", parallel.decode_spans_threaded)):
        yield calls


@contextmanager
def tiny_analysis_blocks() -> Iterator[None]:
    """Cut the host-wait attribution into blocks wherever a cut is possible."""
    with mock.patch.object(host_wait_blocks, "MIN_BLOCK_EVENTS", 1), \
            mock.patch.object(host_wait_blocks, "BLOCKS_PER_THREAD", 1_000):
        yield


@fuzz_settings(150)
@given(kineto_traces())
def test_output_is_identical_across_runs_and_serial_and_parallel_loading_and_analysis(
        gen: GeneratedTrace) -> None:
    with written(gen) as path:
        t1 = traceviz.load(path)
        first = strict_json(traceviz.analyze(t1), t1)
        t2 = traceviz.load(path)
        assert strict_json(traceviz.analyze(t2), t2) == first
        with parallel_loader() as calls:
            t3 = traceviz.load(path, workers=3)
            with mock.patch.object(scanned, "SCANNER", None):  # msgspec, forked processes
                t4 = traceviz.load(path, workers=3)
        with tiny_analysis_blocks():
            assert strict_json(traceviz.analyze(t3, workers=3), t3) == first
        assert strict_json(traceviz.analyze(t4), t4) == first
    if len(gen.builder.events) > 8:  # several chunks really went through several workers
        first_path = "threads" if scanned.SCANNER is not None else "processes"
        assert [c[0] for c in calls] == [first_path, "processes"]
        assert all(chunks > 1 and workers == min(3, chunks) for _, chunks, workers in calls)
