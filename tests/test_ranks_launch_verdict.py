"""The launch verdict of a distributed mode (straggler host wait + peers' comm wait), with
numbers chosen by hand: every edge of the rule in traceviz.analyze.distributed.launch."""

from __future__ import annotations

from traceviz.analyze.distributed.launch import (
    LaunchEvidence,
    distributed_launch_verdict,
    launch_evidence_from_summary,
)
from traceviz.analyze.verdicts import Verdict

MS = 1_000_000


def single_rank(status: str = "NO_WIN") -> Verdict:
    return Verdict("cudagraph", "launch", status, {"baseline": "eager"}, {}, "GPU-bound")


BASE = LaunchEvidence(1, 9 * MS, 9 * MS, 10 * MS)


def test_a_host_wait_drop_of_half_the_period_saved_is_a_win():
    # period saved 4 ms; straggler host wait falls 2 ms = exactly half; peers wait less.
    mode = LaunchEvidence(1, 7 * MS, 5 * MS, 6 * MS)
    v = distributed_launch_verdict(single_rank(), BASE, mode, "WIN", 0.5)
    assert v.status == "WIN"
    assert v.evidence["straggler_host_wait_us"] == [9000.0, 7000.0]
    assert v.evidence["peers_comm_wait_us"] == [9000.0, 5000.0]


def test_one_ns_short_of_half_keeps_the_single_rank_verdict():
    mode = LaunchEvidence(1, 7 * MS + 1, 5 * MS, 6 * MS)
    v = distributed_launch_verdict(single_rank(), BASE, mode, "WIN", 0.5)
    assert v.status == "NO_WIN" and "distributed:" in v.explanation


def test_no_speed_win_or_peers_not_waiting_less_is_no_distributed_win():
    mode = LaunchEvidence(1, 2 * MS, 5 * MS, 6 * MS)
    assert distributed_launch_verdict(single_rank(), BASE, mode, "INCONCLUSIVE",
                                      0.5).status == "NO_WIN"
    same_peers = LaunchEvidence(1, 2 * MS, 9 * MS, 6 * MS)
    assert distributed_launch_verdict(single_rank(), BASE, same_peers, "WIN",
                                      0.5).status == "NO_WIN"


def test_without_a_straggler_the_verdict_is_unchanged():
    none = LaunchEvidence(None, None, None, 6 * MS)
    v = single_rank()
    assert distributed_launch_verdict(v, BASE, none, "WIN", 0.5) is v


def test_evidence_is_read_from_a_manifest_ranks_summary():
    summary = {"slowest_period_us_median": 10_000.0,
               "straggler": {"rank": 1},
               "per_rank": [{"rank": 0, "host_wait_us_median": 0.0, "sync_wait_us_median": 0.0,
                             "comm_wait_us_median": 9_000.0},
                            {"rank": 1, "host_wait_us_median": 8_000.0,
                             "sync_wait_us_median": 1_000.0, "comm_wait_us_median": 0.0}]}
    # rank 1's waits exceed its peer's by 9 ms per step, its compute busy (not given) by 0
    assert launch_evidence_from_summary(summary) == LaunchEvidence(1, 9 * MS, 9 * MS, 10 * MS,
                                                                   (9 * MS, 0.0))
    assert launch_evidence_from_summary(None) is None
    assert launch_evidence_from_summary({"per_rank": []}) is None


def test_the_rule_that_applied_is_in_the_evidence():
    mode = LaunchEvidence(1, 7 * MS, 5 * MS, 6 * MS)  # meets the straggler rule (first test)
    v = distributed_launch_verdict(single_rank(), BASE, mode, "WIN", 0.5)
    assert v.evidence["rules"] == "profiled-trace, straggler"
    on_split = Verdict("cudagraph", "launch", "NO_WIN", {"rules": "unprofiled"}, {}, "GPU-bound")
    kept = distributed_launch_verdict(on_split, BASE, mode, "WIN", 0.5, bounding_split=True)
    assert kept.status == "NO_WIN"  # decided on the bounding rank's own split: not overruled
    assert kept.evidence["rules"] == "unprofiled, bounding rank"
    assert kept.evidence["straggler_host_wait_us"] == [9000.0, 7000.0]
    assert distributed_launch_verdict(on_split, BASE, mode, "WIN", 0.5).evidence["rules"] == (
        "unprofiled, straggler")
