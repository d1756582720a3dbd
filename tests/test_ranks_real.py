"""Multi-rank analysis on real NCCL traces (HTA's A100/V100 DDP traces, ../shared/cases/hta).

The HTA traces are single ranks of different runs, so each is paired with a copy of itself
relabelled as rank 1 (optionally shifted in time): the answers are then known exactly (every
wait 0, every offset the shift) while the collectives, their kernel names and their
``record_param_comms`` / kernel arguments are real.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.conftest import SHARED_HTA
from traceviz.analyze.distributed import RanksAnalysis, analyze_ranks
from traceviz.analyze.distributed.instances import collective_kernel_rows

NCCL_2024 = "a100_eager_nccl_2024_rank0.json.gz"  # record_param_comms + kernel args
NCCL_2022 = "a100_eager_nccl_rank3.json.gz"  # no collective arguments at all


def _need(name: str) -> Path:
    path = SHARED_HTA / name
    if not path.is_file():
        pytest.skip(f"{name} not in ../shared/cases/hta")
    return path


def pair_with_itself(path: Path, tmp: Path, shift_us: float = 0.0) -> RanksAnalysis:
    doc = json.loads(gzip.decompress(path.read_bytes()))
    original_rank = doc["distributedInfo"]["rank"]
    world = max(doc["distributedInfo"]["world_size"], original_rank + 2)
    original = path
    if world != doc["distributedInfo"]["world_size"]:  # both must say it: one run
        doc["distributedInfo"]["world_size"] = world
        original = tmp / "original.json"
        original.write_text(json.dumps(doc))
    doc["distributedInfo"]["rank"] = original_rank + 1
    for ev in doc["traceEvents"]:
        if isinstance(ev.get("ts"), (int, float)):
            ev["ts"] = ev["ts"] + shift_us
    copy = tmp / "copy.json"
    copy.write_text(json.dumps(doc))
    items = [(t, traceviz.analyze(t)) for t in (traceviz.load(original), traceviz.load(copy))]
    r = analyze_ranks(items)
    assert r.consistent, r.inconsistency
    return r


@pytest.mark.parametrize(("name", "kernels"), [
    (NCCL_2024, 21), (NCCL_2022, 60), ("a100_compile_cudagraph_triton_nccl_rank0.json.gz", 80),
    ("v100_compiled_cudagraph_nccl_rank1.json.gz", 64)])
def test_nccl_kernels_are_found_in_real_traces(name: str, kernels: int) -> None:
    assert len(collective_kernel_rows(traceviz.load(_need(name)))) == kernels


def test_real_2024_trace_paired_with_itself_matches_every_collective(tmp_path: Path) -> None:
    r = pair_with_itself(_need(NCCL_2024), tmp_path)
    inst = r.instances
    assert r.steps == (4, 5, 6)
    assert len(inst) == 42 and (inst.match >= 0).all()
    assert (inst.wait_ns == 0).all() and (inst.lateness_ns == 0).all()
    assert np.array_equal(inst.transfer_ns, inst.end_ns - inst.start_ns)
    assert set(inst.name) == {"allreduce", "broadcast"}
    assert set(inst.group) == {"0"}
    # sizes from the arguments: 2049000 Float elements -> 8196000 bytes
    assert 8_196_000 in set(inst.bytes.tolist()) and (inst.bytes > 0).all()
    assert [w.code for w in r.health if w.code == "collective_mismatch"] == []
    assert r.straggler is None
    assert r.per_rank[0].comm_wait_ns_median == 0


def test_real_2024_trace_with_a_shifted_clock_recovers_the_offset(tmp_path: Path) -> None:
    r = pair_with_itself(_need(NCCL_2024), tmp_path, shift_us=5_000.0)
    assert r.clock.aligned_by == "collective_end"
    assert r.clock.offsets_ns[1] == 5_000_000 and r.clock.spread_ns[1] == 0
    assert (r.instances.wait_ns == 0).all()


def test_real_2022_trace_without_arguments_matches_by_kernel_name(tmp_path: Path) -> None:
    r = pair_with_itself(_need(NCCL_2022), tmp_path)
    inst = r.instances
    assert len(inst) > 0 and (inst.match >= 0).all()
    assert set(inst.name) <= {"allreduce", "sendrecv"} and (inst.bytes == -1).all()
    assert (inst.wait_ns == 0).all()


@pytest.mark.parametrize(("name", "instances"), [
    ("a100_compile_cudagraph_triton_nccl_rank0.json.gz", 75),
    ("v100_compiled_cudagraph_nccl_rank1.json.gz", 60)])
def test_real_compiled_cudagraph_traces_pair_every_instance_in_a_step(
        name: str, instances: int, tmp_path: Path) -> None:
    r = pair_with_itself(_need(name), tmp_path)
    inst = r.instances
    assert len(inst) == 2 * instances and (inst.match >= 0).all()
    assert (inst.wait_ns == 0).all()
    # NCCL kernels launched before the first / after the last ProfilerStep are not matched
    assert any(w.code == "collectives_outside_steps" for w in r.health)
