"""Host-wait attribution cut into blocks of events, attributed in several forked processes or
on several threads (where processes cannot fork), gives exactly the single-worker answer: on
random nested traces (equal timestamps at every boundary, touching events, improperly nested
children, compiled regions, two CPU threads) and on real traces, with blocks forced down to a
few events so that every possible cut is used."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import msgspec
import numpy as np
import pytest

import traceviz
from tests.kineto import BWD_TID, CPU_TID, TraceBuilder
from traceviz.analyze.host_wait import IN_REGION, HostWaitSources
from traceviz.analyze.host_wait.blocks import _blocks, _Tails, _Windows
from traceviz.analyze.host_wait.events import _Events
from traceviz.report.jsonout import analysis_to_dict
from traceviz.trace import parallel

# ``traceviz.analyze`` is also the API's function: reach the modules themselves.
hw_blocks = importlib.import_module("traceviz.analyze.host_wait.blocks")
hw_plan = importlib.import_module("traceviz.analyze.host_wait.plan")
REPO = Path(__file__).resolve().parent.parent
_NAMES = ("aten::add", "aten::mul", "train.py(12): step", "Torch-Compiled Region: 0/0",
          "## Call CompiledFxGraph fabc123 ##", "aten::copy_", "<built-in method add_ of "
          "Tensor object at 0x7f00>")
_CATS = ("cpu_op", "python_function", "user_annotation")


def random_trace(seed: int) -> TraceBuilder:
    """Steps of random CPU trees on two threads, kernels launched from their leaves."""
    rng = np.random.default_rng(seed)
    b = TraceBuilder()
    free = 0  # the stream is free from this time on (ns)
    for step in range(int(rng.integers(1, 4))):
        t0 = int(rng.integers(0, 3)) * 1_000 + step * 200_000
        t = t0
        for _ in range(int(rng.integers(1, 6))):  # top-level trees, touching or apart
            tid = int(rng.choice([CPU_TID, BWD_TID]))
            t, free = _tree(b, rng, t, tid, depth=0, free=free)
            t += int(rng.choice([0, 0, 500, 3_000]))
        b.step(step + 1, t0, t - t0 + int(rng.choice([0, 1_000])))
    return b


def _tree(b: TraceBuilder, rng: np.random.Generator, t: int, tid: int, depth: int,
          free: int) -> tuple[int, int]:
    """One event at ``t`` with 0-3 children (a child may start with its parent, end with it
    or, rarely, after it); a leaf launches a kernel. Returns (end, stream free time)."""
    start = t
    name, cat = str(rng.choice(_NAMES)), str(rng.choice(_CATS))
    kids = int(rng.integers(0, 4)) if depth < 4 else 0
    t += int(rng.choice([0, 200, 1_000]))
    if kids == 0:
        dur = int(rng.integers(1, 3)) * 1_000
        corr = b.launch(t, dur, tid=tid)
        k_start = max(t + int(rng.integers(0, 4)) * 1_000, free + int(rng.choice([0, 2_000])))
        k_dur = int(rng.integers(1, 5)) * 1_000
        b.gpu(corr, k_start, k_dur)
        free = k_start + k_dur
        t += dur
    for _ in range(kids):
        t, free = _tree(b, rng, t, tid, depth + 1, free)
        t += int(rng.choice([0, 0, 300]))
    end = t + int(rng.choice([0, 500]))
    if depth > 0 and rng.random() < 0.05:
        end = max(start + 1, end - 700)  # the last child now ends after this event
    b.x(cat, name, start, max(end - start, 1), tid=tid)
    return end, free


def fields_equal(a: HostWaitSources, b: HostWaitSources) -> bool:
    for f in dataclasses.fields(HostWaitSources):
        x, y = getattr(a, f.name), getattr(b, f.name)
        same = np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        if not same:
            return False
    return True


@pytest.fixture
def tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Blocks of a single event where a cut allows; records (blocks, gaps with time in more
    than one block) of each call."""
    monkeypatch.setattr(hw_blocks, "MIN_BLOCK_EVENTS", 1)
    monkeypatch.setattr(hw_blocks, "BLOCKS_PER_THREAD", 1_000)
    seen: list[tuple[int, int]] = []

    def spy(*args: object) -> tuple:
        out = _blocks(*args)  # type: ignore[arg-type]
        seen.append((len(out[0]), len(out[1])))
        return out

    monkeypatch.setattr(hw_plan, "_blocks", spy)
    return seen


@pytest.fixture(params=["processes", "threads"])
def workers_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                 ) -> tuple[str, list[int]]:
    """Several workers are forked processes, or threads where processes cannot fork; records
    the item count of each forked map."""
    forked: list[int] = []
    if request.param == "threads":
        monkeypatch.setattr(parallel, "can_fork", lambda: False)

    class Recorded(parallel.ForkedMap):
        def __init__(self, fn: object, count: int, workers: int) -> None:
            forked.append(count)
            super().__init__(fn, count, workers)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "ForkedMap", Recorded)
    return request.param, forked


@pytest.mark.parametrize("seed", range(40))
def test_blocks_on_several_workers_give_the_single_worker_answer(
        seed: int, tmp_path: Path, tiny_blocks: list[tuple[int, int]],
        workers_kind: tuple[str, list[int]]) -> None:
    trace = traceviz.load(random_trace(seed).write(tmp_path / "t.json"))
    whole = traceviz.analyze(trace, workers=1)
    assert tiny_blocks == [(1, 0)] * len(tiny_blocks)  # one block per thread on one worker
    kind, forked = workers_kind
    assert forked == []
    tiny_blocks.clear()
    cut = traceviz.analyze(trace, workers=3)
    one, many = whole.host_wait_sources, cut.host_wait_sources
    assert one is not None and many is not None
    assert fields_equal(one, many)
    assert analysis_to_dict(trace, whole) == analysis_to_dict(trace, cut)
    blocks = sum(n for n, _ in tiny_blocks)
    # Cut into blocks: the other metrics (analysis.py's seven), then every block, on one map.
    assert forked == ([7 + blocks] if kind == "processes" and blocks > 1 else [])


