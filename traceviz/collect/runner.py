"""Parent side of a profile run: each mode in its own child process, with a timeout.

A crash, hang or CUDA error in one mode costs only that mode: the child's result file (or, when
it left none, its exit code and last log lines) becomes the mode's manifest entry. A child that
hangs past the timeout is ``timeout``; one killed by a signal (a segfault, the OOM killer) is
``crashed`` with ``reason`` "killed by SIGSEGV during '<phase>'". When the parent itself is
interrupted (:class:`~traceviz.collect.run_control.RunInterrupted`, or ``KeyboardInterrupt``),
the child and everything it started are killed before the exception goes on, so no child
outlives the run (:func:`~traceviz.collect.process_tree.kill_tree`: ``torch.distributed.run``
starts its ranks in sessions of their own). A process that survives SIGKILL (stuck in the GPU
driver) is named in the mode's reason, and the run goes on without waiting for it. The child's
stdout/stderr go to ``logs/<mode>.log`` in the run directory; its phase lines drive
``on_phase`` and time the phases: the mode's entry, and its ``--against`` record, carry
``phase_s`` (seconds per phase, :func:`phase_seconds`: where the time went; the stacked trace,
recorded by the mode's own child, is its phase ``stacks``), which ``traceviz profile`` prints
at the end (:func:`traceviz.cli.display.time_spent`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from traceviz.atomic import write_bytes_atomic
from traceviz.collect.diagnostics import TORCH_LOGS, parse_compile_log
from traceviz.collect.mode_names import COMPILE_MODES
from traceviz.collect.process_tree import kill_tree, pipe_holders, still_alive
from traceviz.collect.profiled_step import PHASE_PREFIX, RAN, STACK_PHASE
from traceviz.collect.run_control import RunInterrupted

#: Lines of a log kept in a failure reason when the child wrote no result.
REASON_LOG_LINES = 8
#: A mode log is cut to its last this-many bytes.
MAX_LOG_BYTES = 256 * 1024
#: Seconds to wait for the child to be reaped after SIGKILL, and for its log pipe to close
#: (once after the child is gone, once more after killing whatever still holds the pipe).
KILL_GRACE_S = 10.0
#: How long (s) a child whose every result is written may take to exit before it is killed
#: (ranks that hang tearing down their process group keep their measurements).
EXIT_GRACE_S = 30.0
#: How long (s) a child may take to end by itself after a log line said it cannot go on
#: (``run_child_session``'s ``broken``: a process group whose collective timed out).
BROKEN_GRACE_S = 10.0
#: How often (s) the parent looks for a child's results while it waits.
POLL_S = 0.5
#: How a child session ended (:func:`_wait`).
EXITED, TIMED_OUT, LINGERED, BROKEN = "exited", "timed out", "lingered", "broken"


@dataclass(frozen=True)
class RunSettings:
    """How each mode is measured; the timing fields are per-repeat/per-run counts and ms."""

    device: str
    timeout_s: float
    warmup: int
    repeats: int
    min_repeat_ms: float
    max_iters: int
    check_steps: int
    timing_budget_s: float = 30.0  # paired timing against the baseline, per mode; 0: off
    with_stack: bool = True  # also record a stacked trace (host-wait sources) per mode

    @classmethod
    def from_manifest(cls, settings: dict[str, Any]) -> RunSettings:
        """The settings a manifest's ``settings`` recorded (extra keys are ignored; fields an
        older manifest lacks take their defaults when they have one).

        Raises ``KeyError`` naming the first required field the manifest lacks.
        """
        return cls(**{f.name: settings[f.name] for f in fields(cls)
                      if f.name in settings or f.default is MISSING})

    def child_settings(self, environment: dict[str, Any]) -> dict[str, Any]:
        """The JSON settings a child reads (the environment goes into trace metadata)."""
        return {
            "warmup": self.warmup,
            "repeats": self.repeats,
            "min_repeat_ms": self.min_repeat_ms,
            "max_iters": self.max_iters,
            "check_steps": self.check_steps,
            "timing_budget_s": self.timing_budget_s,
            "with_stack": self.with_stack,
            "environment": {
                k: environment.get(k) for k in ("torch", "triton", "cuda", "gpu", "driver")
            },
        }


#: Allocator settings of a CPU mode's child (:func:`child_env`): glibc serves allocations up to
#: 32 MiB (its largest mmap threshold on 64-bit) from the heap and never gives freed heap
#: memory back, so an op's output reuses freed pages instead of faulting fresh, zeroed ones in;
#: PyTorch asks for transparent huge pages on the larger tensors glibc must map on their own
#: (``THP_MEM_ALLOC_ENABLE``: 2 MiB pages, a 512th of the faults).
CPU_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
                  "THP_MEM_ALLOC_ENABLE": "1"}


def bytecode_cache_dir() -> Path:
    """Where the children keep Python's compiled bytecode when the environment asks Python not
    to write it beside the sources: ``$XDG_CACHE_HOME/traceviz/pycache`` (``~/.cache`` when
    unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "traceviz" / "pycache"


def _bytecode_env(env: dict[str, str]) -> None:
    """With ``PYTHONDONTWRITEBYTECODE`` set and no ``PYTHONPYCACHEPREFIX``, give the children
    :func:`bytecode_cache_dir` as their prefix and let them write there: nothing is written
    beside the sources, as the setting asks, and each child stops compiling torch's sources
    afresh. Without a cache every child of a run compiled them again: on the lent H200 machines
    (PYTHONDONTWRITEBYTECODE=1, no ``__pycache__`` in torch) ``import torch, torch._dynamo,
    torch._inductor.compile_fx`` took 11.2–12.2 s in every process, and 4.1–4.3 s from the
    cache (2026-11-28); a compile mode's child imports all three, the others torch. A user's
    own ``PYTHONPYCACHEPREFIX`` is kept as it is."""
    if env.get("PYTHONDONTWRITEBYTECODE") and not env.get("PYTHONPYCACHEPREFIX"):
        del env["PYTHONDONTWRITEBYTECODE"]
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_cache_dir())


