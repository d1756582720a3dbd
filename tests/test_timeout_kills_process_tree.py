"""A mode's timeout ends everything its child started, also processes in sessions of their own
(``torch.distributed.run`` starts each rank so), and the parent never waits on a survivor.

Before :mod:`traceviz.collect.process_tree`, the parent killed only the child's process group:
a grandchild in its own session kept running, held the log pipe open, and the parent blocked
on it for good (seen on 2 H200s: a rank hung in capture stranded ``profile --nproc 2``).
"""

from __future__ import annotations

import os
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from traceviz.collect import runner
from traceviz.collect.process_tree import descendants, kill_tree, pipe_holders, still_alive

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")

#: A child that starts a grandchild in a session of its own (as torchrun starts a rank), which
#: writes its pid and sleeps an hour holding the inherited stdout; the child then sleeps too.
LAUNCHER = textwrap.dedent("""
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c",
                      "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
                      "print('rank up', flush=True); time.sleep(3600)", sys.argv[1]],
                     start_new_session=True)
    time.sleep(3600)
""")


def _wait_for(path: Path, timeout_s: float = 30.0) -> int:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _gone(pid: int) -> bool:
    return not still_alive([pid])


def test_a_timed_out_child_takes_its_grandchild_in_another_session_with_it(
        tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    outcome: list[runner.ChildOutcome] = []
    call = threading.Thread(target=lambda: outcome.append(runner.run_child_session(
        [sys.executable, "-c", LAUNCHER, str(pid_file)], tmp_path / "mode.log",
        env=dict(os.environ), timeout_s=3, mode="eager", on_phase=lambda _: None,
        on_stop=lambda: None)), daemon=True)
    call.start()
    grandchild = _wait_for(pid_file)
    try:
        call.join(3 + runner.KILL_GRACE_S + 20)
        assert not call.is_alive(), "the parent is still waiting after the timeout"
        out = outcome[0]
        assert out.timed_out and out.left_running == ()
        assert "rank up" in out.log_text
        assert out.timeout_reason(3) == "no result after 3 s; killed during 'start'"
        for _ in range(100):  # reaped by init shortly after SIGKILL
            if _gone(grandchild):
                break
            time.sleep(0.05)
        assert _gone(grandchild)
    finally:
        if not _gone(grandchild):
            os.kill(grandchild, 9)


#: A child that starts the same grandchild and exits at once, leaving it with the pipe.
QUITTER = LAUNCHER.replace("time.sleep(3600)\n", "")


def test_a_grandchild_left_holding_the_pipe_by_a_finished_child_is_killed(
        tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    outcome: list[runner.ChildOutcome] = []
    call = threading.Thread(target=lambda: outcome.append(runner.run_child_session(
        [sys.executable, "-c", QUITTER, str(pid_file)], tmp_path / "mode.log",
        env=dict(os.environ), timeout_s=600, mode="eager", on_phase=lambda _: None,
        on_stop=lambda: None)), daemon=True)
    call.start()
    grandchild = _wait_for(pid_file)
    try:
        call.join(2 * runner.KILL_GRACE_S + 20)
        assert not call.is_alive(), "the parent is still waiting on the grandchild's pipe"
        out = outcome[0]
        assert not out.timed_out and out.returncode == 0 and out.left_running == ()
        for _ in range(100):
            if _gone(grandchild):
                break
            time.sleep(0.05)
        assert _gone(grandchild)
    finally:
        if not _gone(grandchild):
            os.kill(grandchild, 9)


def test_descendants_are_found_across_sessions_and_killed(tmp_path: Path) -> None:
    import subprocess

    pid_file = tmp_path / "grandchild.pid"
    reader, writer = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(pid_file)],
                             start_new_session=True, stdout=writer)
    os.close(writer)
    grandchild = _wait_for(pid_file)
    try:
        assert descendants(child.pid) == [grandchild]
        assert set(pipe_holders(reader)) == {child.pid, grandchild}
        assert still_alive([child.pid, grandchild]) == [f"{child.pid} (state S)",
                                                        f"{grandchild} (state S)"]
        assert kill_tree(child.pid) == [grandchild]
        child.wait(10)
        assert still_alive([child.pid]) == []
        for _ in range(100):
            if _gone(grandchild):
                break
            time.sleep(0.05)
        assert _gone(grandchild)
    finally:
        os.close(reader)
        for pid in (child.pid, grandchild):
            if not _gone(pid):
                os.kill(pid, 9)


def test_a_survivor_of_sigkill_is_named_in_the_timeout_reason() -> None:
    out = runner.ChildOutcome(returncode=-9, timed_out=True, phase="capturing", wall_s=130.0,
                              log_text="", left_running=("4242 (state D)",))
    assert out.timeout_reason(120) == (
        "no result after 120 s; killed during 'capturing'; still alive after SIGKILL: "
        "4242 (state D)")


def test_no_descendants_without_proc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("traceviz.collect.process_tree.PROC", tmp_path / "absent")
    assert descendants(os.getpid()) == [] and still_alive([os.getpid()]) == []
    assert pipe_holders(0) == []
