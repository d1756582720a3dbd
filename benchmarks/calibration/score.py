"""Read what traceviz reported for a calibration cell and score it against the injected truth.

**Recovered** (:func:`recovered_against`): one mode of ``traceviz report RUN -f json`` of a
``profile B --against A`` run, ``against.modes[mode]``, plus the ``rows`` of that report (B's
profiled traces) and of ``traceviz report RUN/old -f json`` (A's):

``delta_step_ns``   the paired step time change, new − old (``speed.new_ms − speed.old_ms``;
                    ``old_ns`` / ``new_ns``: the two steps, timed alternately in one process);
                    ``verdict`` is the paired verdict (faster / slower / unchanged /
                    inconclusive).
``host_issue_ns``   Δ unprofiled host issue time per step (``why.host_issue_ms``: each
                    version's own mode processes, paired blocks; on the CPU this is the step
                    time). ``own_old_ns`` / ``own_new_ns``: the steps of those processes
                    (``why.speed.step_ms_a`` / ``_b``).
``gpu_busy_ns``     Δ GPU busy per step of the lean (profiled) traces (``why.gpu_busy_ns``).
``host_wait_ns``    Δ GPU idle waiting for the host per step, lean traces (``why.host_wait_ns``;
                    ``host_wait_sides_ns``: A's and B's values).
``profiled_period_ns``  A's and B's profiled step period of the mode's lean trace (``rows[mode]
                    .period_ms`` of each version's report).
``kernels`` / ``launches``  Δ per step (``why.kernels`` / ``why.launches``).

The ``--against`` report has no old → new waterfall (its ``waterfalls`` are NEW's modes against
NEW's eager); the parts above are what it gives old → new. Two ``--nproc`` runs are read the
same way from ``traceviz compare A B -f json`` (:func:`recovered_runs`: ``modes[mode]`` with the
same ``why`` fields; the step is the slowest rank's, unpaired; that report has no profiled
period, so its profiled parts are not bound-checked).

**Parts checked** (:func:`expectation`): on the CPU the host is the device, so every effect is
host time and lands in the step time itself: the checked part is ``delta_step_ns`` (paired), its
truth the effect's host cost. On CUDA, host effects (busy-wait, launches, fusion) are checked in
``host_issue_ns`` and the extra kernel in ``gpu_busy_ns``.

**Checks** (:func:`score`), each cell × mode:

* direction (:func:`allowed_verdicts`): the paired verdict matches the expected step change
  ``d``, which on CUDA is ``max(h + Δh, g + Δg) − max(h, g)`` from the old side's host issue
  ``h`` and GPU busy ``g`` *as this run measured them* (``why.host_issue_ms.a``,
  ``why.gpu_busy_ns.a``; the probe's timing of the old side alone only where the report lacks
  them), on the CPU ``Δh``. With ``θ = min_speedup × old step`` (the paired verdict's own
  threshold) and the model's margin ``m = TOL_FRACTION × |d|``: "slower" is required when
  ``d − m > θ``, "faster" when ``d + m < −θ``, no significant change (unchanged /
  inconclusive) when ``|d| + m < θ``; in between, either side of ``θ`` is accepted, never the
  opposite direction. (The size floor :data:`TOL_FLOOR_NS` is a measurement tolerance of the
  parts, not a detectability limit of the paired step: a 10 µs change of a 32 µs step is
  significant);
* size: ``|recovered − truth| ≤ max(TOL_FRACTION × |truth|, TOL_FLOOR_NS)`` in the checked part
  (CPU ``gpu`` cells in eager: the probe's cost of a round scaled by the run's old step over the
  probe's prediction of it — the probe takes the fastest of 7 blocks of ops alone, the run a
  paired median of the step; ``launches`` / ``fused`` in eager, where the probe timed the
  tails within a loop of the step: the truth scaled by :func:`host_speed_scale`, the run's old
  step host time over the probe's in that loop — on 4 × H200, 2026-11-28, six eager cells'
  side-A host time in the run ran 0.61× to 1.44× the probe's timing of the same parts);
* counts (CUDA, eager and the manual CUDA graph, which replays eager's kernels): Δ kernels per
  step as injected (±0.5); for ``gpu``, one round's kernels as A's own count gives them
  (``(A's kernels − its tail's) / k``: cuBLAS may run a matmul as two kernels, split-K);
* a ``sync`` cell in a CUDA-graph mode that did not run for the new side passes as
  ``capture_refused`` (a device → host copy cannot be captured);
* bounded (:func:`bound_violations`): no part is larger than the longer of the two steps *it
  was measured in*; distributed cells: also every waterfall part of either run's own report;
* straggler (distributed cells): run A (no effect injected, symmetric ranks) names no
  straggler; run B of the ``straggler`` cell names rank ``SLOW_RANK`` (whose host was delayed),
  each in the mode's rank headline (:func:`named_straggler`).

A miss whose checked part comes from two processes while the paired (one-process) step change
agrees with the truth gets a ``context`` line naming the between-process difference
(:func:`miss_context`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from benchmarks.calibration.cells import HOST_FRACTIONS, Cell
from benchmarks.calibration.dist_steps import SLOW_RANK
from benchmarks.calibration.steps import CHAIN, SPLIT, TAIL_OPS

#: Size tolerance: this fraction of the truth …
TOL_FRACTION = 0.25
#: … or this many ns, whichever is larger.
TOL_FLOOR_NS = 10_000.0
#: Modes whose steps are compiled without CUDA graphs / with CUDA-graph trees.
COMPILED = ("compile", "max-autotune-no-cudagraphs")
TREES = ("reduce-overhead", "max-autotune")
#: Modes that run eager's kernels (a manual CUDA graph captures them): their kernel counts
#: change as eager's do.
EAGER_KERNELS = ("eager", "cudagraph")
#: A version's own-process step this far off its paired one names a between-process
#: difference in a miss's context (:func:`miss_context`).
OWN_PROCESS_SHIFT = 0.05
#: The checks of a cell × mode, in table order (module doc).
CHECKS = ("direction", "size", "counts", "bounded", "straggler")
#: Paired verdicts that say "no significant change".
NO_CHANGE = ("unchanged", "inconclusive")


def _delta(pair: Any, scale: float = 1.0) -> float | None:
    if not isinstance(pair, dict):
        return None
    a, b = pair.get("a"), pair.get("b")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return None
    return (float(b) - float(a)) * scale


def _old(pair: Any, scale: float = 1.0) -> float | None:
    a = pair.get("a") if isinstance(pair, dict) else None
    return float(a) * scale if isinstance(a, (int, float)) else None


def _why_parts(why: dict[str, Any]) -> dict[str, Any]:
    return {"host_issue_ns": _delta(why.get("host_issue_ms"), 1e6),
            "gpu_busy_ns": _delta(why.get("gpu_busy_ns")),
            "host_wait_ns": _delta(why.get("host_wait_ns")),
            "kernels": _delta(why.get("kernels")),
            "launches": _delta(why.get("launches")),
            "old_kernels": _old(why.get("kernels")),
            "old_host_issue_ns": _old(why.get("host_issue_ms"), 1e6),
            "old_gpu_busy_ns": _old(why.get("gpu_busy_ns"))}


def _waterfall_excess(doc: dict[str, Any] | None, mode: str) -> list[str]:
    """Parts of ``mode``'s waterfalls in the report that exceed the longer of the two
    unprofiled steps they compare (``baseline_period_us``, ``period_us``)."""
    out: list[str] = []
    if doc is None:
        return out
    for w in doc.get("waterfalls") or []:
        if w.get("mode") != mode:
            continue
        longer_us = max(abs(float(w.get("baseline_period_us") or 0)),
                        abs(float(w.get("period_us") or 0)))
        for name, value in (w.get("parts_us") or {}).items():
            if isinstance(value, (int, float)) and longer_us > 0 and abs(value) > longer_us:
                out.append(f"waterfall {mode} vs {w.get('baseline')}: {name} {value:+.1f} µs "
                           f"> longer step {longer_us:.1f} µs")
    return out


def _profiled_period_ns(doc: dict[str, Any] | None, mode: str) -> float | None:
    """The profiled step period (ns) of ``mode``'s lean trace in a report's ``rows``."""
    row = next((r for r in (doc or {}).get("rows") or [] if r.get("mode") == mode), None)
    period = (row or {}).get("period_ms")
    return float(period) * 1e6 if isinstance(period, (int, float)) else None


def recovered_against(doc: dict[str, Any], mode: str,
                      old_doc: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What a ``profile --against`` report ``doc`` says of ``mode`` old → new (module doc);
    ``old_doc``: the report of the run's old version (``RUN/old``), for A's profiled period."""
    entry = next((m for m in (doc.get("against") or {}).get("modes") or []
                  if m.get("mode") == mode), None)
    if entry is None:
        return None
    speed = entry.get("speed") or {}
    rec: dict[str, Any] = {"status": entry.get("against_status"), "verdict": entry.get("verdict"),
                           "note": entry.get("note") or ""}
    if speed:
        ci = speed.get("speedup") or {}
        rec.update(old_ns=speed["old_ms"] * 1e6, new_ns=speed["new_ms"] * 1e6,
                   delta_step_ns=(speed["new_ms"] - speed["old_ms"]) * 1e6,
                   speedup=[ci.get("value"), ci.get("low"), ci.get("high")],
                   pairs=speed.get("pairs"), min_speedup=speed.get("min_speedup"))
    why = entry.get("why") or {}
    rec.update(_why_parts(why))
    own = why.get("speed") or {}
    if isinstance(own.get("step_ms_a"), (int, float)) and isinstance(own.get("step_ms_b"),
                                                                      (int, float)):
        rec.update(own_old_ns=own["step_ms_a"] * 1e6, own_new_ns=own["step_ms_b"] * 1e6)
    wait = why.get("host_wait_ns") or {}
    rec["host_wait_sides_ns"] = [wait.get("a"), wait.get("b")]
    rec["profiled_period_ns"] = [_profiled_period_ns(old_doc, mode),
                                 _profiled_period_ns(doc, mode)]
    rec["excess"] = _waterfall_excess(doc, mode) + _waterfall_excess(old_doc, mode)
    return rec