def test_random_traces_are_cut_into_many_blocks(tmp_path: Path,
                                                tiny_blocks: list[tuple[int, int]]) -> None:
    """The property above is not vacuous: its traces are cut, gaps have time in several
    blocks (their gap counts are merged), and they have host wait in several sources,
    improperly nested events and compiled regions."""
    found = []
    for seed in range(40):
        trace = traceviz.load(random_trace(seed).write(tmp_path / f"{seed}.json"))
        h = traceviz.analyze(trace, workers=3).host_wait_sources
        assert h is not None
        found.append((h.total_ns > 0, len(h.sources) > 2, h.improperly_nested > 0,
                      any(IN_REGION in s for s in h.sources)))
    assert max(b for b, _ in tiny_blocks) >= 5
    assert sum(s for _, s in tiny_blocks) >= 30
    counts = [sum(col) for col in zip(*found, strict=True)]
    assert all(c >= want for c, want in zip(counts, [30, 20, 5, 5], strict=True)), counts


def _real_traces() -> list[Path]:
    found = sorted((REPO / "tests" / "data").glob("**/*.json.gz"))
    shared = REPO.parent / "shared" / "cases" / "hta"
    if shared.is_dir():
        found += sorted(shared.glob("*.json*"))[:4]
    return found


@pytest.mark.parametrize("path", _real_traces(), ids=lambda p: p.name)
def test_real_trace_reports_do_not_depend_on_analysis_workers(
        path: Path, tiny_blocks: list[tuple[int, int]], workers_kind: list[int]) -> None:
    trace = traceviz.load(path)
    docs = [msgspec.json.encode(analysis_to_dict(trace, traceviz.analyze(trace, workers=w)))
            for w in (1, 4)]
    assert docs[0] == docs[1]


def _events(start: list[int], end: list[int]) -> _Events:
    n = len(start)
    return _Events(np.array([0, n], np.int64), np.array(start, np.int64),
                   np.array(end, np.int64), np.zeros(n, np.int8), np.zeros(n, np.int64))


def _none() -> tuple[_Windows, _Tails]:
    z = np.zeros(0, np.int64)
    return _Windows(z, z, z), _Tails(z, z, z)


def test_a_cut_falls_where_the_previous_events_end_at_the_next_start() -> None:
    # [0, 10) holds [0, 5); [10, 20) touches it at 10; [20, 30) touches that at 20.
    ev = _events([0, 0, 10, 20], [10, 5, 20, 30])
    z = np.zeros(1, np.int64)
    windows = _Windows(z, np.array([5]), np.array([25]))  # crosses both cuts
    tails = _Tails(np.zeros(3, np.int64), np.array([9, 10, 20]), np.ones(3, np.int64))
    blocks, shared = _blocks(ev, 0, 4, 4, windows, tails)
    assert [b.events.tolist() for b in blocks] == [[0, 1], [2], [3]]
    assert shared.tolist() == [0]
    assert [(b.windows.a.tolist(), b.windows.b.tolist()) for b in blocks] == [
        ([5], [10]), ([10], [20]), ([20], [25])]
    # A tail at a cut instant belongs to the block starting there.
    assert [b.tails.t.tolist() for b in blocks] == [[9], [10], [20]]


def test_no_cut_inside_an_open_event_or_between_equal_starts() -> None:
    # [0, 30) is open over everything; [5, 8) and [5, 9) start together.
    ev = _events([0, 5, 5, 10], [30, 8, 9, 20])
    windows, tails = _none()
    tails = _Tails(np.zeros(1, np.int64), np.array([6]), np.ones(1, np.int64))
    blocks, shared = _blocks(ev, 0, 4, 4, windows, tails)
    assert [b.events.tolist() for b in blocks] == [[0, 1, 2, 3]]
    assert shared.tolist() == []


def test_blocks_without_windows_or_tails_are_left_out() -> None:
    ev = _events([0, 10, 20], [10, 20, 30])
    tails = _Tails(np.zeros(1, np.int64), np.array([25]), np.ones(1, np.int64))
    blocks, _ = _blocks(ev, 0, 3, 3, _none()[0], tails)
    assert [b.events.tolist() for b in blocks] == [[2]]


def test_a_gap_is_shared_when_its_window_parts_or_tail_fall_in_different_blocks() -> None:
    # Blocks [0, 10), [10, 20), [20, +inf). Gap 0: window and tail in block 0. Gap 1: window
    # in block 0, tail at the cut instant 10 (block 1). Gap 2: window [12, 22) across a cut.
    # Gap 3: a tail alone, in block 2. Gap 4: window in block 1, tail in block 1.
    ev = _events([0, 10, 20], [10, 20, 30])
    windows = _Windows(np.array([0, 1, 2, 4]), np.array([1, 4, 12, 14]),
                       np.array([3, 9, 22, 16]))
    tails = _Tails(np.array([0, 1, 3, 4]), np.array([3, 10, 25, 16]), np.ones(4, np.int64))
    blocks, shared = _blocks(ev, 0, 3, 3, windows, tails)
    assert len(blocks) == 3
    assert shared.tolist() == [1, 2]
