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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``@pytest.mark.gpu`` tests on machines without CUDA."""
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
