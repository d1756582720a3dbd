"""``small_pages`` turns numpy's huge-page advice off inside the block only, and is used by
table building and the analysis."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.kineto import TraceBuilder
from traceviz.trace import load, pages
from traceviz.trace.pages import small_pages


def advice_now() -> bool:
    setter = pages._advice_setter()
    assert setter is not None  # the numpy this project pins has the switch
    before = setter(True)
    setter(before)
    return before


@pytest.mark.parametrize("initial", [True, False])
def test_advice_is_off_inside_and_restored_after(initial: bool) -> None:
    setter = pages._advice_setter()
    assert setter is not None
    outer = setter(initial)
    try:
        with small_pages():
            assert advice_now() is False
            np.zeros(1 << 21)  # a large allocation inside works as usual
        assert advice_now() is initial
    finally:
        setter(outer)


def test_advice_is_restored_when_the_block_raises() -> None:
    before = advice_now()
    with pytest.raises(ValueError), small_pages():
        raise ValueError("boom")
    assert advice_now() is before


def test_decorated_function_sees_the_advice_off() -> None:
    before = advice_now()

    @small_pages()
    def inside() -> bool:
        return advice_now()

    assert inside() is False
    assert advice_now() is before


def test_without_numpy_switch_it_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "_advice_setter", lambda: None)
    with small_pages():
        pass


def test_table_building_and_analysis_run_with_small_pages(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    analysis = importlib.import_module("traceviz.analyze.analysis")
    loader = importlib.import_module("traceviz.trace.loader")
    seen: dict[str, bool] = {}

    def spy(module: Any, name: str) -> None:
        real = getattr(module, name)

        def wrapped(*args: Any) -> Any:
            seen[name] = advice_now()
            return real(*args)

        monkeypatch.setattr(module, name, wrapped)

    spy(analysis, "_analyze_screened")
    spy(loader, "_concat")
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    b.kernel(1_000, 3_000, 2_000)
    before = advice_now()
    analysis.analyze(load(b.write(tmp_path / "t.json")))
    assert seen == {"_concat": False, "_analyze_screened": False}
    assert advice_now() is before