def child_env(device: str | None = None) -> dict[str, str]:
    """Environment of a child: unbuffered output, the compile log artifacts it parses and a
    bytecode cache where the environment turns bytecode off (:func:`_bytecode_env`); on
    the CPU device also :data:`CPU_MALLOC_ENV` (a user's own settings of these variables win).

    Why the CPU children fix malloc: a CPU step's tensors are glibc allocations, and whether an
    op's multi-MiB output comes from freed heap memory or from fresh pages the kernel must fault
    in and zero depends on everything the process allocated before (glibc moves its mmap
    threshold as mmapped blocks are freed). So the same eager step ran at different speeds in
    its own process and beside a compiled mode (``elementwise`` on 2 cores: 44.5 ms/step with
    6,632 minor faults per step in a fresh process, 31.1 ms after a compile in the same
    process; the in-process baseline drifting from 34 to 88 ms/step over one pairing). With
    these settings: 28.1 and 29.7 ms/step, 0 and 1,024 faults per step. Tensors of 32 MiB or
    more are mapped whatever the threshold: ``rmsnorm_residual`` (4096 × 2048 float32) eager
    faulted 32,772 pages in per step, 54 ms of its 115 ms/step in the kernel; with huge pages
    2,112 faults and 47 ms/step, and ``profile --modes eager,compile`` ran eager at 41.4 ms/step
    in its own process and 41.8 beside compile (110.5 and 114.3 without)."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("TORCH_LOGS", TORCH_LOGS)
    _bytecode_env(env)
    if device == "cpu":
        for key, value in CPU_MALLOC_ENV.items():
            env.setdefault(key, value)
    return env


def _child_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "traceviz.collect.child", *args]


def run_probe(workload: Path, out: Path, timeout_s: float) -> tuple[int, dict[str, Any]]:
    """Run the probe child; return its exit code and JSON (``{"error": …}`` on failure)."""
    try:
        proc = subprocess.run(
            _child_cmd("probe", str(workload), str(out)),
            capture_output=True, text=True, timeout=timeout_s, env=child_env(), check=False,
        )
    except subprocess.TimeoutExpired:
        return 1, {"error": f"probing the workload took more than {timeout_s:.0f} s"}
    if out.exists():
        return proc.returncode, json.loads(out.read_text(encoding="utf-8"))
    tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-REASON_LOG_LINES:])
    return proc.returncode or 1, {"error": f"probe exited with code {proc.returncode}: {tail}"}


def signal_name(signum: int) -> str:
    """``SIGSEGV`` for 11; ``signal 99`` for a number without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _kill_session(proc: subprocess.Popen[str]) -> list[int]:
    """SIGKILL the child and all it started (:func:`kill_tree`), reap the child (waiting at most
    :data:`KILL_GRACE_S`) and return the descendants that were found."""
    tree = kill_tree(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_S)
    return tree


