"""The recorded test-suite timings of ``docs/guide.md``, from a committed record.

``python scripts/suite_facts.py RECORD.json`` prints, per recorded run, the command and
pytest's summary line (passed, skipped, seconds and h:mm:ss, as pytest writes it), from a
results file such as ``benchmarks/results/2026-11-27-test-tiers-vm.json``: ``runs[]`` of
``command`` (``null``: a later tier of the command above, printed as ``[test] the TIER tier``),
``tier``, ``passed``, ``skipped`` and ``seconds`` (wall time of the pytest session, s), with
the record's ``date`` and ``machine``. ``scripts/docs_outputs.py`` regenerates the block.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def summary(run: dict[str, Any]) -> str:
    """pytest's last line for one run: ``N passed, M skipped in S.SSs (H:MM:SS)``."""
    seconds = float(run["seconds"])
    whole = int(seconds)  # pytest truncates
    counts = [f"{run['passed']} passed"] + ([f"{run['skipped']} skipped"] if run["skipped"]
                                            else [])
    return (f"{', '.join(counts)} in {seconds:.2f}s "
            f"({whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d})")


def transcript(record: dict[str, Any]) -> list[str]:
    """The block's lines: where and when, then each run's command and summary."""
    lines = [f"# {record['date']}, {record['machine']}"]
    for run in record["runs"]:
        lines.append(f"$ {run['command']}" if run["command"]
                     else f"[test] the {run['tier']} tier, alone on the machine")
        lines.append(summary(run))
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python scripts/suite_facts.py RECORD.json", file=sys.stderr)
        return 2
    print("\n".join(transcript(json.loads(Path(args[0]).read_text(encoding="utf-8")))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
