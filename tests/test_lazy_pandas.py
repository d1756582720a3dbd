"""pandas is imported on first use: not by ``import traceviz`` or the CLI's start, not in the
decode workers, and by the loader while its workers decode a big trace."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from traceviz.lazy import LazyModule
from traceviz.trace.decode import _factorize, split_event_array
from traceviz.trace.parallel import can_fork, decode_spans_parallel
from traceviz.trace.text import MemoryText


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint(*sys.modules)"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_importing_traceviz_and_the_cli_does_not_import_pandas() -> None:
    loaded = _modules_after("import traceviz, traceviz.cli.app")
    assert "traceviz.api.analysis" in loaded and "traceviz.trace.loader" in loaded
    assert "pandas" not in loaded


def test_analysing_a_trace_imports_pandas() -> None:
    trace = Path(__file__).parent / "data" / "gpu" / "elementwise_eager.pt.trace.json.gz"
    loaded = _modules_after(f"import traceviz\ntraceviz.analyze({str(trace)!r})")
    assert "pandas" in loaded


def test_a_lazy_module_imports_on_first_attribute() -> None:
    lazy = LazyModule("json")
    assert lazy.dumps([1]) == "[1]"
    with pytest.raises(AttributeError):
        _ = lazy.no_such_name
    with pytest.raises(ModuleNotFoundError):
        _ = LazyModule("no_such_module_here").x


@pytest.mark.parametrize("values", [
    [], ["X"], ["b", "a", "b", "c", "a", "a"], ["", "é", "", "日本", "é"],
    [f"n{i % 97}" for i in range(5000)],
])
def test_factorize_matches_pandas_in_order_of_first_appearance(values: list[str]) -> None:
    codes, uniques = _factorize(values)
    want_codes, want_uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
    assert codes.dtype == np.int32
    assert codes.tolist() == want_codes.tolist()
    assert uniques == want_uniques.tolist()


@pytest.mark.skipif(not can_fork(), reason="needs fork")
def test_meanwhile_runs_once_after_the_workers_started() -> None:
    events = b"[" + b", ".join(
        b'{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "dur": 1}'
        % (i, i) for i in range(400)) + b"]"
    buf = memoryview(bytearray(events))
    spans = split_event_array(buf, 2_000)
    assert len(spans) > 4
    calls: list[int] = []
    chunks = decode_spans_parallel(
        MemoryText(buf), spans, 3,
        meanwhile=lambda: calls.append(len(multiprocessing.active_children())))
    assert len(calls) == 1 and calls[0] >= 1  # the workers were running
    assert sum(c.n_events for c in chunks) == 400
