"""The simulated calibrations of the verdicts, recorded once and rendered for the docs.

``tests/calibration.py`` (the paired speed rule), ``tests/split_calibration.py`` (the launch and
fusion verdicts on the unprofiled split) and ``tests/run_calibration.py`` (the two-run verdict)
are seeded simulations that take tens of seconds together; ``docs/comparison.md`` quotes their
rates. So they run once into a committed record and the page's tables and sentences are
rendered from it (``scripts/docs_outputs.py`` stays fast and needs no simulation):

* ``python -m scripts.calibration_facts record OUT``: run the three and write OUT (JSON: each
  simulation's parameters, as its module defines them, and per scenario the share of trials
  per status, 0–1);
* ``speed-table FILE`` / ``split-table FILE`` / ``run-table FILE``: the page's Markdown tables;
* ``json FILE``: the record with each rate also as a percentage (``*_pct`` beside each status
  mapping, ``{"WIN": 99.5, …}``), for the ``json-format`` filter's sentences.

``tests/test_docs_calibration_record.py`` checks that the record's parameters and scenarios are
the modules' (rerun ``record`` when a simulation changes: the rates are not re-checked there).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

#: What each speed scenario's test requires of it (``tests/test_speed_calibration.py``).
SPEED_REQUIRED = {
    "identical, 30 % spread": "WIN + REGRESSION ≤ 5 %",
    "true 1.15x speed-up": "WIN ≥ 90 % within 100 pairs",
    "identical, 20 % drift, ABBA": "no false WIN (≤ 5 %)",
    "identical, 20 % drift, ABBA, 100 pairs": "(not asserted)",
    "identical, 20 % drift, unpaired (mode first)":
        "contrast: ≥ 50 % asserted, showing the drift matters",
}
#: What each split scenario's test requires of it (``tests/test_split_calibration.py``).
SPLIT_REQUIRED = (
    "launch WIN ≥ 95 %, fusion never WIN",
    "launch WIN ≥ 95 %",
    "fusion WIN ≥ 95 %, launch NO_WIN ≥ 95 %",
    "WIN ≤ 5 % for both",
    "WIN ≤ 5 % for both",
)
#: What each two-run scenario's test requires of it (``tests/test_run_calibration.py``).
RUN_REQUIRED = (
    "unchanged ≥ 95 % for every mode, never faster / slower",
    "slower ≥ 90 %",
    "(not asserted)",
    "(not asserted)",
    "(not asserted)",
)
SPEED_STATUSES = ("WIN", "REGRESSION", "NO_WIN", "INCONCLUSIVE")


def _shares(counts: Counter[str], n: int) -> dict[str, float]:
    return {k: v / n for k, v in sorted(counts.items())}


def speed_record() -> dict[str, Any]:
    """The paired speed rule's calibration (:mod:`tests.calibration`)."""
    import numpy as np

    from tests import calibration as c

    scenarios = []
    for name, kw in c.SCENARIOS.items():
        o = c.scenario(**kw)  # type: ignore[arg-type]
        scenarios.append({
            "name": name, **kw, "rates": {s: o.rate(s) for s in SPEED_STATUSES},
            "median_speedup": float(np.median(o.speedups)),
            "pairs_median": int(np.median(o.pairs)), "pairs_max": int(o.pairs.max())})
    block_spread = float(2 * np.sinh(c.SIGMA_30 * c.Z90))  # p10–p90 over the median
    return {"sigma": c.SIGMA_30, "block_spread": block_spread, "min_pairs": c.MIN_PAIRS,
            "step_pairs": c.STEP_PAIRS,
            "max_pairs": c.MAX_PAIRS, "target_half_width": c.TARGET_HALF_WIDTH,
            "min_speedup": c.MIN_SPEEDUP, "scenarios": scenarios}


def split_record() -> dict[str, Any]:
    """The split verdicts' calibration (:mod:`tests.split_calibration`)."""
    from dataclasses import asdict

    from tests import split_calibration as c

    scenarios = []
    for s in c.SCENARIOS:
        launch, fusion = c.run(s)
        scenarios.append({"name": s.name, "seed": s.seed, "trials": s.trials,
                          "baseline": asdict(s.baseline), "mode": asdict(s.mode),
                          "launch": _shares(launch, s.trials),
                          "fusion": _shares(fusion, s.trials)})
    lean = c._inputs("eager", c.SCENARIOS[0].baseline)  # the lean-trace inputs' busy spread
    return {"iters": c.ITERS, "max_pairs": c.MAX_PAIRS,
            "busy_spread": lean.busy_spread_ns / lean.gpu_busy_ns, "scenarios": scenarios}


def run_record() -> dict[str, Any]:
    """The two-run verdict's calibration (:mod:`tests.run_calibration`)."""
    from tests import run_calibration as c

    scenarios = []
    for s in c.SCENARIOS:
        res = c.run_scenario(s)
        others = sum((v for m, v in res.items() if m != "m0"), Counter())
        scenarios.append({"name": s.name, "block_spread": s.block_spread,
                          "process_spread": s.process_spread, "slowdown": s.slowdown,
                          "m0": _shares(res["m0"], c.TRIALS),
                          "others": _shares(others, sum(others.values()))})
    return {"modes": c.MODES, "pairs": c.PAIRS, "trials": c.TRIALS,
            "min_speedup": c.MIN_SPEEDUP, "scenarios": scenarios}


