"""Rank tasks for the executor tests, importable by worker processes (``tests.rank_tasks``).

``die_on_victim`` is the real task except for a path containing ``victim``: there the worker
process SIGKILLs itself (a real, uncatchable kill of the worker mid-task). With a marker file
next to the victim, only the first try dies (the retry then succeeds).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from traceviz.scale.task import rank_task


def die_on_victim(path: str, *args: Any) -> Any:
    p = Path(path)
    if "victim" in p.name:
        once = p.with_name(p.name + ".die-once")
        if not once.exists() or once.read_text() == "":
            if once.exists():
                once.write_text("died")
            os.kill(os.getpid(), signal.SIGKILL)
    return rank_task(path, *args)


def sleep_forever(path: str, *args: Any) -> Any:
    pid_file = Path(path).with_suffix(".pid")
    pid_file.write_text(str(os.getpid()))
    while True:
        time.sleep(1)