def named_straggler(doc: dict[str, Any] | None, mode: str) -> int | str | None:
    """The rank a distributed run's report names as the straggler bounding ``mode``'s step
    (``headline[m].ranks``: ``bounding_rule`` "straggler"; eager is the baseline side of the
    first compiled mode's pair), ``None`` when it names none, ``"?"`` when the report has no
    rank headline for ``mode``."""
    for name, head in ((doc or {}).get("headline") or {}).items():
        ranks = (head or {}).get("ranks")
        if not ranks or (mode != "eager" and name != mode):
            continue
        side = 0 if mode == "eager" else 1
        rule, rank = ranks["bounding_rule"][side], ranks["bounding_rank"][side]
        return int(rank) if rule == "straggler" else None
    return "?"


def recovered_runs(doc: dict[str, Any], mode: str,
                   sides: dict[str, dict[str, Any] | None] | None = None
                   ) -> dict[str, Any] | None:
    """What ``traceviz compare A B -f json`` (two runs) says of ``mode`` A → B (module doc);
    ``sides``: each run's own report (``{"a": …, "b": …}``), for the straggler each names
    (``stragglers``: A's, B's; :func:`named_straggler`) and its waterfalls' bounds."""
    modes = doc.get("modes") or (doc.get("runs") or {}).get("modes") or []
    entry = next((m for m in modes if m.get("mode") == mode), None)
    if entry is None:
        return None
    speed = entry.get("speed") or {}
    rec: dict[str, Any] = {"status": f"{entry.get('status_a')}/{entry.get('status_b')}",
                           "verdict": speed.get("status") or entry.get("verdict"),
                           "note": entry.get("note") or ""}
    if speed.get("step_ms_a") and speed.get("step_ms_b"):
        ci = speed.get("speedup") or {}
        rec.update(old_ns=speed["step_ms_a"] * 1e6, new_ns=speed["step_ms_b"] * 1e6,
                   delta_step_ns=(speed["step_ms_b"] - speed["step_ms_a"]) * 1e6,
                   speedup=[ci.get("value"), ci.get("low"), ci.get("high")],
                   min_speedup=speed.get("min_speedup"))
        rec.update(own_old_ns=rec["old_ns"], own_new_ns=rec["new_ns"])  # the same processes
    rec.update(_why_parts(entry))
    sides = sides or {}
    rec["excess"] = _waterfall_excess(doc, mode) + [
        f"run {k.upper()}: {e}" for k in "ab" for e in _waterfall_excess(sides.get(k), mode)]
    rec["stragglers"] = [named_straggler(sides.get(k), mode) if sides.get(k) else "?"
                         for k in "ab"]
    return rec


