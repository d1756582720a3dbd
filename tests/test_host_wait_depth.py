"""Host-wait attribution at any nesting depth: exact on deep chains, the inclusive view equal
to walking each piece's chain (random traces: repeated names, recursion, improper nesting,
compiled regions, two threads), and bounded memory on the adversarial shapes of issue 37."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.deep_nesting import deep_chain, deep_stacks
from tests.test_host_wait_blocks import random_trace
from traceviz.analyze.host_wait import block_attribution
from traceviz.analyze.host_wait.nesting import _stack_nesting

REPO = Path(__file__).resolve().parent.parent
MB = 10**6

#: Runs ``traceviz report`` and writes this process's peak RSS (``VmHWM``) at exit.
_MEASURED = """
import atexit, sys
peak_file = sys.argv[1]
def _peak():
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    with open(peak_file, "w") as out:
        out.write(str(kb * 1024))
atexit.register(_peak)
sys.argv = ["traceviz", *sys.argv[2:]]
from traceviz.cli.app import main
main()
"""


def peak_rss(trace: Path, tmp_path: Path) -> int:
    """Peak RSS (bytes) of ``traceviz report TRACE -f json`` (to stdout) in a fresh process."""
    peak = tmp_path / "peak"
    r = subprocess.run([sys.executable, "-c", _MEASURED, str(peak), "report", str(trace),
                        "-f", "json", "-o", str(tmp_path / "r.json")],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    assert r.returncode == 0, r.stderr
    return int(peak.read_text())


@pytest.mark.parametrize("names", [None, 7], ids=["distinct", "repeating"])
def test_every_op_of_a_deep_chain_holds_all_the_wait_once(tmp_path: Path,
                                                          names: int | None) -> None:
    depth, launches = 3_000, 40
    a = traceviz.analyze(traceviz.load(deep_chain(depth, launches, names).write(
        tmp_path / "t.json")))
    h = a.host_wait_sources
    assert h is not None and h.gaps == launches - 1
    total = h.total_ns
    inclusive = {r.source: r for r in h.table().inclusive}
    ops = {f"op{d % (names or depth)}" for d in range(depth)}
    assert all(inclusive[op].host_wait_ns == total and inclusive[op].gaps == h.gaps
               for op in ops)
    self_ = {r.source: r.host_wait_ns for r in h.table().self}
    innermost = f"op{(depth - 1) % (names or depth)}"
    assert self_ == {innermost: total // 2, "cudaLaunchKernel": total // 2}  # 2 µs + 2 µs
    assert len(h.path_parent) == depth + 1  # one path per level, and the launch call


def _chain_walk(gap: np.ndarray, path: np.ndarray, ns: np.ndarray, path_parent: np.ndarray,
                slot_label: np.ndarray, gap_step: np.ndarray, shared: np.ndarray
                ) -> tuple[dict, dict, set]:
    """The inclusive view by walking each piece's chain: ns per (step, label); gaps per
    (step, label) over unshared gaps; (gap, label) pairs of shared gaps."""
    parents = np.append(path_parent, -1).tolist()
    labels_of: dict[int, set[int]] = {}
    for p in set(path.tolist()):
        chain, j = set(), p
        while j >= 0:
            chain.add(int(slot_label[j]))
            j = parents[j]
        labels_of[p] = chain
    ns_of: dict[tuple[int, int], int] = {}
    per_gap: dict[int, set[int]] = {}
    for g, p, v in zip(gap.tolist(), path.tolist(), ns.tolist(), strict=True):
        for lab in labels_of[p]:
            key = (int(gap_step[g]), lab)
            ns_of[key] = ns_of.get(key, 0) + v
        per_gap.setdefault(g, set()).update(labels_of[p])
    counts: dict[tuple[int, int], int] = {}
    pairs = set()
    for g, labs in per_gap.items():
        for lab in labs:
            if shared[g]:
                pairs.add((g, lab))
            else:
                key = (int(gap_step[g]), lab)
                counts[key] = counts.get(key, 0) + 1
    return ns_of, counts, pairs


@pytest.mark.parametrize("seed", range(40))
def test_inclusive_view_equals_walking_each_pieces_chain(tmp_path: Path, seed: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    checked = []
    sums = block_attribution._Work._sums

    def checking(work, labels, bad, gap, path, ns, path_parent, slot_label, levels, inc):
        out = sums(work, labels, bad, gap, path, ns, path_parent, slot_label, levels, inc)
        want_ns, want_counts, want_pairs = _chain_walk(gap, path, ns, path_parent, slot_label,
                                                       work.gap_step, work.shared)
        for got, want in ((out.inclusive_ns, want_ns), (out.inclusive_counts, want_counts)):
            step, lab, value = (x.tolist() for x in got)
            assert dict(zip(zip(step, lab, strict=True), value, strict=True)) == want
        gap_, lab_ = (x.tolist() for x in out.inclusive_shared)
        assert set(zip(gap_, lab_, strict=True)) == want_pairs
        checked.append(len(gap))
        return out

    monkeypatch.setattr(block_attribution._Work, "_sums", checking)
    a = traceviz.analyze(traceviz.load(random_trace(seed).write(tmp_path / "t.json")),
                         workers=1)
    assert a.host_wait_sources is not None
    assert bool(checked) == (a.host_wait_sources.gaps > 0)


def test_stack_nesting_makes_children_fit_and_keeps_laminar_ends() -> None:
    s = np.array([0, 5, 15, 16, 40], np.int64)  # sorted by start
    e = np.array([10, 20, 30, 18, 50], np.int64)  # 5–20 ends after 0–10; 15–30 after nothing
    assert _stack_nesting(s, e).tolist() == [10, 10, 30, 18, 50]
    laminar = np.array([50, 20, 12, 30, 45], np.int64)
    assert _stack_nesting(np.array([0, 5, 6, 25, 40], np.int64), laminar).tolist() == (
        laminar.tolist())


def test_the_deep_chain_of_issue_37_stays_under_500_mb(tmp_path: Path) -> None:
    """20 000 nested ops with 2 000 launches inside (3.7 MB): 38.8 s and 4.17 GB before."""
    trace = deep_chain().write(tmp_path / "chain.json")
    assert peak_rss(trace, tmp_path) <= 500 * MB


def test_deep_stacks_stay_within_the_documented_memory_bound(tmp_path: Path) -> None:
    """500 stacks of 200 nested ops (15 MB): peak RSS ≤ 1.5 × the file + 200 MB."""
    trace = deep_stacks().write(tmp_path / "stacks.json")
    assert peak_rss(trace, tmp_path) <= 1.5 * trace.stat().st_size + 200 * MB


#: The CLI with every host-wait block running out of memory.
_STARVED = """
import sys
from traceviz.analyze.host_wait import block_attribution
def starve(self, blk):
    raise MemoryError("Unable to allocate 4.00 GiB")
block_attribution._Work.attribute = starve
sys.argv = ["traceviz", *sys.argv[1:]]
from traceviz.cli.app import main
main()
"""


def test_running_out_of_memory_in_attribution_names_the_stage(tmp_path: Path) -> None:
    trace = deep_chain(50, 5).write(tmp_path / "t.json")
    r = subprocess.run([sys.executable, "-c", _STARVED, "report", str(trace), "-f", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "traceviz: error: out of memory while attributing host wait (block 1 of 1)"]
