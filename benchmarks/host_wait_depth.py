"""Host-wait attribution on the adversarial nesting shapes of issue 37 (item 8): wall time and
peak RSS of ``traceviz report TRACE -f json`` (a fresh process each; ``VmHWM``), for

* ``chain``: 20 000 nested CPU ops with 2 000 launches inside the innermost (3.7 MB);
* ``stacks``: 500 chains of 200 nested ops, 4 launches in each (15 MB),

from :mod:`tests.deep_nesting`. With ``--old DIR`` (a checkout of other code, e.g. a
``git worktree`` of an earlier commit) the same runs with ``DIR`` first on ``sys.path``, side
by side::

    .venv/bin/python -m benchmarks.host_wait_depth [--old /tmp/wt-old]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.deep_nesting import deep_chain, deep_stacks

REPO = Path(__file__).resolve().parent.parent
MB = 10**6

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


def measure(code: Path, trace: Path, work: Path) -> tuple[float, int]:
    """(wall s, peak RSS bytes) of the JSON report of ``trace`` with the code at ``code``."""
    peak = work / "peak"
    env = {**os.environ, "PYTHONPATH": str(code)}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _MEASURED, str(peak), "report", str(trace),
                        "-f", "json"], capture_output=True, text=True, cwd=code, env=env)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{code}: {r.stderr.strip()}")
    return wall, int(peak.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="another checkout to run beside this one")
    args = ap.parse_args()
    codes = [("this", REPO)] + ([("old", args.old.resolve())] if args.old else [])
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("| shape | MB | bound MB (1.5 × file + 200) | code | wall s | peak RSS MB |")
        print("| --- | --- | --- | --- | --- | --- |")
        for shape, build in (("chain", deep_chain), ("stacks", deep_stacks)):
            trace = build().write(work / f"{shape}.json")
            size = trace.stat().st_size
            for name, code in codes:
                wall, peak = measure(code, trace, work)
                print(f"| {shape} | {size / MB:.1f} | {(1.5 * size + 200 * MB) / MB:.0f} | "
                      f"{name} | {wall:.1f} | {peak / MB:.0f} |", flush=True)


if __name__ == "__main__":
    main()