@dataclass(frozen=True)
class Expectation:
    """What a cell should show in one mode: the checked ``part`` and its ``truth_ns`` (``None``:
    direction only), the effect's host / GPU cost per step (for the step model) and the
    expected Δ kernels per step (``None``: not checked)."""

    part: str | None
    truth_ns: float | None
    host_ns: float | None
    gpu_ns: float | None
    kernels: float | None
    why: str


def expectation(cell: Cell, mode: str, device: str) -> Expectation:
    """The cell's expectation in ``mode`` on ``device`` (module doc). A manual CUDA graph
    (``cudagraph``) replays eager's kernels without running the step's Python: the host
    effects vanish, the GPU effects and kernel counts stay as in eager; compiled modes build
    the same kernels from either tail form; CUDA-graph trees (:data:`TREES`) replay an extra
    GPU round without its launch cost, as the manual graph does."""
    cuda = device == "cuda"
    truth = cell.truth
    step_part = "host_issue_ns" if cuda else "delta_step_ns"
    eager_kernels = cuda and mode in EAGER_KERNELS

    def kernels(n: float) -> float | None:
        return n if eager_kernels else None

    if cell.effect in HOST_FRACTIONS or cell.effect == "straggler":
        assert truth is not None
        if mode == "cudagraph" and cell.nproc == 1:
            return Expectation(step_part, 0.0, 0.0, 0.0, 0.0,
                               "a manual CUDA graph replays without running the step's Python")
        part = step_part if cell.nproc == 1 else "delta_step_ns"
        return Expectation(part, truth["host_ns"], truth["host_ns"], 0.0,
                           kernels(0.0) if cell.nproc == 1 else None,
                           "host busy-wait, by construction")
    if cell.effect in ("launches", "fused"):
        assert truth is not None
        n = float(SPLIT - 1) if cell.effect == "launches" else float(2 - (CHAIN + 1))
        n *= int(cell.new.get("tail_reps", 1))
        if mode == "cudagraph":
            return Expectation(step_part, 0.0, 0.0, truth["gpu_ns"], kernels(n),
                               "the graph replays either form's kernels in one launch")
        if mode != "eager":
            return Expectation(step_part, 0.0, 0.0, 0.0, None,
                               f"{mode} builds the same kernels from either form")
        return Expectation(step_part, truth["host_ns"], truth["host_ns"], truth["gpu_ns"],
                           kernels(n), cell.truth_how or "probe: the tail forms timed alone")
    if cell.effect == "gpu":
        assert truth is not None
        # a graph replay launches the extra round with the rest: no host cost of its own
        # (the manual graph, and CUDA-graph trees once warm: gpu-200us reduce-overhead on
        # 4 x H200, 2026-11-28, read the step -4.5 µs for a round of 28.9 µs host / 5.6 µs GPU)
        host = 0.0 if mode in ("cudagraph", *TREES) else truth["host_ns"]
        if cuda:
            return Expectation("gpu_busy_ns", truth["gpu_ns"], host, truth["gpu_ns"],
                               kernels(2.0), "probe: one tanh(y @ w) round's GPU time")
        if mode in (*COMPILED, *TREES) and cell.compiled_truth is not None:
            host = cell.compiled_truth["host_ns"]
            return Expectation("delta_step_ns", host, host, 0.0, None,
                               "probe: one more round in a compiled function, alone")
        return Expectation("delta_step_ns", truth["host_ns"], truth["host_ns"], 0.0, None,
                           "probe: one tanh(y @ w) round timed alone")
    return Expectation(None, None, None, None, None,
                       {"sync": "the wait depends on the overlap it removes",
                        "payload4": "communication time of the extra payload not probed",
                        "compute2": "rank 1's doubled compute not probed"}.get(cell.effect, ""))


