"""Run one adversarial case: build its files in a fresh folder, run each ``traceviz`` command
in a child process (``sys.executable -m traceviz``) with a timeout, and check what it did.

Checks on every case (a problem found is a string in :attr:`Outcome.problems`, keyed by check):

``data-loss``   a file or folder that existed before the run (anything in the case folder, or
                outside it in the case root) was deleted, changed (sha256) or changed type
                (a FIFO, device node, symlink or directory is still one, a symlink still
                points where it did, a device keeps its numbers), unless the case lists it as
                an output the command may legitimately replace
``traceback``   a Python traceback on stderr or stdout (or an ``…Error:`` line on stderr)
``hang``        a command still running after its timeout (killed with its process group)
``exit``        an exit status outside the documented set (0, 1 input, 2 usage; 3 for
                ``check``) — docs/reliability.md, "Error contract"
``unnamed``     a "silently wrong" case whose problem is not named: neither a non-zero exit whose
                message names it nor a warning in the output naming it (the case's predicate)
``output``      a case-specific expectation on the output (e.g. no raw ESC byte in text output)
``harness``     the case's own builder failed (a bug here, not in traceviz)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Seconds a command may run before it counts as a hang.
TIMEOUT_S = 60.0
#: Exit statuses docs/reliability.md documents, per command.
DOCUMENTED_EXITS = {"check": frozenset({0, 1, 2, 3})}
DEFAULT_EXITS = frozenset({0, 1, 2})
CHECKS = ("data-loss", "traceback", "hang", "exit", "unnamed", "output", "harness")
TRACEBACK = re.compile(rb"Traceback \(most recent call last\)")
#: An uncaught exception's last line (looked for on stderr only: a report may quote one).
ERROR_LINE = re.compile(rb"^\s*[\w.]*(?:Error|Exception): ", re.MULTILINE)
#: Environment variables that would make Rich colour a pipe (then ESC bytes are expected).
_COLOUR_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE")


@dataclass(frozen=True)
class Step:
    """One command: ``argv`` after ``python -m traceviz``, run in the case's work folder."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = TIMEOUT_S


@dataclass(frozen=True)
class StepResult:
    argv: tuple[str, ...]
    rc: int | None  # None: killed at the timeout
    stdout: bytes
    stderr: bytes
    wall_s: float

    @property
    def message(self) -> str:
        """stderr as text (undecodable bytes replaced)."""
        return self.stderr.decode("utf-8", "replace")

    @property
    def text(self) -> str:
        """stdout as text (undecodable bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")


#: Takes the results of a case's steps; returns None when fine, else what is wrong.
Verdict = Callable[[Sequence[StepResult]], "str | None"]


@dataclass
class Plan:
    """What a case's builder returns: the commands and what may change.

    ``may_change``: paths (relative to the case root) a command may legitimately replace.
    ``named``: for a silently-wrong case, the predicate saying the problem was named.
    ``expect``: other expectations on the output (``output`` check).
    """

    steps: list[Step]
    may_change: set[str] = field(default_factory=set)
    named: Verdict | None = None
    expect: Verdict | None = None
    skip: str | None = None  # why the case cannot run here (e.g. mknod not permitted)


@dataclass(frozen=True)
class Case:
    """``build(root)`` writes the case's files under ``root`` (the work folder is
    ``root/work``, the commands' working directory) and returns the :class:`Plan`."""

    id: str
    category: str
    build: Callable[[Path], Plan]
    silently_wrong: str | None = None  # the problem that must be named, in words


@dataclass
class Outcome:
    id: str
    category: str
    problems: dict[str, str]
    steps: list[dict[str, object]]
    wall_s: float
    skipped: str | None = None
    new_paths: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# --- file-system snapshot ---------------------------------------------------------------------


def _entry(path: str) -> tuple[str, str]:
    """(kind, identity) of ``path`` without following a symlink: sha256 of a regular file,
    the target of a link, ``major,minor`` of a device."""
    st = os.lstat(path)
    mode = st.st_mode
    if stat.S_ISREG(mode):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return "file", h.hexdigest()
    if stat.S_ISLNK(mode):
        return "symlink", os.readlink(path)
    if stat.S_ISDIR(mode):
        return "dir", ""
    if stat.S_ISFIFO(mode):
        return "fifo", ""
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "chardev" if stat.S_ISCHR(mode) else "blockdev"
        return kind, f"{os.major(st.st_rdev)},{os.minor(st.st_rdev)}"
    return "other", ""


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``root`` (symlinks not followed), by path relative to ``root``."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            try:
                out[os.path.relpath(full, root)] = _entry(full)
            except OSError as exc:  # unreadable: still record that it exists
                out[os.path.relpath(full, root)] = ("unreadable", type(exc).__name__)
    return out