def record() -> dict[str, Any]:
    """All three calibrations, as ``record`` writes them."""
    return {"generated_by": "python -m scripts.calibration_facts record OUT",
            "speed": speed_record(), "split": split_record(), "run": run_record()}


def _pct(value: float) -> str:
    return "100 %" if value == 1 else f"{value * 100:.1f} %"


def _statuses(shares: dict[str, float]) -> str:
    """``WIN 100 %`` or ``INCONCLUSIVE 99.0 %, WIN 0.5 %``: the statuses seen, most first."""
    ordered = sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {_pct(v)}" for k, v in ordered if v)


def _speed_label(s: dict[str, Any], sigma_spread: float, max_pairs: int) -> str:
    if not s.get("drift"):
        return (f"identical modes, {sigma_spread:.0%} spread".replace("%", " %")
                if s["speedup"] == 1 else f"true {s['speedup']}× speed-up, same noise")
    order = ("**unpaired** (mode blocks first, then baseline)" if s.get("sequential")
             else "ABBA")
    pairs = "" if s.get("adaptive", True) or s.get("sequential") else f", always {max_pairs} pairs"
    return f"identical, {s['drift']:.0%} drift, {order}{pairs}".replace("%", " %")


def speed_table(doc: dict[str, Any]) -> list[str]:
    """The speed rule's rates per scenario (the record's ``speed``)."""
    sp = doc["speed"]
    lines = ["| scenario | WIN | REGRESSION | NO_WIN | INCONCLUSIVE | median speed-up | "
             "pairs (median) | required |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for s in sp["scenarios"]:
        rates = " | ".join(f"{s['rates'][k] * 100:.1f} %" for k in SPEED_STATUSES)
        label = _speed_label(s, sp["block_spread"], sp["max_pairs"])
        lines.append(f"| {label} | {rates} | {s['median_speedup']:.3f} | {s['pairs_median']} | "
                     f"{SPEED_REQUIRED[s['name']]} |")
    return lines


def split_table(doc: dict[str, Any]) -> list[str]:
    """The launch and fusion verdicts' rates per scenario (the record's ``split``)."""
    lines = ["| scenario (H, G in ms per step; kernels per step) | launch | fusion | required |",
             "| --- | --- | --- | --- |"]
    for s, required in zip(doc["split"]["scenarios"], SPLIT_REQUIRED, strict=True):
        b, m = s["baseline"], s["mode"]
        sides = (f"baseline ({b['host_ms']}, {b['gpu_ms']}; {b['kernels']}), mode "
                 f"({m['host_ms']}, {m['gpu_ms']}; {m['kernels']})")
        lines.append(f"| {s['name']}: {sides} | "
                     f"{_statuses(s['launch'])} | {_statuses(s['fusion'])} | {required} |")
    return lines


def run_table(doc: dict[str, Any]) -> list[str]:
    """The two-run verdict's rates per scenario (the record's ``run``)."""
    lines = ["| scenario | the changed mode (m0) | the other six modes and eager | required |",
             "| --- | --- | --- | --- |"]
    for s, required in zip(doc["run"]["scenarios"], RUN_REQUIRED, strict=True):
        lines.append(f"| {s['name']} | {_statuses(s['m0'])} | {_statuses(s['others'])} | "
                     f"{required} |")
    return lines


def with_percentages(value: Any) -> Any:
    """``value`` with ``K_pct`` (percent, 0–100) beside each mapping ``K`` of status shares and
    each field ``K`` that is a fraction of one (``*_spread``, ``target_half_width``,
    ``min_speedup``, ``drift``), and ``slowdown_pct`` (how much slower, percent) beside a
    ``slowdown`` factor."""
    if isinstance(value, list):
        return [with_percentages(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: with_percentages(v) for k, v in value.items()}
    for k, v in value.items():
        if isinstance(v, dict) and v and all(isinstance(x, float) for x in v.values()):
            out[f"{k}_pct"] = {s: x * 100 for s, x in v.items()}
        elif k.endswith("_spread") or k in ("target_half_width", "min_speedup", "drift"):
            out[f"{k}_pct"] = v * 100
        elif k == "slowdown":
            out["slowdown_pct"] = (v - 1) * 100
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("record", "speed-table", "split-table", "run-table",
                                          "json"):
        print(__doc__, file=sys.stderr)
        return 2
    command, path = args
    if command == "record":
        Path(path).write_text(json.dumps(record(), indent=1) + "\n", encoding="utf-8")
        return 0
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if command == "json":
        print(json.dumps(with_percentages(doc)))
        return 0
    table = {"speed-table": speed_table, "split-table": split_table, "run-table": run_table}
    print("\n".join(table[command](doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