@dataclass
class Score:
    """One cell × mode: expectation, what was recovered, and the checks."""

    cell: str
    effect: str
    target_us: float
    mode: str
    expected: dict[str, Any]
    recovered: dict[str, Any] | None
    expected_delta_step_ns: float | None
    checks: dict[str, bool | None] = field(default_factory=dict)
    passed: bool = False
    reasons: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)  # why a miss happened, where data say

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tolerance_ns(truth_ns: float) -> float:
    """The size tolerance around ``truth_ns`` (module doc)."""
    return max(TOL_FRACTION * abs(truth_ns), TOL_FLOOR_NS)


def expected_step_ns(exp: Expectation, rec: dict[str, Any], device: str,
                     old_cost: dict[str, float] | None = None,
                     distributed: bool = False) -> float | None:
    """The expected step change (ns; module doc): on CUDA ``max(h + Δh, g + Δg) − max(h, g)``
    with the old side's host issue ``h`` and GPU busy ``g`` per step as the run measured them
    (``rec``), each falling back to the probe's ``old_cost`` where the report lacks it, and
    to ``Δh + Δg`` where neither has it; on the CPU, and for ``distributed`` cells, ``Δh +
    Δg``: ranks in lockstep spend GPU busy in communication kernels that wait for the slowest
    peer, so their GPU busy is not work that could hide a host effect (4 × H200,
    ``straggler-nproc4`` A eager: 4.58 ms of GPU busy in the lean trace on a 2.58 ms
    unprofiled step, host issue 2.55 ms). ``None`` where the effect's cost is unknown."""
    if exp.host_ns is None or exp.gpu_ns is None:
        return None
    if device != "cuda" or distributed:
        return exp.host_ns + exp.gpu_ns
    h = rec.get("old_host_issue_ns")
    g = rec.get("old_gpu_busy_ns")
    if old_cost is not None:
        h = old_cost["host_ns"] if h is None else h
        g = old_cost["gpu_ns"] if g is None else g
    if h is None or g is None:
        return exp.host_ns + exp.gpu_ns
    return max(h + exp.host_ns, g + exp.gpu_ns) - max(h, g)


