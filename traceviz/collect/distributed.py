"""Parent side of ``traceviz profile --nproc N``: each mode as N ranks in one launcher process.

Per mode: ``python -m torch.distributed.run --standalone --nproc-per-node N -m
traceviz.collect.rank_child …`` (one process per rank, ``LOCAL_RANK`` → ``cuda:LOCAL_RANK`` on
CUDA, gloo on CPU), with the mode's timeout on the whole launcher session. Its output goes to
``logs/<mode>.log``; each rank leaves ``logs/<mode>.rank<r>.result.json`` and
``<mode>.rank<r>.pt.trace.json.gz``. The ranks' results become one manifest entry: status ok
only when every rank is ok; timing and profiled step time of the slowest rank (largest median);
the paired block (every rank times eager against the mode in lockstep, each block's time the
slowest rank's: :mod:`traceviz.collect.paired`) as the ranks agreed on it; every rank's result
under ``ranks``. Ranks that wrote every result but then hang on their way out (tearing down
the process group) are killed :data:`~traceviz.collect.runner.EXIT_GRACE_S` later, not at the
mode's timeout, and their measurements kept; the entry's ``exit`` says so. A rank whose log
says one of its collectives timed out (NCCL's watchdog, :data:`COLLECTIVE_TIMEOUT_LINE`) ends
the mode: with NCCL's async error handling off (the CUDA-graph capture recipe) nothing else
would, so the ranks get :data:`~traceviz.collect.runner.BROKEN_GRACE_S` to end by themselves,
are killed, and the mode is ``failed`` (the reason starts "the process group broke"), not left
to its timeout.

A failed mode names the rank that failed it (``failed_rank``, and the reason starts with it):
the first rank whose own failure is not a collective broken by a peer (a process-group
timeout, a closed connection); else, a rank that wrote no result (hung or crashed) in the
earliest phase (``logs/<mode>.rank<r>.phase``), one whose own collective did not time out
first (NCCL's watchdog names such a rank in the log: it was waiting for a peer); else the first
failed rank. The process
group's timeout is :data:`PG_TIMEOUT_SHARE` of the mode's, so a rank waiting for a hung peer
ends by itself and the launcher then stops the others.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traceviz.collect.diagnostics import parse_compile_log
from traceviz.collect.mode_names import COMPILE_MODES
from traceviz.collect.rank_child import rank_phase_path, rank_result_path, rank_trace_path
from traceviz.collect.runner import (
    BROKEN_GRACE_S,
    EXIT_GRACE_S,
    REASON_LOG_LINES,
    RunSettings,
    child_env,
    run_child_session,
)

#: Modes ``--nproc`` cannot run (no distributed form), with the reason.
UNSUPPORTED = {"triton": "the triton mode has no distributed form (--nproc)"}
#: The process group's timeout, as a share of the mode's (``--timeout``).
PG_TIMEOUT_SHARE = 0.5
#: A rank's failure that is a collective broken by a peer (gloo / NCCL / c10d wording).
PEER_FAILURE = re.compile(r"timed out|timeout|closed by peer|connection reset|pair closure|"
                          r"DistBackendError|DistNetworkError|NCCL communicator was aborted|"
                          r"SIGTERM|Signal 15", re.IGNORECASE)
#: A log line in which a rank says one of its collectives timed out (NCCL's watchdog, c10d):
#: that rank was waiting for a peer.
COLLECTIVE_TIMEOUT_LINE = re.compile(
    r"^\[rank(\d+)\]:.*(?:Watchdog caught collective operation timeout|"
    r"collective operation timeout)", re.MULTILINE)
#: Phases of a rank, in order (``rank_child``); first call / compiling / capturing are one.
PHASES = ("start", "loading", ("first call", "compiling", "capturing"), "checking", "timing",
          "paired timing", "tracing")


def phase_index(name: str | None) -> int:
    """Position of a phase in :data:`PHASES` (-1: unknown)."""
    for i, p in enumerate(PHASES):
        if name == p or (isinstance(p, tuple) and name in p):
            return i
    return -1


def failing_rank(ranks: list[dict[str, Any]], phases: list[str | None]) -> int | None:
    """The rank that failed the mode (module docstring); None when every rank is ok."""
    bad = [r for r in ranks if r.get("status") != "ok"]
    if not bad:
        return None
    own = [r for r in bad if r.get("reason") and "wrote no result" not in r["reason"]
           and not PEER_FAILURE.search(str(r["reason"]))]
    if own:
        return int(own[0]["rank"])
    silent = [r for r in bad if "wrote no result" in str(r.get("reason"))]
    if silent:
        return int(min(silent, key=lambda r: (bool(r.get("waited_on_peer")),
                                              phase_index(phases[r["rank"]]), r["rank"]))["rank"])
    return int(bad[0]["rank"])


def ranks_that_waited(log_text: str) -> set[int]:
    """The ranks whose log lines say one of their collectives timed out
    (:data:`COLLECTIVE_TIMEOUT_LINE`)."""
    return {int(m.group(1)) for m in COLLECTIVE_TIMEOUT_LINE.finditer(log_text)}


def nproc_problem(nproc: int, device: str, environment: dict[str, Any]) -> str | None:
    """Why ``--nproc`` cannot run here (one rank per GPU on CUDA), or None."""
    gpus = environment.get("gpu_count")
    if device == "cuda" and isinstance(gpus, int) and nproc > gpus:
        return f"--nproc {nproc}: one rank per GPU, and torch sees {gpus} GPU(s) here"
    return None


def launcher_cmd(workload: Path, mode: str, run_dir: Path, nproc: int, device: str,
                 settings_json: str) -> list[str]:
    """The ``torch.distributed.run`` command line of one mode."""
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc-per-node={nproc}", "-m", "traceviz.collect.rank_child",
            str(workload), mode, str(run_dir), "--device", device, "--settings", settings_json]


def _silent_rank(i: int, phase: str | None, waited: bool) -> dict[str, Any]:
    """The record of rank ``i``, which wrote no result."""
    reason = (f"rank {i} wrote no result (hung, killed when another rank failed, or crashed)"
              + (f"; last phase '{phase}'" if phase else "")
              + ("; one of its collectives timed out waiting for a peer" if waited else ""))
    return {"rank": i, "status": "failed", "phase": phase, "reason": reason,
            "waited_on_peer": waited}


def merge_rank_results(results: list[dict[str, Any] | None], mode: str,
                       phases: list[str | None] | None = None,
                       waited: set[int] | None = None) -> dict[str, Any]:
    """One manifest entry from the ranks' results (``None``: that rank wrote none; ``phases``:
    each rank's last phase, when known; ``waited``: ranks whose log shows a collective timing
    out, :func:`ranks_that_waited`)."""
    phases = phases if phases is not None else [None] * len(results)
    waited = waited or set()
    ranks = [r if r is not None else _silent_rank(i, phases[i], i in waited)
             for i, r in enumerate(results)]
    entry: dict[str, Any] = {"status": "ok", "reason": None}
    blamed = failing_rank(ranks, phases)
    if blamed is not None:
        first = ranks[blamed]
        entry["status"] = first.get("status", "failed")
        entry["reason"] = f"rank {blamed}: {first.get('reason')}"
        entry["failed_rank"] = blamed
    timed = [r for r in ranks if (r.get("timing") or {}).get("median_ms") is not None]
    slowest = max(timed, key=lambda r: r["timing"]["median_ms"]) if timed else None
    if slowest is not None:
        entry["timing"] = {**slowest["timing"], "slowest_rank": slowest.get("rank")}
    profiled = [r["profiled"] for r in ranks if r.get("profiled")]
    if profiled:
        step_ms = [p["step_ms"] for p in profiled if p.get("step_ms") is not None]
        worst = max(step_ms) if step_ms else None
        median = entry.get("timing", {}).get("median_ms")
        entry["profiled"] = {
            "trace": profiled[0]["trace"],
            "traces": [p["trace"] for p in profiled],
            "steps": min(p.get("steps") or 0 for p in profiled),
            "gpu_activities": sum(p.get("gpu_activities") or 0 for p in profiled),
            "step_ms": worst,
            "inflation": worst / median if worst is not None and median else None,
        }
    paired = next((r["paired"] for r in ranks if r.get("paired")), None)
    if paired is not None:
        entry["paired"] = paired
    firsts = [r["first_call_s"] for r in ranks if r.get("first_call_s") is not None]
    entry["first_call_s"] = max(firsts) if firsts else None
    checks = [r["correctness"] for r in ranks if r.get("correctness")]
    if checks:
        entry["correctness"] = next((c for c in checks if not c.get("ok")), checks[0])
    peaks = [r["peak_mem_bytes"] for r in ranks if r.get("peak_mem_bytes") is not None]
    entry["peak_mem_bytes"] = max(peaks) if peaks else None
    if mode in COMPILE_MODES:
        entry["compile"] = next((r["compile"] for r in ranks if r.get("compile")), None)
    entry["nproc"] = len(ranks)
    entry["ranks"] = ranks
    return entry


def run_mode_ranks(
    workload: Path,
    mode: str,
    run_dir: Path,
    settings: RunSettings,
    environment: dict[str, Any],
    nproc: int,
    on_phase: Callable[[str], None],
) -> dict[str, Any]:
    """Run ``mode`` on ``nproc`` ranks and return its manifest entry (never raises for the
    ranks' failures)."""
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{mode}.log"

    def clear_results() -> None:
        for r in range(nproc):
            rank_result_path(run_dir, mode, r).unlink(missing_ok=True)
            rank_phase_path(run_dir, mode, r).unlink(missing_ok=True)

    def last_phases() -> list[str | None]:
        out: list[str | None] = []
        for r in range(nproc):
            p = rank_phase_path(run_dir, mode, r)
            out.append(p.read_text(encoding="utf-8").strip() or None if p.exists() else None)
        return out

    clear_results()
    child = {**settings.child_settings(environment),
             "timeout_s": settings.timeout_s * PG_TIMEOUT_SHARE}
    cmd = launcher_cmd(workload, mode, run_dir, nproc, settings.device, json.dumps(child))
    env = child_env(settings.device)
    env.setdefault("OMP_NUM_THREADS", "1")
    out = run_child_session(
        cmd, log_path, env=env, timeout_s=settings.timeout_s, mode=mode, on_phase=on_phase,
        on_stop=clear_results,
        finished=lambda: all(rank_result_path(run_dir, mode, r).exists() for r in range(nproc)),
        broken=COLLECTIVE_TIMEOUT_LINE,
    )
    results = []
    for r in range(nproc):
        path = rank_result_path(run_dir, mode, r)
        results.append(json.loads(path.read_text(encoding="utf-8")) if path.exists() else None)
    phases = last_phases()
    clear_results()
    log_text = out.log_text
    entry = merge_rank_results(results, mode, phases, ranks_that_waited(log_text))
    if out.timed_out:
        blamed = entry.get("failed_rank")
        who = (f"; rank {blamed} was in '{phases[blamed]}'" if blamed is not None
               and phases[blamed] else "")
        entry.update(status="timeout", reason=out.timeout_reason(settings.timeout_s) + who)
    elif out.lingered:
        entry["exit"] = lingering_note(out.survivors())
    elif out.broken is not None and entry["status"] != "ok":
        entry.update(status="failed",
                     reason=broken_group_note(out.broken) + f"; {entry['reason']}")
    elif all(r is None for r in results):
        tail = "\n".join(log_text.strip().splitlines()[-REASON_LOG_LINES:])
        entry.update(status="failed", reason=f"the launcher exited with code {out.returncode} "
                     f"and no rank wrote a result; log tail:\n{tail}")
    if mode in COMPILE_MODES:
        entry["compile"] = {**(entry.get("compile") or {}), **parse_compile_log(log_text)}
    entry["wall_s"] = out.wall_s
    entry["log"] = str(log_path.relative_to(run_dir))
    traces = [rank_trace_path(run_dir, mode, r) for r in range(nproc)]
    if not any(t.exists() for t in traces):
        entry["profiled"] = None
    elif all(t.exists() for t in traces):
        entry.update(write_ranks_report(run_dir, mode, traces))
    return entry


def broken_group_note(line: str) -> str:
    """The start of a mode's reason when a rank's log ``line`` (:data:`COLLECTIVE_TIMEOUT_LINE`)
    said its collective timed out and the ranks were then killed."""
    m = COLLECTIVE_TIMEOUT_LINE.search(line)
    who = f"rank {m.group(1)}'s" if m else "a"
    return (f"the process group broke: {who} collective timed out waiting for a peer (NCCL's "
            f"watchdog); the ranks were killed {BROKEN_GRACE_S:.0f} s later")


def lingering_note(survivors: str = "") -> str:
    """What a mode's entry says (``exit``) when its ranks wrote every result but did not exit
    (``survivors``: :meth:`~traceviz.collect.runner.ChildOutcome.survivors`)."""
    return (f"every rank wrote its result, but the ranks had not exited {EXIT_GRACE_S:.0f} s "
            "later (hung tearing down: process-group shutdown or interpreter exit); killed, "
            f"their measurements kept{survivors}")


def write_ranks_report(run_dir: Path, mode: str, traces: list[Path]) -> dict[str, Any]:
    """Analyze the mode's rank traces together: ``<mode>.ranks.html`` in the run dir, and the
    manifest keys ``ranks_report`` and ``ranks_summary`` (the JSON ``ranks`` minus the
    per-step rows). A failure is recorded as ``ranks_summary: {"error": …}``, never raised."""
    try:
        from traceviz.api.ranks import Ranks

        ranks = Ranks.from_paths(traces, workers=1)
        if ranks.failed:
            raise RuntimeError("; ".join(f"{f.path}: {f.reason}" for f in ranks.failed))
        page = run_dir / f"{mode}.ranks.html"
        page.write_text(ranks.render("html", "inline"), encoding="utf-8")
        summary = ranks.to_dict()["ranks"]
        for key in ("rank_steps", "traces"):
            summary.pop(key, None)
        return {"ranks_report": page.name, "ranks_summary": summary}
    except Exception as exc:  # the analyzer's failure is a fact about this run, not fatal
        return {"ranks_report": None, "ranks_summary": {"error": f"{type(exc).__name__}: {exc}"}}
