"""A CPU mode's child runs with fixed allocator settings (``traceviz/collect/runner.py``,
``child_env``): freed memory is reused and tensors too large for the heap get huge pages, so
the same eager step runs at one speed in its own process and beside a compiled mode. GPU
children keep the environment they were given."""

from __future__ import annotations

from traceviz.collect.runner import CPU_MALLOC_ENV, child_env


def test_cpu_children_get_the_malloc_settings_and_gpu_children_do_not(monkeypatch) -> None:
    for key in CPU_MALLOC_ENV:
        monkeypatch.delenv(key, raising=False)
    cpu, cuda = child_env("cpu"), child_env("cuda")
    assert {k: cpu[k] for k in CPU_MALLOC_ENV} == CPU_MALLOC_ENV
    assert not set(CPU_MALLOC_ENV) & set(cuda)
    assert cpu["PYTHONUNBUFFERED"] == cuda["PYTHONUNBUFFERED"] == "1"


def test_a_users_own_malloc_setting_wins(monkeypatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert child_env("cpu")["MALLOC_MMAP_THRESHOLD_"] == "131072"


def test_the_threshold_is_the_largest_glibc_accepts_on_64_bit() -> None:
    """glibc refuses an mmap threshold above HEAP_MAX_SIZE / 2 (32 MiB on 64-bit) and would
    keep its moving default."""
    assert int(CPU_MALLOC_ENV["MALLOC_MMAP_THRESHOLD_"]) == 32 * 1024 * 1024


def test_tensors_too_large_for_the_heap_ask_for_huge_pages(monkeypatch) -> None:
    monkeypatch.delenv("THP_MEM_ALLOC_ENABLE", raising=False)
    assert child_env("cpu")["THP_MEM_ALLOC_ENABLE"] == "1"
    monkeypatch.setenv("THP_MEM_ALLOC_ENABLE", "0")  # a user's choice stands
    assert child_env("cpu")["THP_MEM_ALLOC_ENABLE"] == "0"
