"""The loader's ``comms`` table: collective parameters of record_param_comms / NCCL kernels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import traceviz
from tests.kineto import TraceBuilder
from traceviz.trace import loader
from traceviz.vocab import Category


def _trace(tmp_path: Path) -> Path:
    b = TraceBuilder()
    for i in range(40):
        b.kernel(launch_ts=i * 10_000, ts=i * 10_000 + 2_000, dur=1_000, name=f"gemm{i % 3}")
        b.collective(i * 10_000 + 3_000, i * 10_000 + 5_000, 2_000, nelems=100 + i,
                     seq=i, on_kernel=i % 2 == 0)
    return b.write(tmp_path / "c.json")


def test_comms_rows_carry_the_arguments_exactly(tmp_path: Path) -> None:
    t = traceviz.load(_trace(tmp_path))
    c = t.comms
    ops = c[c["cat"] == Category.CPU_OP]
    kernels = c[c["cat"] == Category.KERNEL]
    assert len(ops) == 40 and len(kernels) == 20
    assert ops["in_nelems"].tolist() == [100 + i for i in range(40)]
    assert ops["seq"].tolist() == list(range(40))
    assert set(ops["collective"]) == {"allreduce"} and set(ops["dtype"]) == {"Float"}
    assert set(ops["group_name"]) == {"0"}
    # the kernel rows keep the kernel's own correlation and times
    gpu = t.gpu.set_index("correlation")
    assert (gpu.loc[kernels["correlation"], "ts_ns"].to_numpy()
            == kernels["ts_ns"].to_numpy()).all()
    assert (kernels["end_ns"] - kernels["ts_ns"] == 2_000).all()


def test_chunked_decoding_gives_the_same_comms_table(tmp_path: Path, monkeypatch) -> None:
    path = _trace(tmp_path)
    whole = traceviz.load(path).comms
    monkeypatch.setattr(loader, "CHUNK_BYTES", 2_000)  # many chunks
    chunked = traceviz.load(path).comms
    pd.testing.assert_frame_equal(whole, chunked)


def test_a_trace_without_collectives_has_an_empty_comms_table(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.kernel(launch_ts=0, ts=1_000, dur=1_000)
    c = traceviz.load(b.write(tmp_path / "n.json")).comms
    assert len(c) == 0 and "collective" in c.columns