def allowed_verdicts(expected_ns: float | None, old_step_ns: float,
                     min_speedup: float) -> tuple[str, ...]:
    """The paired verdicts that call the direction of an expected step change right (module
    doc, direction; ``None``: the effect's size is unknown, anything but "faster")."""
    if expected_ns is None:
        return ("slower", *NO_CHANGE)
    theta = min_speedup * old_step_ns
    margin = TOL_FRACTION * abs(expected_ns)
    allowed = []
    if expected_ns + margin > theta:
        allowed.append("slower")
    if expected_ns - margin < -theta:
        allowed.append("faster")
    if abs(expected_ns) - margin <= theta:
        allowed += NO_CHANGE
    return tuple(allowed)


def _longer(*values: Any) -> float | None:
    known = [abs(float(v)) for v in values if isinstance(v, (int, float))]
    return max(known) if len(known) == len(values) and known else None


def bound_violations(rec: dict[str, Any]) -> list[str]:
    """Parts larger than the longer of the two steps they were measured in, each against its
    own steps (a part of a step cannot exceed the step; comparing a profiled quantity with an
    unprofiled step, or the reverse, says nothing):

    * unprofiled: Δstep (paired) against the longer paired step (``old_ns``, ``new_ns``);
      Δhost issue against the longer step of the processes it was measured in (``own_old_ns``,
      ``own_new_ns``); every waterfall part of the mode in either version's report against the
      longer of its ``baseline_period_us`` / ``period_us`` (``rec["excess"]``);
    * profiled (lean traces): ΔGPU busy and Δhost wait against the longer profiled period of
      the two traces they come from (``profiled_period_ns``), and each version's host wait
      against its own trace's period. Where a period is unknown these are not checked."""
    out: list[str] = []

    def over(name: str, value: Any, longer: float | None, what: str) -> None:
        if isinstance(value, (int, float)) and longer is not None and abs(value) > longer:
            out.append(f"{name} {value / 1e3:+.1f} µs > longer {what} {longer / 1e3:.1f} µs")

    over("delta_step_ns", rec.get("delta_step_ns"), _longer(rec.get("old_ns"),
                                                            rec.get("new_ns")), "paired step")
    over("host_issue_ns", rec.get("host_issue_ns"),
         _longer(rec.get("own_old_ns"), rec.get("own_new_ns")), "own-process step")
    periods = rec.get("profiled_period_ns") or [None, None]
    for name in ("gpu_busy_ns", "host_wait_ns"):
        over(name, rec.get(name), _longer(*periods), "profiled period")
    for side, value, period in zip("AB", rec.get("host_wait_sides_ns") or (), periods,
                                   strict=False):
        over(f"{side}'s host_wait_ns", value, _longer(period), "profiled period of its trace")
    return out + list(rec.get("excess") or [])


