"""Category ``manifests``: a run directory's ``manifest.json`` tampered with, through
``report RUN``, ``compare BASE RUN``, ``check RUN --against BASE`` and
``check RUN --expect compile:speed=WIN``.

The run (:func:`~.fixtures.paired_run`) has eager and compile, compile with a paired block
recording 1.22× (95 % CI 1.19–1.23) and block times consistent with it; BASE is an untouched
copy. Tampers that change a number the verdicts use without making the manifest unreadable
(the speed-up, the CI, the block times, the pair count, the step-time median) are silently
wrong unless named; structural damage (missing keys, wrong types, unknown schema, not JSON) must
end cleanly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.adversarial import fixtures as fx
from benchmarks.adversarial.expect import names
from benchmarks.adversarial.harness import Case, Plan, Step, Verdict

CATEGORY = "manifests"
Tamper = Callable[[dict[str, Any]], Any]  # edits the manifest in place (or returns a new one)

COMMANDS: dict[str, tuple[str, ...]] = {
    "report": ("report", "run", "-f", "json"),
    "compare": ("compare", "base", "run", "-f", "json"),
    "check-against": ("check", "run", "--against", "base"),
    "check-expect": ("check", "run", "--expect", "compile:speed=WIN"),
}
SPEEDUP = r"speed-?up|paired"
CI = r"\bCI\b|ci_low|ci_high|confiden|interval|bound"
BLOCKS = r"block|pairs?\b|paired"
MEDIAN = r"median|timing|step time"


def _paired(m: dict[str, Any]) -> dict[str, Any]:
    return m["modes"]["compile"]["paired"]


def _set(path: tuple[str, ...], value: Any, m: dict[str, Any]) -> None:
    """``m[path[0]][path[1]]… = value`` (the last key created if missing)."""
    d = m
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


def _delete(path: tuple[str, ...], m: dict[str, Any]) -> None:
    d = m
    for k in path[:-1]:
        d = d[k]
    del d[path[-1]]


def _swap_ci(m: dict[str, Any]) -> None:
    p = _paired(m)
    p["ci_low"], p["ci_high"] = p["ci_high"], p["ci_low"]


def _blocks(value: Callable[[list[float]], list[Any]], which: str, m: dict[str, Any]) -> None:
    p = _paired(m)
    for key in ("baseline_block_ms", "mode_block_ms"):
        if which in (key, "both"):
            p[key] = value(p[key])


def _replace(new: Any, _m: dict[str, Any]) -> Any:
    return new


PAIRED = ("modes", "compile", "paired")
#: label → (tamper, regex naming the problem or None when the damage is structural)
TAMPERS: dict[str, tuple[Tamper, str | None]] = {
    "speedup-edited": (partial(_set, (*PAIRED, "speedup"), 5.0), SPEEDUP),
    "speedup-infinite": (partial(_set, (*PAIRED, "speedup"), float("inf")), SPEEDUP),
    "speedup-negative": (partial(_set, (*PAIRED, "speedup"), -1.22), SPEEDUP),
    "speedup-string": (partial(_set, (*PAIRED, "speedup"), "1.22"), SPEEDUP),
    "ci-swapped": (_swap_ci, CI),
    "ci-excludes-speedup": (lambda m: _paired(m).update(ci_low=1.30, ci_high=1.40), CI),
    "blocks-zeros": (partial(_blocks, lambda b: [0.0] * len(b), "both"), BLOCKS),
    "blocks-negative": (partial(_blocks, lambda b: [-x for x in b], "mode_block_ms"), BLOCKS),
    "blocks-nan": (partial(_blocks, lambda b: [float("nan")] * len(b), "baseline_block_ms"),
                   BLOCKS),
    "blocks-strings": (partial(_blocks, lambda b: [str(x) for x in b], "both"), BLOCKS),
    "blocks-unequal": (partial(_blocks, lambda b: b[:-3], "mode_block_ms"), BLOCKS),
    "blocks-empty": (partial(_blocks, lambda b: [], "both"), BLOCKS),
    "blocks-missing": (partial(_delete, (*PAIRED, "baseline_block_ms")), BLOCKS),
    "pairs-mismatch": (partial(_set, (*PAIRED, "pairs"), 99), BLOCKS),
    "median-negative": (partial(_set, ("modes", "compile", "timing", "median_ms"), -0.41),
                        MEDIAN),
    "median-zero": (partial(_set, ("modes", "compile", "timing", "median_ms"), 0.0), MEDIAN),
    "median-string": (partial(_set, ("modes", "eager", "timing", "median_ms"), "fast"), None),
    "paired-not-object": (partial(_set, PAIRED, "fast"), None),
    "modes-list": (partial(_set, ("modes",), []), None),
    "modes-missing": (partial(_delete, ("modes",)), None),
    "mode-entry-null": (partial(_set, ("modes", "compile"), None), None),
    "schema-missing": (partial(_delete, ("schema",)), None),
    "schema-unknown": (partial(_set, ("schema",), 99), None),
    "schema-string": (partial(_set, ("schema",), "two"), None),
    "status-unknown": (partial(_set, ("modes", "compile", "status"), "exploded"), None),
    "trace-missing": (partial(_set, ("modes", "compile", "profiled", "trace"),
                              "nope.pt.trace.json.gz"), None),
    "trace-is-directory": (partial(_set, ("modes", "compile", "profiled", "trace"), "."), None),
    "steps-string": (partial(_set, ("modes", "compile", "profiled", "steps"), "4"), None),
    "document-array": (partial(_replace, []), None),
    "document-null": (partial(_replace, None), None),
}


def _build(tamper: Tamper, command: str, verdict: Verdict | None, root: Path) -> Plan:
    w = root / "work"
    fx.paired_run(w / "base")
    fx.paired_run(w / "run")
    path = w / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    new = tamper(manifest)
    path.write_text(json.dumps(manifest if new is None else new, indent=1))  # NaN, Infinity raw
    return Plan([Step(COMMANDS[command])], named=verdict)


def _not_json(root: Path, command: str) -> Plan:
    w = root / "work"
    fx.paired_run(w / "base")
    fx.paired_run(w / "run")
    (w / "run" / "manifest.json").write_text('{"schema": 2, "modes": {')
    return Plan([Step(COMMANDS[command])])


def cases() -> list[Case]:
    out = []
    for label, (tamper, problem) in TAMPERS.items():
        verdict = names(problem) if problem else None
        for command in COMMANDS:
            out.append(Case(f"{CATEGORY}/{label}/{command}", CATEGORY,
                            partial(_build, tamper, command, verdict),
                            silently_wrong=f"manifest {label}" if problem else None))
    for command in COMMANDS:
        out.append(Case(f"{CATEGORY}/document-not-json/{command}", CATEGORY,
                        partial(_not_json, command=command)))
    return out