def _drain(pump: threading.Thread, proc: subprocess.Popen[str],
           killed: list[int]) -> tuple[str, ...]:
    """Wait for the child's log pipe to close (``pump`` reads it to the end). Whatever still
    holds the pipe :data:`KILL_GRACE_S` after the child is gone (a descendant in a session of
    its own, or one that outlived SIGKILL) is SIGKILLed with all it started; returns
    ``"<pid> (state <S>)"`` of the processes (those, ``killed``, the child) still alive
    :data:`KILL_GRACE_S` later."""
    pump.join(KILL_GRACE_S)
    if not pump.is_alive():
        return ()
    holders = pipe_holders(proc.stdout.fileno()) if proc.stdout is not None else []
    for pid in holders:
        kill_tree(pid)
    pump.join(KILL_GRACE_S)
    if not pump.is_alive():
        return ()
    return tuple(still_alive(sorted({proc.pid, *killed, *holders})))


def _pump(stream: Any, log: Any, on_phase: Callable[[str], None], last: dict[str, str],
          broken: re.Pattern[str] | None = None,
          marks: list[tuple[str, float]] | None = None) -> None:
    for line in stream:
        if line.startswith(PHASE_PREFIX):
            last["phase"] = line[len(PHASE_PREFIX):].strip()
            if marks is not None:
                marks.append((last["phase"], time.monotonic()))
            on_phase(last["phase"])
        elif broken is not None and "broken" not in last and broken.search(line):
            last["broken"] = line.strip()
        try:
            log.write(line)
            log.flush()
        except ValueError:  # log closed: the session was given up on (survived SIGKILL)
            return


def phase_seconds(marks: list[tuple[str, float]], end: float) -> dict[str, float]:
    """Seconds spent in each announced phase: from its phase line to the next one (the last to
    ``end``), summed over repeats of a name, in order of first appearance (``marks``: (phase,
    monotonic time) from the session's start, ``"start"``: the child's start-up before its
    first phase line)."""
    out: dict[str, float] = {}
    for (name, t), nxt in zip(marks, [*(t for _, t in marks[1:]), end], strict=True):
        out[name] = round(out.get(name, 0.0) + max(0.0, nxt - t), 3)
    return out


def _trim_log(path: Path) -> None:
    size = path.stat().st_size
    if size > MAX_LOG_BYTES:
        with path.open("rb") as fh:
            fh.seek(size - MAX_LOG_BYTES)
            tail = fh.read()
        write_bytes_atomic(path, b"[... log cut to its last %d bytes ...]\n" % MAX_LOG_BYTES + tail)


@dataclass(frozen=True)
class ChildOutcome:
    """How a child session ended: its exit code (negative: killed by that signal), whether it
    was killed for running past the timeout, for lingering after its results were written or
    after a log line said it could not go on, its last announced phase, its wall time, its
    (trimmed) log, and the processes it left that outlived SIGKILL (``"<pid> (state <S>)"``,
    :func:`_drain`)."""

    returncode: int
    timed_out: bool
    phase: str
    wall_s: float
    log_text: str
    left_running: tuple[str, ...] = ()
    #: the child had written every result but had not exited ``EXIT_GRACE_S`` later: killed
    lingered: bool = False
    #: the log line that said the child could not go on (``broken``), after which it was
    #: given ``BROKEN_GRACE_S`` to end by itself and then killed; None when none came
    broken: str | None = None
    #: seconds per announced phase (:func:`phase_seconds`)
    phase_s: dict[str, float] = field(default_factory=dict)

    def survivors(self) -> str:
        """"; still alive after SIGKILL: <pid> (state <S>), …", or "" when none survived."""
        return (f"; still alive after SIGKILL: {', '.join(self.left_running)}"
                if self.left_running else "")

    def timeout_reason(self, timeout_s: float) -> str:
        """"no result after N s; killed during '<phase>'", and the processes that survived."""
        return f"no result after {timeout_s:.0f} s; killed during '{self.phase}'{self.survivors()}"


