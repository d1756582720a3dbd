"""Load a workload file by path and check its interface.

A workload is a plain Python file that defines, at module level:

``DESCRIPTION: str``
    One line saying what the step does.
``make_inputs(device: torch.device) -> tuple[torch.Tensor, ...]``
    The step's inputs on ``device``. traceviz seeds torch's RNG before each call, so two calls
    give equal tensors. Stateful workloads (caches, parameters, optimizer state) return that state
    here too, as tensors the step updates in place.
``step(*inputs) -> torch.Tensor | tuple[torch.Tensor, ...]``
    One step over explicit tensors. traceviz, not the workload, applies eager / torch.compile /
    CUDA graphs to it.

Optional:

``triton_step(*inputs)``
    A hand-written Triton implementation of the same step (used by the ``triton`` mode).
``RTOL: float``, ``ATOL: float``
    Output tolerances against the reference (defaults 1e-4 and 1e-5).
``STATIC_INPUTS: tuple[int, ...]``
    Indices of inputs that are state the step updates in place (KV caches, parameters,
    optimizer buffers). The manual ``cudagraph`` mode captures them in place instead of copying
    them in each step, and the cudagraph-tree modes mark them with
    ``torch._dynamo.mark_static_address`` (default: none).
``FLOAT64_REFERENCE: bool``
    Compute the reference by running ``step`` eagerly on float64 copies of the inputs (default
    True); set False where float64 makes no sense, then the reference is eager at the inputs' own
    dtypes.

Importing the file imports torch (the workload does), so this module is used only in the child
processes of :mod:`traceviz.collect.child`.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


class WorkloadError(ValueError):
    """The workload file is missing, does not import, or does not have the interface."""


@dataclass(frozen=True)
class Workload:
    """A loaded, validated workload file."""

    path: Path
    name: str
    description: str
    make_inputs: Callable[[Any], tuple[Any, ...]]
    step: Callable[..., Any]
    triton_step: Callable[..., Any] | None
    rtol: float
    atol: float
    float64_reference: bool
    static_inputs: tuple[int, ...]


def _module_from_path(path: Path, alias: str = "") -> ModuleType:
    """Import ``path`` as a fresh module named ``traceviz_workload_<stem>`` (with ``alias``:
    ``traceviz_workload_<alias>_<stem>``, so two versions of one file load side by side)."""
    name = f"traceviz_workload_{alias + '_' if alias else ''}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{path}: not importable as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise WorkloadError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from exc
    return module


def _number(module: ModuleType, attr: str, default: float, path: Path) -> float:
    value = getattr(module, attr, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise WorkloadError(f"{path}: {attr} must be a non-negative number, got {value!r}")
    return float(value)


def load_workload(path: str | Path, alias: str = "") -> Workload:
    """Import the workload file at ``path`` and validate its interface (``alias``: see
    :func:`_module_from_path`).

    Raises :class:`WorkloadError` with a message that names the file and what is wrong.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise WorkloadError(f"{path}: no such workload file")
    if path.suffix != ".py":
        raise WorkloadError(f"{path}: a workload is a .py file")
    module = _module_from_path(path, alias)
    problems = []
    description = getattr(module, "DESCRIPTION", None)
    if not isinstance(description, str) or not description.strip():
        problems.append("DESCRIPTION (a one-line str) is missing or empty")
    elif "\n" in description.strip():
        problems.append("DESCRIPTION must be one line")
    for attr in ("make_inputs", "step"):
        if not callable(getattr(module, attr, None)):
            problems.append(f"{attr}() is missing or not callable")
    triton_step = getattr(module, "triton_step", None)
    if triton_step is not None and not callable(triton_step):
        problems.append("triton_step must be callable when present")
    float64_reference = getattr(module, "FLOAT64_REFERENCE", True)
    if not isinstance(float64_reference, bool):
        problems.append("FLOAT64_REFERENCE must be True or False")
    static_inputs = getattr(module, "STATIC_INPUTS", ())
    if not isinstance(static_inputs, (tuple, list)) or not all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in static_inputs
    ):
        problems.append("STATIC_INPUTS must be a tuple of input indices")
    if problems:
        raise WorkloadError(f"{path}: " + "; ".join(problems))
    return Workload(
        path=path,
        name=path.stem,
        description=description.strip(),
        make_inputs=module.make_inputs,
        step=module.step,
        triton_step=triton_step,
        rtol=_number(module, "RTOL", DEFAULT_RTOL, path),
        atol=_number(module, "ATOL", DEFAULT_ATOL, path),
        float64_reference=float64_reference,
        static_inputs=tuple(static_inputs),
    )
