"""Shared fixtures: where the real traces live (skipped cleanly when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_HTA = ROOT.parent / "shared" / "cases" / "hta"
GPU_TRACES = ROOT / "tests" / "data" / "gpu"


def shared_hta_traces() -> list[Path]:
    return sorted(SHARED_HTA.glob("*.json.gz")) if SHARED_HTA.is_dir() else []


def gpu_traces() -> list[Path]:
    return sorted(GPU_TRACES.glob("*.json.gz")) if GPU_TRACES.is_dir() else []


#: Modules of the slow tier (``scripts/test --all``; ``.ci/run`` runs it): real ``traceviz
#: profile`` runs on the CPU (single-process and ``--nproc`` ranks, crashes, hangs, timeouts),
#: the browser, the fuzz and mutation campaigns, the HTA cross-checks, the analyses of every
#: committed GPU run and real trace, the benchmarks' own tests, the docs' regenerated outputs,
#: the memory-bound subprocesses and the calibration simulations. Each takes 5 s to 3 min on 2
#: cores; the fast tier (``scripts/test``) is everything else. A test elsewhere joins the tier
#: with ``@pytest.mark.slow``.
SLOW_MODULES = frozenset({
    "test_ambiguity_health", "test_benchmark_machinery", "test_benchmark_ranks",
    "test_broken_process_group_ends_the_mode", "test_browser",
    "test_collect_broken_modes", "test_collect_crash_runs", "test_collect_distributed",
    "test_collect_profile_cpu", "test_collect_ranks_lockstep", "test_collect_tp",
    "test_comm_hta", "test_docs_outputs", "test_docs_site", "test_fuzz_mutation",
    "test_fuzz_property", "test_gpu_runs_committed", "test_host_wait_depth",
    "test_host_wait_real", "test_hta_crosscheck",
    "test_nproc_hang_on_every_rank", "test_profile_against_cpu",
    "test_ranks_real", "test_ranks_that_linger_keep_their_results", "test_ranks_scale",
    "test_run_calibration", "test_speed_calibration", "test_split_calibration",
    "test_timeout_kills_process_tree",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tier's modules (:data:`SLOW_MODULES`); skip ``@pytest.mark.gpu`` tests on
    machines without CUDA."""
    slow = pytest.mark.slow
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(slow)
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