def lost(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]],
         may_change: set[str]) -> list[str]:
    """The pre-existing entries that are gone or differ (outside ``may_change``)."""
    out = []
    for rel, (kind, ident) in sorted(before.items()):
        if rel in may_change:
            continue
        now = after.get(rel)
        if now is None:
            out.append(f"{rel} ({kind}) deleted")
        elif now[0] != kind:
            out.append(f"{rel}: {kind} became {now[0]}")
        elif now[1] != ident:
            out.append(f"{rel} ({kind}) changed")
    return out


# --- running ----------------------------------------------------------------------------------


def _env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _COLOUR_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("COLUMNS", "160")
    env.update(extra)
    return env


def run_step(step: Step, cwd: Path) -> StepResult:
    """Run one command in its own process group; kill the group at the timeout."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "traceviz", *step.argv], cwd=cwd,
                            env=_env(step.env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=step.timeout_s)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        rc = None
    return StepResult(step.argv, rc, out, err, time.perf_counter() - t0)


def _documented(argv: Sequence[str]) -> frozenset[int]:
    return DOCUMENTED_EXITS.get(argv[0] if argv else "", DEFAULT_EXITS)


def check_steps(results: Sequence[StepResult]) -> dict[str, str]:
    """The traceback, hang and exit checks over a case's commands."""
    problems: dict[str, str] = {}
    for r in results:
        cmd = " ".join(r.argv[:1])
        if r.rc is None:
            problems.setdefault("hang", f"{cmd}: still running after {r.wall_s:.0f} s (killed)")
        m = TRACEBACK.search(r.stderr) or TRACEBACK.search(r.stdout) or ERROR_LINE.search(
            r.stderr)
        if m:
            last = [ln for ln in r.message.strip().splitlines() if ln.strip()]
            problems.setdefault("traceback", f"{cmd}: {last[-1][:300] if last else m.group()}")
        if r.rc is not None and r.rc not in _documented(r.argv):
            problems.setdefault("exit", f"{cmd}: exit {r.rc}")
    return problems


def _tail(data: bytes, n: int = 600) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= n else "…" + text[-n:]


def run_case(case: Case) -> Outcome:
    """Build, run and check ``case`` in a fresh temporary root (removed afterwards)."""
    t0 = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="tv-adv-"))
    try:
        work = root / "work"
        work.mkdir()
        try:
            plan = case.build(root)
        except Exception as exc:  # a broken case must not stop the campaign
            return Outcome(case.id, case.category, {"harness": f"build: {exc!r}"}, [], 0.0)
        if plan.skip:
            return Outcome(case.id, case.category, {}, [], 0.0, skipped=plan.skip)
        before = snapshot(root)
        results = [run_step(s, work) for s in plan.steps]
        after = snapshot(root)
        problems = check_steps(results)
        loss = lost(before, after, plan.may_change)
        if loss:
            problems["data-loss"] = "; ".join(loss)[:600]
        if plan.named is not None and "hang" not in problems:
            why = plan.named(results)
            if why:
                problems["unnamed"] = f"{case.silently_wrong}: {why}"
        if plan.expect is not None and "hang" not in problems:
            why = plan.expect(results)
            if why:
                problems["output"] = why
        steps = [{"argv": list(r.argv), "rc": r.rc, "wall_s": round(r.wall_s, 2),
                  **({"stderr": _tail(r.stderr), "stdout": _tail(r.stdout, 300)}
                     if problems else {})} for r in results]
        new = sorted(set(after) - set(before))
        return Outcome(case.id, case.category, problems, steps,
                       round(time.perf_counter() - t0, 2), new_paths=new[:20])
    finally:
        _remove(root)


def _remove(root: Path) -> None:
    """Remove the case root, making read-only folders writable first."""
    def onerror(func: Callable[..., object], path: str, _exc: object) -> None:
        os.chmod(os.path.dirname(path), 0o700)
        func(path)

    for dirpath, dirnames, _ in os.walk(root):
        for d in dirnames:
            full = os.path.join(dirpath, d)
            if not os.path.islink(full):
                os.chmod(full, 0o700)
    shutil.rmtree(root, onerror=onerror)