def run_child_session(
    cmd: list[str],
    log_path: Path,
    *,
    env: dict[str, str],
    timeout_s: float,
    mode: str,
    on_phase: Callable[[str], None],
    on_stop: Callable[[], None],
    finished: Callable[[], bool] | None = None,
    broken: re.Pattern[str] | None = None,
) -> ChildOutcome:
    """Run ``cmd`` in a session of its own, its output in ``log_path`` (phase lines drive
    ``on_phase``). Past ``timeout_s`` the whole session is killed (``timed_out``); so is a child
    still running ``EXIT_GRACE_S`` after ``finished()`` first held (``lingered``: its results
    are all written, only its exit hangs), or ``BROKEN_GRACE_S`` after a log line matched
    ``broken`` (the line is the outcome's ``broken``). When the parent is stopping (SIGINT /
    SIGTERM, any exception while waiting) the session is killed, ``on_stop`` clears the child's
    partial results, and the exception goes on, a :class:`RunInterrupted` told which mode and
    phase it stopped."""
    last = {"phase": "start"}
    begin = time.monotonic()
    marks = [("start", begin)]
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=env, start_new_session=True, errors="replace",
        )
        # daemon: a process that outlives SIGKILL may hold the pipe open for good
        pump = threading.Thread(target=_pump, args=(proc.stdout, log, on_phase, last, broken,
                                                         marks),
                                daemon=True)
        pump.start()
        ended = EXITED
        killed: list[int] = []
        try:
            ended = _wait(proc, begin + timeout_s, finished, last)
            if ended != EXITED:
                killed = _kill_session(proc)
        except BaseException as exc:  # the parent is stopping: the child goes with it
            _drain(pump, proc, _kill_session(proc))
            on_stop()
            if isinstance(exc, RunInterrupted):
                exc.during(mode, last["phase"], time.monotonic() - begin)
            raise
        left = _drain(pump, proc, killed)
        if left:
            log.write(f"traceviz: still alive after SIGKILL: {', '.join(left)}\n")
    _trim_log(log_path)
    return ChildOutcome(
        returncode=proc.returncode if proc.returncode is not None else -signal.SIGKILL,
        timed_out=ended == TIMED_OUT, phase=last["phase"], wall_s=time.monotonic() - begin,
        log_text=log_path.read_text(encoding="utf-8", errors="replace"), left_running=left,
        lingered=ended == LINGERED, broken=last.get("broken") if ended == BROKEN else None,
        phase_s=phase_seconds(list(marks), time.monotonic()),
    )


def _wait(proc: subprocess.Popen[str], deadline: float,
          finished: Callable[[], bool] | None, last: dict[str, str]) -> str:
    """Wait for ``proc`` until ``deadline`` (``time.monotonic``): how it ended, one of
    ``EXITED``, ``TIMED_OUT``, ``LINGERED``, ``BROKEN`` (:func:`run_child_session`; ``last`` is
    the pump's record, with ``"broken"`` once a line said the child cannot go on)."""
    done_at: float | None = None
    broken_at: float | None = None
    while True:
        try:
            proc.wait(timeout=max(min(POLL_S, deadline - time.monotonic()), 0.0))
            return EXITED
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if done_at is None and finished is not None and finished():
                done_at = now
            if broken_at is None and "broken" in last:
                broken_at = now
            if done_at is not None and now - done_at >= EXIT_GRACE_S:
                return LINGERED
            if broken_at is not None and now - broken_at >= BROKEN_GRACE_S:
                return BROKEN
            if now >= deadline:
                return TIMED_OUT


