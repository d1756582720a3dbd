"""One Markdown line of facts about a committed run directory, for ``docs/gallery.md``.

``python scripts/gallery_facts.py RUN_DIR`` prints the eager kernels per step and, per mode,
the paired speed-up with its speed verdict and the launch verdict, as ``traceviz report RUN_DIR
--format json`` gives them (the real CLI, in a subprocess), so the gallery's numbers come
from the committed data (``scripts/docs_outputs.py`` regenerates the block).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def facts(doc: dict[str, Any], run: str) -> str:
    """The facts line of a comparison report's JSON document ``doc`` of ``run``."""
    eager = next((r for r in doc["rows"] if r["mode"] == "eager"), None)
    verdicts: dict[str, dict[str, Any]] = {}
    for v in doc["verdicts"]:
        verdicts.setdefault(v["mode"], {})[v["kind"]] = v
    parts = []
    for mode, kinds in verdicts.items():
        speed, launch = kinds.get("speed"), kinds.get("launch")
        x = ((speed or {}).get("evidence") or {}).get("speedup")
        shown = f"{x:.2f}×" if isinstance(x, (int, float)) else "–"
        parts.append(f"`{mode}` {shown} (speed {speed['status'] if speed else '–'}, launch "
                     f"{launch['status'] if launch else '–'})")
    kernels = (f"eager {eager['kernels']:.0f} kernels per step; "
               if eager and isinstance(eager.get("kernels"), (int, float)) else "")
    return f"*From `{run}`:* {kernels}{'; '.join(parts)}."


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python scripts/gallery_facts.py RUN_DIR", file=sys.stderr)
        return 2
    done = subprocess.run([sys.executable, "-m", "traceviz", "report", args[0], "--format",
                           "json"], capture_output=True, text=True, check=True)
    print(facts(json.loads(done.stdout), args[0].rstrip("/")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
