"""Run a ``traceviz`` command on the test suite's edited copy of ``reports/rmsnorm_residual``.

``python -m scripts.edited_run compare reports/rmsnorm_residual B -f md`` builds run B as
``tests/test_run_compare.py::_rms_b`` does (torch version changed, ``compile``'s paired blocks
× 1.2, its Triton kernel renamed ``…_rsqrt_0`` → ``…_rsqrt_7``, a graph break added to
``max-autotune``, ``reduce-overhead``'s outputs marked wrong) in a temporary folder, runs
``traceviz`` with the word ``B`` standing for it, prints the output with the folder shown as
``B`` and exits with the command's status. ``scripts/docs_outputs.py`` uses it for the edited-run
examples of docs/comparison.md, so they are regenerated from the committed run, not typed in.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tests.test_run_compare import _rms_b

ROOT = Path(__file__).resolve().parents[1]


def main(args: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="edited_run.") as tmp:
        run = _rms_b(Path(tmp))
        argv = [str(run) if a == "B" else a for a in args]
        proc = subprocess.run([sys.executable, "-m", "traceviz", *argv], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              check=False)
        sys.stdout.write(proc.stdout.replace(str(run), "B"))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