def change_ci_ns(rec: dict[str, Any]) -> tuple[float, float] | None:
    """The paired step change's 95 % CI in ns, ``(low, high)``: ``old × (1 / speed-up − 1)`` at
    the speed-up CI's two ends; ``None`` without an old step or a positive CI."""
    ci = rec.get("speedup") or [None, None, None]
    old = rec.get("old_ns")
    if (not isinstance(old, (int, float))
            or not all(isinstance(v, (int, float)) and v > 0 for v in ci[1:])):
        return None
    low, high = sorted(old * (1 / v - 1) for v in ci[1:])
    return low, high


def resolution_context(exp: Expectation, rec: dict[str, Any]) -> list[str]:
    """Why a size miss in the paired Δstep is below the measurement's resolution, where the
    data say so: the truth lies inside the paired change's CI (:func:`change_ci_ns`)."""
    bounds = change_ci_ns(rec)
    if exp.part != "delta_step_ns" or exp.truth_ns is None or bounds is None:
        return []
    low, high = bounds
    old = rec["old_ns"]
    if not low <= exp.truth_ns <= high:
        return []
    return [f"the injected {exp.truth_ns / 1e3:+.1f} µs lies inside the paired change's CI "
            f"[{low / 1e3:+.1f}, {high / 1e3:+.1f}] µs on a {old / 1e3:,.0f} µs step: below "
            "this measurement's resolution"]


def miss_context(exp: Expectation, rec: dict[str, Any], expected_ns: float | None) -> list[str]:
    """Why a size miss in Δhost issue is not the analysis's fault, where the data say so: the
    part came from each version's own processes (reports before the paired host issue), the
    paired step change (one process) agrees with the expected one, and those processes' steps
    differ from the paired ones by :data:`OWN_PROCESS_SHIFT` or more."""
    if exp.part != "host_issue_ns" or expected_ns is None or exp.truth_ns is None:
        return []
    keys = ("delta_step_ns", "old_ns", "new_ns", "own_old_ns", "own_new_ns")
    if any(not isinstance(rec.get(k), (int, float)) for k in keys):
        return []
    if abs(rec["delta_step_ns"] - expected_ns) > tolerance_ns(expected_ns):
        return []
    old_x, new_x = rec["own_old_ns"] / rec["old_ns"] - 1, rec["own_new_ns"] / rec["new_ns"] - 1
    if max(abs(old_x), abs(new_x)) < OWN_PROCESS_SHIFT:
        return []
    return [f"the paired Δstep (one process) {rec['delta_step_ns'] / 1e3:+.1f} µs agrees with "
            f"the expected {expected_ns / 1e3:+.1f} µs; each version's own processes ran "
            f"{old_x:+.0%} (old: {rec['own_old_ns'] / 1e3:.1f} "
            f"vs {rec['old_ns'] / 1e3:.1f} µs paired) and {new_x:+.0%} (new: "
            f"{rec['own_new_ns'] / 1e3:.1f} vs {rec['new_ns'] / 1e3:.1f} µs) off the paired "
            "ones: the host's speed differed between processes"]