def run_mode(
    workload: Path,
    mode: str,
    run_dir: Path,
    settings: RunSettings,
    environment: dict[str, Any],
    on_phase: Callable[[str], None],
) -> dict[str, Any]:
    """Run ``mode`` in a child process and return its manifest entry (never raises for the
    child's failures: they become ``failed`` / ``timeout`` entries).

    With ``settings.with_stack`` the child also records the stacked trace, last, in its phase
    :data:`~traceviz.collect.profiled_step.STACK_PHASE`, having written its result first: a
    child that times out, is killed or exits badly in that phase keeps the mode's entry as that
    result says, and only ``stack_profiled`` tells the failure (:func:`_stack_failure`).
    """
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{mode}.log"
    result_path = logs / f"{mode}.result.json"
    result_path.unlink(missing_ok=True)
    trace_path = run_dir / f"{mode}.pt.trace.json.gz"
    stack_path = run_dir / f"{mode}.stack.pt.trace.json.gz"
    cmd = _child_cmd(
        "run", str(workload), mode, str(trace_path), str(result_path),
        "--device", settings.device,
        "--settings", json.dumps(settings.child_settings(environment)),
        *(("--stack-trace", str(stack_path)) if settings.with_stack else ()),
    )
    out = run_child_session(cmd, log_path, env=child_env(settings.device),
                            timeout_s=settings.timeout_s,
                            mode=mode, on_phase=on_phase,
                            on_stop=lambda: result_path.unlink(missing_ok=True))
    log_text = out.log_text
    written = (json.loads(result_path.read_text(encoding="utf-8"))
               if result_path.exists() else None)
    if (settings.with_stack and out.phase == STACK_PHASE and written is not None
            and written.get("status") in RAN):
        entry = written  # every measurement was written before the stacked trace began
        if not entry.get("stack_profiled"):
            entry["stack_profiled"] = _stack_failure(out, settings.timeout_s)
    elif out.timed_out:
        entry = {"status": "timeout", "reason": out.timeout_reason(settings.timeout_s)}
        if written is not None:  # a result from before the hang, kept for its numbers
            entry = {**written, **entry}
    elif out.returncode < 0:
        tail = "\n".join(log_text.strip().splitlines()[-REASON_LOG_LINES:])
        entry = {
            "status": "crashed",
            "reason": f"killed by {signal_name(-out.returncode)} during '{out.phase}'; "
            f"log tail:\n{tail}",
        }
        if written is not None:  # written before the signal: kept for its numbers
            entry = {**written, **entry}
    elif written is not None:
        entry = written
        if out.returncode != 0 and entry.get("status") == "ok":
            entry.update(status="failed", reason=f"child exited with code {out.returncode}")
    else:
        tail = "\n".join(log_text.strip().splitlines()[-REASON_LOG_LINES:])
        entry = {
            "status": "failed",
            "reason": f"child exited with code {out.returncode} during '{out.phase}' "
            f"and wrote no result; log tail:\n{tail}",
        }
    result_path.unlink(missing_ok=True)
    if mode in COMPILE_MODES:
        entry["compile"] = {**(entry.get("compile") or {}), **parse_compile_log(log_text)}
    entry["wall_s"] = out.wall_s
    entry["phase_s"] = out.phase_s
    entry["log"] = str(log_path.relative_to(run_dir))
    if entry.get("stack_profiled"):
        entry["stack_profiled"]["log"] = entry["log"]
    if not trace_path.exists():
        entry.setdefault("profiled", None)
    return entry


def _stack_failure(out: ChildOutcome, timeout_s: float) -> dict[str, Any]:
    """The ``stack_profiled`` record of a child that ended in the stacked phase without
    writing it: ``timeout`` when it was killed at ``timeout_s``, else ``failed``, the reason
    saying how it ended."""
    if out.timed_out:
        return {"status": "timeout", "reason": f"killed at the {timeout_s:.0f} s timeout while "
                f"recording the stacked trace{out.survivors()}"}
    how = (f"was killed by {signal_name(-out.returncode)}" if out.returncode < 0
           else f"exited with code {out.returncode}")
    return {"status": "failed", "reason": f"the mode's child {how} while recording the "
            "stacked trace"}


def run_against(
    workload: Path,
    old: Path,
    mode: str,
    run_dir: Path,
    settings: RunSettings,
    environment: dict[str, Any],
    on_phase: Callable[[str], None],
) -> dict[str, Any]:
    """Time ``workload`` against the ``old`` version of it in ``mode``, in a child process of
    its own (:mod:`traceviz.collect.against`), its log ``logs/<mode>.against.log``, and return
    the mode entry's ``against`` record, the one the child wrote to
    ``logs/<mode>.against.result.json`` (a failed, hung or killed child that left none gives
    ``{"status": "timeout" | "failed", "reason"}``, never an exception), with ``wall_s``,
    ``phase_s`` and ``log`` added."""
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{mode}.against.log"
    result_path = logs / f"{mode}.against.result.json"
    result_path.unlink(missing_ok=True)
    cmd = _child_cmd("against", str(workload), mode, str(result_path), "--old", str(old),
                     "--device", settings.device,
                     "--settings", json.dumps(settings.child_settings(environment)))
    out = run_child_session(cmd, log_path, env=child_env(settings.device),
                            timeout_s=settings.timeout_s, mode=mode,
                            on_phase=lambda p: on_phase(f"against old: {p}"),
                            on_stop=lambda: result_path.unlink(missing_ok=True))
    if result_path.exists():
        record = json.loads(result_path.read_text(encoding="utf-8"))
        result_path.unlink(missing_ok=True)
    elif out.timed_out:
        record = {"status": "timeout", "reason": out.timeout_reason(settings.timeout_s)}
    else:
        how = (f"killed by {signal_name(-out.returncode)}" if out.returncode < 0
               else f"exited with code {out.returncode}")
        record = {"status": "failed", "reason": f"the old-vs-new run {how} during "
                  f"'{out.phase}'"}
    record["wall_s"] = out.wall_s
    record["phase_s"] = out.phase_s
    record["log"] = str(log_path.relative_to(run_dir))
    return record
