"""``traceviz compare`` on distributed traces (``docs/comparison.md``, "Distributed traces").

Two cases:

* **rank directories** — ``compare RANKDIR_A RANKDIR_B``: each directory holds the rank traces
  (``rank<N>`` in the file name) of one mode; each becomes one mode, analysed through the
  multi-rank analysis (:func:`traceviz.analyze.distributed.analyze_ranks`): the mode's step
  time is its slowest rank's, the launch verdict reads the straggler's host wait and its peers'
  comm wait, and the facts carry each set's straggler sentence;
* **single rank traces** — ``compare a/rank0.json b/rank0.json``: compared as traces, with a
  warning naming each one's rank and NCCL share of GPU busy (NCCL kernels spin while they wait
  for the other ranks: that time is communication, not compute).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceviz.analyze.distributed.bounding import BoundingRank
from traceviz.analyze.distributed.model import RanksAnalysis
from traceviz.analyze.distributed.rank_input import RankFacts
from traceviz.vocab import RANK_IN_FILE_NAME

_TRACE_ENDINGS = (".json", ".json.gz")


def rank_traces(folder: Path) -> list[Path]:
    """The rank trace files of ``folder`` (``rank<N>`` in the name, ``.json`` / ``.json.gz``),
    in rank order."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if p.is_file() and p.name.endswith(_TRACE_ENDINGS)
             and RANK_IN_FILE_NAME.search(p.name)]
    return sorted(found, key=lambda p: (_rank_in_name(p), p.name))


def _rank_in_name(path: Path) -> int:
    m = RANK_IN_FILE_NAME.search(path.name)
    return int(m.group(1)) if m else -1


def folder_labels(folders: list[Path]) -> list[str]:
    """One mode name per folder: its name, or ``parent/name`` when two share a name."""
    full = [f.absolute() for f in folders]
    names = [f.name or str(f) for f in full]
    if len(set(names)) == len(names):
        return names
    return [f"{f.parent.name}/{f.name}" for f in full]


@dataclass(frozen=True)
class RankSetInput:
    """One rank directory as a mode: its joint analysis and which rank speaks for it."""

    mode: str
    folder: Path
    ranks: RanksAnalysis
    slowest_path: Path
    slowest_analysis: Any  # traceviz.analyze.model.Analysis of the slowest rank
    device: str | None
    slowest_facts: RankFacts | None  # the slowest rank's NCCL share of GPU busy
    bounding: BoundingRank | None = None  # the straggler, else the slowest rank


def load_rank_set(mode: str, folder: Path, *, workers: int | None = None) -> RankSetInput:
    """Load and analyse every rank trace of ``folder`` (in this process, each by ``workers``;
    ``None``: the default count), then the ranks together; the slowest rank
    (:mod:`traceviz.analyze.distributed.slowest`) speaks for the mode in the comparison
    table, the bounding rank (:mod:`traceviz.analyze.distributed.bounding`) in its headline."""
    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.distributed import analyze_ranks
    from traceviz.analyze.distributed.bounding import bounding_rank
    from traceviz.analyze.distributed.discover import rank_info
    from traceviz.analyze.distributed.rank_input import rank_facts
    from traceviz.analyze.distributed.slowest import slowest_rank_index
    from traceviz.trace import load

    paths = rank_traces(folder)
    items = []
    for p in paths:
        trace = load(p, workers=workers)
        items.append((trace, analyze(trace, workers=workers)))
    i = slowest_rank_index([a for _, a in items])
    devices = ", ".join(sorted({d.name for d in items[i][0].meta.devices})) or None
    ranks = analyze_ranks(items)
    straggler = ranks.straggler.rank if ranks.straggler is not None else None
    bounding = bounding_rank([(rank_info(t)[0], a) for t, a in items], straggler)
    return RankSetInput(mode, folder, ranks, paths[i], items[i][1], devices,
                        rank_facts(*items[i]), bounding)


def rank_set_fact(s: RankSetInput) -> tuple[str, str]:
    """The facts line of a rank directory: its ranks, the straggler, who speaks for it."""
    from traceviz.report.ranks.text import straggler_sentence

    r = s.ranks
    f = s.slowest_facts
    nccl = (f"; NCCL kernels are {f.nccl_share * 100:.1f} % of that rank's GPU busy (whole "
            "trace: summed over its steps), communication counted as GPU busy in the table"
            if f is not None and f.nccl_share is not None else "")
    return (f"{s.mode} ranks", f"{len(r.ranks)} rank traces in {s.folder}: "
            f"{straggler_sentence(r)} (slowest rank {s.slowest_path.name}'s step time "
            f"compared{nccl})")


def rank_warnings(facts: dict[str, RankFacts]) -> list[str]:
    """The warning of a comparison whose inputs are single rank traces (module doc)."""
    if not facts:
        return []
    each = "; ".join(
        f"{mode}: rank {'?' if f.rank is None else f.rank}"
        + (f" of {f.world_size}" if f.world_size else "")
        + (f", NCCL kernels {f.nccl_share * 100:.1f} % of its GPU busy (whole trace: summed "
           "over its steps)" if f.nccl_share is not None else "")
        for mode, f in facts.items())
    return [
        f"these inputs are ranks of a distributed run ({each}). NCCL kernels spin on the GPU "
        "while they wait for the other ranks: that time is communication, not compute, yet the "
        "single-trace metrics count it as GPU busy, so a rank that mostly waits in NCCL reads "
        "GPU-bound here. One rank is not the run: compare rank sets with `traceviz compare "
        "RANKDIR_A RANKDIR_B` (one directory of rank traces per mode), or analyse one run's "
        "ranks together with `traceviz report rank0 rank1 …`"]