def host_speed_scale(cell: Cell, mode: str, device: str,
                     rec: dict[str, Any] | None) -> float | None:
    """How much slower (> 1) or faster the run's host ran than the probe's, where a cell's
    truth is a host cost timed within a loop of the step (``cell.truth_old_step_ns``): the
    run's old step host time per step (on CUDA its paired host issue time, on the CPU its
    paired step) over the probe's for the same side-A step, timed the same way. Only in
    eager, where the tails run op by op as the probe ran them; ``None`` elsewhere or where
    either side lacks its number.

    Why: the host's speed differs between processes of one machine by more than the size
    tolerance (4 × H200, 2026-11-28: six eager cells' side-A host time in the run ran 0.61× to
    1.44× the probe's timing of the same parts), and a truth timed in one process holds for
    another only at the same speed."""
    ref = cell.truth_old_step_ns
    if mode != "eager" or not ref or rec is None:
        return None
    run = rec.get("old_host_issue_ns") if device == "cuda" else rec.get("old_ns")
    if not isinstance(run, (int, float)) or run <= 0:
        return None
    return float(run) / ref


def _scaled(exp: Expectation, scale: float, why: str) -> Expectation:
    """``exp`` with its truth and host cost times ``scale``, and ``why`` it says so."""
    assert exp.truth_ns is not None
    return replace(exp, truth_ns=exp.truth_ns * scale, host_ns=(exp.host_ns or 0.0) * scale,
                   why=why)


def rebuilt_context(cell: Cell, mode: str, rec: dict[str, Any]) -> list[str]:
    """Why a ``gpu`` cell's miss in a compiled mode is the build's, where the run's kernel
    counts say so: one more round of the same work cannot remove kernels, so fewer kernels per
    step on the new side mean the two builds chose different kernels (max-autotune picks each
    matmul's kernel per build) and the measured change is theirs, not the round's."""
    if cell.effect != "gpu" or mode in EAGER_KERNELS:
        return []
    delta = rec.get("kernels")
    if not isinstance(delta, (int, float)) or delta >= 0:
        return []
    return [f"the new build runs {delta:+g} kernels per step for one more round: the two "
            f"builds chose different kernels ({mode} picks each one per build), so the change "
            "measured is the builds', not the injected round's"]


