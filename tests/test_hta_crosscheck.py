"""traceviz's numbers against Holistic Trace Analysis (HTA) on real GPU traces.

Traces: HTA's own test traces in ``../shared/cases/hta/`` (beside the checkout) and the
committed real GPU traces ``tests/data/gpu/*.json.gz``; each folder is skipped when absent.

Where the definitions coincide the two must agree within a tolerance derived from how HTA
reads times; where they differ by design the test asserts the direction, so a regression on
either side shows up.

Tolerance: traceviz keeps integer ns (``round(ts * 1000)``); HTA keeps float µs. With HTA's ns
rounding disabled each activity boundary may differ by float error, bounded here by
``BOUNDARY_US`` = 1 ns; with rounding on (older HTA) HTA moves each start up and each end down
to a whole µs, i.e. up to 1 µs per boundary. A window has 2 boundaries; a union of N
activities has at most 2N.

Coinciding definitions (asserted equal within tolerance):
- GPU op counts per category, when the trace has fewer than two ProfilerSteps (HTA then does
  not filter GPU ops; with two or more it keeps only GPU ops whose launch call is in the
  trace, so at most ``activities − unlinked``);
- runtime/driver calls correlated with ≥1 GPU op (HTA's dataframe) vs ``totals.launches``,
  when HTA kept every GPU op;
- HTA's temporal ``kernel_time`` vs ``gpu_window_ns`` and ``idle_time`` vs
  ``gpu_window_ns − gpu_busy_all_ns``, when the events HTA's breakdown spans are exactly the GPU
  ops traceviz counts.

By design (asserted as a direction):
- HTA keeps a subset of the GPU ops (its step filter) ⇒ counts ≤, window ≤, busy ≤;
- HTA's temporal breakdown also spans non-GPU rows that carry a stream (``cuda_sync``, Triton's
  launch ``cpu_op``) ⇒ when it kept every GPU op, window ≥ and busy ≥;
- HTA's launch statistics match launch calls by exact name (no ``cuLaunchKernel`` or
  ``cudaGraphLaunch``) ⇒ fewer launches than traceviz, strictly fewer when the trace has
  driver kernel launches or graph launches.

Run with ``-s`` to see the compared numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import traceviz
from traceviz.holistic import HtaResult, run_hta
from traceviz.holistic.notes import GPU_OP_CATS
from traceviz.vocab import STEP_MARKER, LaunchKind, base_api_name

pytestmark = pytest.mark.hta
pytest.importorskip("hta")

HERE = Path(__file__).resolve().parent
SHARED_HTA = Path(__file__).resolve().parents[2] / "shared" / "cases" / "hta"
COMMITTED_GPU = HERE / "data" / "gpu"
FOLDERS = (SHARED_HTA, COMMITTED_GPU)


def _traces() -> list[Any]:
    params = []
    for folder in FOLDERS:
        found = sorted(folder.glob("*.json.gz")) if folder.is_dir() else []
        if not found:
            reason = f"no *.json.gz traces in {folder}"
            params.append(pytest.param(None, id=folder.name, marks=pytest.mark.skip(reason)))
        params += [pytest.param(p, id=p.name.removesuffix(".json.gz")) for p in found]
    return params


@dataclass(frozen=True)
class Pair:
    """traceviz's side and HTA's side for one trace."""

    path: Path
    totals: Any  # traceviz Analysis.totals (counts; times in integer ns)
    driver_kernel_launches: int  # cuLaunchKernel-style launch calls linked to GPU work
    step_names: int  # distinct ProfilerStep#N names in the trace
    hta: HtaResult

    @property
    def boundary_us(self) -> float:
        """Largest disagreement per activity boundary, in µs (see module docstring)."""
        return 0.001 if self.hta.ns_rounding_disabled else 1.0

    @property
    def hta_ops(self) -> int:
        return sum(self.hta.gpu_ops.values())

    @property
    def spans_only_gpu_ops(self) -> bool:
        return all(c.lower() in GPU_OP_CATS for c in self.hta.temporal_events)


_CACHE: dict[Path, Pair] = {}


def _pair(path: Path) -> Pair:
    """traceviz and HTA on ``path``, computed once per test session."""
    if path not in _CACHE:
        trace = traceviz.load(path)
        analysis = traceviz.analyze(trace)
        rt, gpu = trace.runtime, trace.gpu
        linked = rt[(rt["kind"] == LaunchKind.KERNEL) & rt["correlation"].isin(gpu["correlation"])]
        driver = sum(base_api_name(str(n)).startswith("cuLaunch") for n in linked["name"])
        steps = {n for n in trace.cpu["name"].astype(str).unique() if STEP_MARKER.match(n)}
        result = run_hta(path, rank=trace.meta.rank, totals=analysis.totals)
        _CACHE[path] = Pair(path, analysis.totals, driver, len(steps), result)
        _print(_CACHE[path])
    return _CACHE[path]


def _print(p: Pair) -> None:
    t, h = p.totals, p.hta
    tb = h.temporal_breakdown or {}
    ls = h.launch_stats or {}
    idle_ns = t.gpu_window_ns - t.gpu_busy_all_ns
    print(
        f"\n[{p.path.name}] HTA {h.hta_version} rank {h.rank} in {h.seconds:.1f} s, "
        f"errors {h.errors or 'none'}\n"
        f"  GPU ops      traceviz {t.kernels}/{t.memcpys}/{t.memsets} (kernel/memcpy/memset, "
        f"{t.unlinked} unlinked, {p.step_names} step names)"
        f"  HTA {h.gpu_ops.get('kernel')}/{h.gpu_ops.get('gpu_memcpy')}/"
        f"{h.gpu_ops.get('gpu_memset')}\n"
        f"  window µs    traceviz {t.gpu_window_ns / 1000:.3f}  HTA {tb.get('kernel_time_us')}\n"
        f"  idle µs      traceviz {idle_ns / 1000:.3f}  HTA {tb.get('idle_time_us')}\n"
        f"  launches     traceviz {t.launches} ({t.kernel_launches} kernel, "
        f"{p.driver_kernel_launches} driver, {t.graph_launches} graph)  "
        f"HTA launch stats {ls.get('launches')}, HTA linked calls "
        f"{sum(c['calls'] for c in h.launch_calls.values())}\n"
        f"  HTA spans    {h.temporal_events}"
    )


@pytest.fixture(params=_traces())
def pair(request: pytest.FixtureRequest) -> Pair:
    return _pair(request.param)


def test_hta_runs_every_analysis_but_the_critical_path(pair: Pair) -> None:
    errors = {k: v for k, v in pair.hta.errors.items() if k != "critical_path"}
    assert errors == {}


def test_gpu_op_counts(pair: Pair) -> None:
    t, ops = pair.totals, pair.hta.gpu_ops
    ours = {"kernel": t.kernels, "gpu_memcpy": t.memcpys, "gpu_memset": t.memsets}
    if pair.step_names < 2:
        assert ops == ours  # HTA filters GPU ops only with ≥ 2 ProfilerSteps
    else:  # ... and then drops at least those with no launch call in the trace
        assert all(ops[c] <= ours[c] for c in ours)
        assert pair.hta_ops <= t.activities - t.unlinked


def test_linked_launch_calls(pair: Pair) -> None:
    linked = sum(c["calls"] for c in pair.hta.launch_calls.values())
    if pair.hta_ops == pair.totals.activities:
        assert linked == pair.totals.launches
    else:
        assert linked <= pair.totals.launches


def test_hta_launch_stats_miss_driver_and_graph_launches(pair: Pair) -> None:
    t = pair.totals
    assert pair.hta.launch_stats is not None
    covered = pair.hta.launch_stats["launches"]
    unmatched = pair.driver_kernel_launches + t.graph_launches
    assert covered <= t.launches - unmatched
    if unmatched:
        assert covered < t.launches


def test_temporal_window_and_idle(pair: Pair) -> None:
    tb = pair.hta.temporal_breakdown
    assert tb is not None
    t = pair.totals
    window_tol = 2 * pair.boundary_us
    union_tol = 2 * pair.boundary_us * max(t.activities, pair.hta_ops)
    window_us, busy_us = t.gpu_window_ns / 1000, t.gpu_busy_all_ns / 1000
    hta_busy = tb["kernel_time_us"] - tb["idle_time_us"]
    subset = pair.spans_only_gpu_ops  # HTA spans some of traceviz's GPU ops
    superset = pair.hta_ops == t.activities  # HTA spans all of them (and maybe more rows)
    if subset:
        assert tb["kernel_time_us"] <= window_us + window_tol
        assert hta_busy <= busy_us + union_tol
    if superset:
        assert tb["kernel_time_us"] >= window_us - window_tol
        assert hta_busy >= busy_us - union_tol
    if subset and superset:  # the same events: the definitions coincide
        idle_us = (t.gpu_window_ns - t.gpu_busy_all_ns) / 1000
        assert tb["kernel_time_us"] == pytest.approx(window_us, abs=window_tol)
        assert tb["idle_time_us"] == pytest.approx(idle_us, abs=union_tol + window_tol)
