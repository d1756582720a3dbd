"""The many-ranks benchmark's inputs (``benchmarks/ranks.py``) and the CI variant of its check:
4 generated ranks of the committed H200 straggler run, ``--dask local`` with 2 workers gives
the default path's bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.ranks import SKEW_NS, arrival_delay_ns, generate_ranks, source_ranks

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        source_ranks()
    except FileNotFoundError:
        pytest.skip("no committed two-rank run in reports/")
    folder, plan = generate_ranks(4, 2_000_000, tmp_path_factory.mktemp("g") / "ranks",
                                  log=lambda _m: None)
    assert plan["ranks"] == 4 and len(list(folder.glob("*.json"))) == 4
    return folder


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", "report", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_generated_ranks_carry_the_skew_the_hosts_and_a_straggler(generated: Path) -> None:
    r = _report(str(generated), "--format", "json")
    assert r.returncode == 0, r.stderr
    ranks = json.loads(r.stdout)["ranks"]
    assert ranks["count"] == ranks["world_size"] == 4
    assert [t["hostname"] for t in ranks["traces"]] == ["node0", "node0", "node1", "node1"]
    clock = ranks["clock"]
    assert clock["aligned_by"] == "collective_end"
    # host 1's clock runs SKEW_NS ahead; rank 2 is a copy of rank 0 of the source run
    assert clock["offsets_us"]["2"] == SKEW_NS / 1000 and clock["spread_us"]["2"] == 0.0
    # the straggler is a copy of the source's host-bound rank 1: an odd rank, the later one
    assert arrival_delay_ns(3) > arrival_delay_ns(1)
    assert ranks["straggler"]["rank"] == 3 and ranks["straggler"]["cause"] == "host"


@pytest.mark.timeout(300)
def test_dask_local_with_two_workers_matches_the_default_path_on_generated_ranks(
        generated: Path) -> None:
    pytest.importorskip("distributed")
    default = _report(str(generated), "--format", "json")
    dask = _report(str(generated), "--format", "json", "--dask", "local", "--workers", "2")
    pool = _report(str(generated), "--format", "json", "--workers", "2")
    assert default.returncode == dask.returncode == pool.returncode == 0, dask.stderr
    assert dask.stdout == default.stdout == pool.stdout