def score(cell: Cell, mode: str, device: str, rec: dict[str, Any] | None,
          min_speedup: float = 0.03) -> Score:
    """Score one cell × mode (module doc; ``min_speedup``: the verdict threshold where the
    report does not give its own)."""
    exp = expectation(cell, mode, device)
    if (cell.effect == "straggler" and cell.nproc > 1 and mode in ("cudagraph", *TREES)
            and exp.truth_ns is not None and rec is not None
            and isinstance(rec.get("old_ns"), (int, float))):
        # a replay's host cost is one launch: rank 1's delay D overlaps the GPU's previous
        # replay, and the step becomes max(old step, D + one launch)
        exp = replace(exp, truth_ns=max(0.0, exp.truth_ns - rec["old_ns"]),
                      why="rank 1's delay overlaps the previous replay: Δstep = D − old step")
    if (cell.effect == "gpu" and device != "cuda" and mode == "eager" and exp.truth_ns is not None
            and cell.old_cost and cell.old_cost.get("host_ns") and rec is not None
            and isinstance(rec.get("old_ns"), (int, float))):
        # the probe times a round alone, fastest of 7 blocks; the run's paired median of the
        # same eager ops runs slower by the ratio its base step shows (CPU: 1.3-1.5x on 2
        # cores); a compiled step's own overhead does not scale so
        scale = rec["old_ns"] / cell.old_cost["host_ns"]
        exp = _scaled(exp, scale, f"probe: one round timed alone, x {scale:.2f} (the run's "
                                  "old step / the probe's)")
    scale = host_speed_scale(cell, mode, device, rec)
    if scale is not None and exp.truth_ns is not None:
        exp = _scaled(exp, scale, f"{exp.why}, x {scale:.2f} (the run's old step host time / "
                                  "the probe's)")
    if (cell.effect == "gpu" and exp.kernels is not None and rec is not None
            and isinstance(rec.get("old_kernels"), (int, float))):
        # one more round of A's own kernels: cuBLAS may run a matmul as two (split-K)
        rounds = int(cell.old["k"])
        tail_ops = TAIL_OPS[str(cell.old.get("tail", "one"))] * int(cell.old.get("tail_reps", 1))
        per_round = (rec["old_kernels"] - tail_ops) / rounds
        extra = int(cell.new.get("extra_rep", 1))
        rounds_text = "one more round" if extra == 1 else f"{extra} more rounds"
        exp = replace(exp, kernels=extra * per_round,
                      why=f"{rounds_text} of A's kernels ({per_round:g} per round)")
    s = Score(cell.name, cell.effect, cell.target_us, mode, asdict(exp), rec, None)
    if cell.effect == "sync" and mode in ("cudagraph", *TREES) and device == "cuda" and (
            rec is None or rec.get("delta_step_ns") is None):
        s.checks["capture_refused"] = s.passed = True  # .item() cannot be captured: expected
        s.reasons.append("the new side's .item() is refused by graph capture (expected)")
        return s
    if rec is None or rec.get("delta_step_ns") is None:
        s.reasons.append("no paired step change reported"
                         + (f" ({rec.get('status')}: {rec.get('note')})" if rec else ""))
        return s
    verdict = str(rec.get("verdict"))
    dstep = expected_step_ns(exp, rec, device, cell.old_cost, distributed=cell.nproc > 1)
    s.expected_delta_step_ns = dstep
    allowed = allowed_verdicts(dstep, rec["old_ns"], rec.get("min_speedup") or min_speedup)
    s.checks["direction"] = verdict in allowed
    if not s.checks["direction"]:
        s.reasons.append(f"direction: {verdict}, expected {' or '.join(allowed)}")
        s.context += rebuilt_context(cell, mode, rec)
    if exp.part is not None and exp.truth_ns is not None:
        got = rec.get(exp.part)
        if got is None:
            s.checks["size"] = False
            s.reasons.append(f"size: {exp.part} not reported")
        else:
            tol = tolerance_ns(exp.truth_ns)
            s.checks["size"] = abs(got - exp.truth_ns) <= tol
            if not s.checks["size"]:
                s.reasons.append(f"size: {exp.part} {got / 1e3:+.1f} µs, injected "
                                 f"{exp.truth_ns / 1e3:+.1f} ± {tol / 1e3:.1f} µs")
                s.context += miss_context(exp, rec, dstep) + resolution_context(exp, rec)
    if exp.kernels is not None and rec.get("kernels") is not None:
        s.checks["counts"] = abs(rec["kernels"] - exp.kernels) <= 0.5
        if not s.checks["counts"]:
            s.reasons.append(f"counts: Δ kernels/step {rec['kernels']:+.1f}, injected "
                             f"{exp.kernels:+.0f}")
    if cell.nproc > 1 and rec.get("stragglers"):
        want = [None, SLOW_RANK if cell.effect == "straggler" else "any"]
        got = rec["stragglers"]
        s.checks["straggler"] = all(g == w or (w == "any" and g != "?")
                                    for g, w in zip(got, want, strict=True))
        if not s.checks["straggler"]:
            s.reasons.append(f"straggler: named {got[0]} (A, none injected) and {got[1]} (B), "
                             f"expected {want[0]} and "
                             f"{'rank ' + str(want[1]) if want[1] != 'any' else 'any'}")
    over = bound_violations(rec)
    s.checks["bounded"] = not over
    s.reasons.extend(f"bound: {o}" for o in over)
    s.passed = all(v is not False for v in s.checks.values())
    return s
