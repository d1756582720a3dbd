"""The calibration cells: pairs of workload files (A = old, B = new) that differ by one injected
effect of known size, and each cell's truth.

Single-process cells (``profile B --against A``), per step target ``T`` (µs; the base's
``m``, ``k`` and the effects' costs come from :mod:`benchmarks.calibration.probe`):

=============  ====================================  =========================================
cell           B differs from A by                   truth (per step)
=============  ====================================  =========================================
``host10``     a host busy-wait of 10 % of the step  host +X, X = 0.10 × the probe's base step
``host50``     … 50 %                                host +X (exact by construction)
``host200``    … 200 %                               host +X
``launches``   the tail in 8 ops instead of 1, ×R    host: the R tails' split − one, same GPU
``fused``      the tail's 9-op chain as 2 ops, ×R    host: the R tails' fused − chain (negative)
``gpu``        N more ``tanh(y @ w)`` rounds         GPU + N rounds' GPU time (CPU: their cost)
``sync``       ``y[0, 0].item()`` once per step      direction only (the wait depends on the
                                                     overlap it removes)
=============  ====================================  =========================================

The tail effects' truths are the probe's paired differences of the two forms' host time
within a loop of the step (``tail_split_minus_one_in_step``, ``tail_fused_minus_chain_in_step``:
:func:`benchmarks.calibration.probe.in_step_diff`); probes of before 2026-11-28 timed the forms
alone (``tail_split_minus_one``, ``tail_fused_minus_chain``, times ``R``; older still: the two
forms one after the other), which missed the steps' own cost of the same ops by up to 2×
(``docs/calibration.md``). ``R`` (:func:`tail_reps`, on the CPU): the tail runs ``R``
times on both sides, ``R`` the fewest repeats that make the effect's host cost at least
:data:`EFFECT_SHARE` of the base step. One tail's dispatch costs tens of µs: alone on a 20 ms
CPU step it is below any paired measurement's resolution (2026-11-28: +31.6 µs injected, CI ±1.2
ms), and a known answer must be larger than the instrument's noise for its size to be checked.
On CUDA ``R`` is 1: the paired host issue time resolves one tail's launches, and many more
launches into a GPU-bound step fill the launch queue, whose wait then lands in the host issue
time (2 × H200, ``R`` = 3 to 35 at 2 and 20 ms: Δhost issue 3 to 6.5 × the launches' cost;
``benchmarks/results/calibration-cuda-h200x2-2026-11-28b/``).

``N`` (:func:`extra_rounds`): 1 on CUDA, where a round's GPU time is resolved; on the CPU the
fewest rounds that reach :data:`EFFECT_SHARE` of the step in every mode (a compiled round cost
+2.8 µs on a 51.4 µs step and read inconclusive, 2026-11-28).

Distributed cells (``--nproc N``, two runs compared; :mod:`benchmarks.calibration.dist_steps`):
``straggler`` (rank 1's host +D per step), ``payload4`` (gradient payload ×4) and ``compute2``
(rank 1's MLP run twice).

Each side is written as a small file that sets a config and calls the step builder, so that
``profile`` loads it like any workload and the two sides of a pair differ only in the config.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Single-process effects, in table order.
EFFECTS = ("host10", "host50", "host200", "launches", "fused", "gpu", "sync")
#: Distributed effects, in table order.
DIST_EFFECTS = ("straggler", "payload4", "compute2")
#: Host busy-wait of the host cells, as a fraction of the base step.
HOST_FRACTIONS = {"host10": 0.10, "host50": 0.50, "host200": 2.00}
#: ``launches`` / ``fused``: the tail is repeated until the effect's host cost is at least this
#: share of the base step (:func:`tail_reps`).
EFFECT_SHARE = 0.10
#: Most repeats of the tail.
MAX_TAIL_REPS = 128
#: The repository root (the generated files put it on ``sys.path``).
REPO = Path(__file__).resolve().parents[2]
#: Distributed base per device: MLP width, layers, batch rows, payload floats, straggler delay.
DIST_BASE = {"cpu": {"width": 64, "layers": 2, "batch": 8, "payload": 1 << 16,
                     "straggler_ns": 2_000_000},
             "cuda": {"width": 1024, "layers": 4, "batch": 64, "payload": 1 << 22,
                      "straggler_ns": 1_000_000}}


@dataclass(frozen=True)
class Cell:
    """One pair: its name, effect, step target, both sides' configs and the injected truth.

    ``truth``: ``{"host_ns", "gpu_ns"}``, the effect's cost per step on the host and on the GPU
    (ns, signed; on the CPU the host is the device and ``gpu_ns`` is 0), or ``None`` where
    only the direction is known (``sync``, ``payload4``, ``compute2``). ``old_cost``: side A's
    step as the probe timed its parts alone (``k`` rounds plus A's tail; same keys), the
    scorer's fallback where a report lacks A's measured host issue or GPU busy; ``None``
    where the probe did not time them (distributed cells, a fixed probe).
    ``compiled_truth``: a ``gpu`` cell's truth in the compiled modes on the CPU, the probe's
    timing of one more round within a compiled function (``rep_compiled``; ``None`` where the
    probe lacks it): a compiled round is not dispatched op by op, so it costs the host other
    than the eager round that ``truth`` times. ``truth_how``: how the probe timed ``truth``
    where it differs from the effect's default (the tails timed within the step loop).
    ``truth_old_step_ns``: side A's host time per step in the probe's loop that timed
    ``truth`` (``old_step_host_ns``; ``None`` where ``truth`` was not timed in a step loop),
    against which the scorer compares the run's host speed."""

    name: str
    effect: str
    target_us: float
    nproc: int
    old: dict[str, Any]
    new: dict[str, Any]
    truth: dict[str, float] | None
    base_ns: float  # the probe's predicted base step (ns); distributed: 0 (not probed)
    notes: list[str] = field(default_factory=list)
    old_cost: dict[str, float] | None = None
    compiled_truth: dict[str, float] | None = None  # ``gpu`` on the CPU: the round compiled
    truth_how: str = ""  # how the probe timed ``truth``, where the effect's default differs
    truth_old_step_ns: float | None = None  # side A's step host time where ``truth`` was timed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _target_key(target_us: float) -> str:
    return str(float(target_us))


def tail_reps(effect_host_ns: float, base_ns: float) -> int:
    """The fewest repeats of a tail whose one-time host cost is ``effect_host_ns`` (signed)
    that reach :data:`EFFECT_SHARE` of the ``base_ns`` step (1 … :data:`MAX_TAIL_REPS`)."""
    if effect_host_ns == 0:
        return 1
    return max(1, min(MAX_TAIL_REPS, math.ceil(EFFECT_SHARE * base_ns / abs(effect_host_ns))))


def extra_rounds(eager_ns: float, compiled_ns: float | None, base_ns: float) -> int:
    """The ``gpu`` effect's extra rounds on the CPU: the fewest whose cost reaches
    :data:`EFFECT_SHARE` of the ``base_ns`` step in every mode, by the cheaper of a round's
    eager and compiled (``compiled_ns``, where probed) host costs (:func:`tail_reps`)."""
    cheapest = min(abs(eager_ns), abs(compiled_ns)) if compiled_ns is not None else eager_ns
    return tail_reps(cheapest, base_ns)


def single_cells(probe: dict[str, Any], targets_us: list[float],
                 effects: tuple[str, ...] = EFFECTS,
                 reps: int | None = None, extra: int | None = None) -> list[Cell]:
    """The single-process cells for ``targets_us`` from a probe record; ``reps``: the
    ``launches`` / ``fused`` tail repeats as a stored cell ran them (``None``: :func:`tail_reps`
    of the probe's costs); ``extra``: the ``gpu`` cell's extra rounds as a stored cell ran them
    (``None``: :func:`extra_rounds` on the CPU, 1 on CUDA)."""
    cells = []
    cpu = probe.get("device") == "cpu"
    for target in targets_us:
        key = _target_key(target)
        base = probe["bases"][key]
        costs = probe["effects"][key]
        a = {"m": base["m"], "k": base["k"], "tail": "one"}
        for effect in effects:
            old, new = dict(a), dict(a)
            truth: dict[str, float] | None
            compiled: dict[str, float] | None = None
            how = ""
            ref: float | None = None
            if effect in HOST_FRACTIONS:
                x = round(HOST_FRACTIONS[effect] * base["predicted_ns"])
                new["spin_ns"] = x
                truth = {"host_ns": float(x), "gpu_ns": 0.0}
            elif effect in ("launches", "fused"):
                forms = ("one", "split") if effect == "launches" else ("chain", "fused")
                old["tail"], new["tail"] = forms
                effect_key = f"tail_{forms[1]}_minus_{forms[0]}"
                one = costs.get(effect_key) or _diff(
                    costs[f"tail_{forms[1]}"], costs[f"tail_{forms[0]}"])
                r = reps if reps is not None else (
                    tail_reps(one["host_ns"], base["predicted_ns"]) if cpu else 1)
                old["tail_reps"] = new["tail_reps"] = r
                in_step = costs.get(f"{effect_key}_in_step")
                if in_step is not None and int(in_step["reps"]) == r:
                    truth = {"host_ns": in_step["host_ns"], "gpu_ns": in_step["gpu_ns"]}
                    how = "probe: the tail forms timed within the step loop"
                    ref = in_step.get("old_step_host_ns")
                else:
                    truth = {key: r * value for key, value in one.items()}
            elif effect == "gpu":
                compiled = costs.get("rep_compiled")
                n = extra if extra is not None else (
                    extra_rounds(costs["rep"]["host_ns"],
                                 compiled["host_ns"] if compiled else None,
                                 base["predicted_ns"]) if cpu else 1)
                new["extra_rep"] = True if n == 1 else n  # one round: as stored cells ran
                truth = {key: n * value for key, value in costs["rep"].items()}
                compiled = {key: n * value for key, value in compiled.items()} if compiled \
                    else None
            elif effect == "sync":
                new["sync"] = True
                truth = None
            else:
                raise ValueError(f"unknown effect {effect!r}")
            name = f"{effect}-{_us(target)}"
            cells.append(Cell(name, effect, float(target), 1, {**old, "name": f"{name} A"},
                              {**new, "name": f"{name} B"}, truth,
                              float(base["predicted_ns"]),
                              old_cost=_old_cost(costs, base["k"], old["tail"],
                                                 int(old.get("tail_reps", 1))),
                              compiled_truth=compiled,
                              truth_how=how, truth_old_step_ns=ref))
    return cells


def _old_cost(costs: dict[str, dict[str, float]], k: int, form: str,
              reps: int = 1) -> dict[str, float] | None:
    """Side A's step from the probe's parts: ``k`` rounds plus ``reps`` times the ``form`` tail
    (``None`` where the probe lacks either)."""
    rep, tail = costs.get("rep"), costs.get(f"tail_{form}")
    if rep is None or tail is None:
        return None
    return {key: k * rep[key] + reps * tail[key] for key in ("host_ns", "gpu_ns")}


def rebuilt(record_cells: list[dict[str, Any]], probe: dict[str, Any] | None,
            device: str) -> list[Cell]:
    """The stored cells of a results record built again by the current code (the same names,
    effects and targets; the truths and costs from the stored ``probe``), so a change to a
    truth model applies to stored measurements."""
    out = []
    for c in record_cells:
        if c["nproc"] > 1:
            out += dist_cells(device, (c["effect"],), int(c["nproc"]))
        else:
            assert probe is not None, "single-process results without their probe"
            out += single_cells(probe, [c["target_us"]], (c["effect"],),
                                reps=int(c["new"].get("tail_reps", 1)),
                                extra=int(c["new"].get("extra_rep", 1)))
    return out


def dist_cells(device: str, effects: tuple[str, ...] = DIST_EFFECTS,
               nproc: int = 2) -> list[Cell]:
    """The distributed cells on ``device`` with ``nproc`` ranks (named ``<effect>-nproc<N>``;
    the straggler and compute effects slow rank :data:`~benchmarks.calibration.dist_steps.
    SLOW_RANK` alone whatever ``nproc``)."""
    base = dict(DIST_BASE[device])
    delay = base.pop("straggler_ns")
    cells = []
    for effect in effects:
        old, new = dict(base), dict(base)
        truth: dict[str, float] | None = None
        if effect == "straggler":
            new["straggler_ns"] = delay
            truth = {"host_ns": float(delay), "gpu_ns": 0.0}
        elif effect == "payload4":
            new["payload"] = 4 * base["payload"]
        elif effect == "compute2":
            new["compute_x"] = 2
        else:
            raise ValueError(f"unknown distributed effect {effect!r}")
        name = f"{effect}-nproc{nproc}"
        cells.append(Cell(name, effect, 0.0, nproc, {**old, "name": f"{name} A"},
                          {**new, "name": f"{name} B"}, truth, 0.0))
    return cells


def _diff(new: dict[str, float], old: dict[str, float]) -> dict[str, float]:
    return {"host_ns": new["host_ns"] - old["host_ns"], "gpu_ns": new["gpu_ns"] - old["gpu_ns"]}


def _us(target_us: float) -> str:
    return f"{target_us / 1000:g}ms" if target_us >= 1000 else f"{target_us:g}us"


def write_workload(path: Path, config: dict[str, Any], title: str,
                   module: str = "steps") -> Path:
    """Write a workload file at ``path`` that holds only ``config`` and calls
    ``benchmarks.calibration.<module>.build`` on it (``title``: its docstring); return
    ``path``."""
    path.write_text(
        f'"""{title}"""\n\n'
        "import json\nimport sys\n\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        f"from benchmarks.calibration.{module} import build  # noqa: E402\n\n"
        f"globals().update(build(json.loads({json.dumps(json.dumps(config))})))\n")
    return path


def write_pair(cell: Cell, folder: Path) -> tuple[Path, Path]:
    """Write the cell's two workload files into ``folder``; return (A, B)."""
    folder.mkdir(parents=True, exist_ok=True)
    module = "dist_steps" if cell.nproc > 1 else "steps"
    a, b = (write_workload(folder / f"{cell.name.replace('-', '_')}_{side}.py", config,
                           f"Calibration cell {cell.name}, side {side.upper()} "
                           "(generated by benchmarks/calibration/run.py).", module)
            for side, config in (("a", cell.old), ("b", cell.new)))
    return a, b
