"""Compare a mode's outputs with the eager reference, within the workload's tolerances.

The reference runs the workload's ``step`` eagerly, by default on float64 copies of the
inputs. Elementwise rule (as :func:`torch.allclose`): ``|out - ref| <= atol + rtol * |ref|``,
NaNs equal only to NaNs. Errors are reported as absolute values and, for the relative error,
``|out - ref| / |ref|`` over elements whose ``|ref| > atol``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Correctness:
    """Outcome of one comparison; errors are the worst over all outputs."""

    ok: bool
    max_abs_err: float
    max_rel_err: float
    rtol: float
    atol: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the manifest's key names."""
        return asdict(self)


def to_reference_dtype(t: Any, float64: bool) -> Any:
    """A detached copy of ``t`` for the reference run (float64 when asked and ``t`` is floating)."""
    import torch

    copy = t.detach().clone()
    if float64 and copy.is_floating_point():
        copy = copy.to(torch.float64)
    if isinstance(t, torch.nn.Parameter):
        return torch.nn.Parameter(copy, requires_grad=t.requires_grad)
    return copy.requires_grad_(t.requires_grad)


def compare(
    outputs: tuple[Any, ...], reference: tuple[Any, ...], rtol: float, atol: float
) -> Correctness:
    """Compare two equal-length tuples of tensors element by element."""
    import torch

    if len(outputs) != len(reference):
        return Correctness(
            False, float("nan"), float("nan"), rtol, atol,
            f"{len(outputs)} outputs, reference has {len(reference)}",
        )
    ok, max_abs, max_rel, details = True, 0.0, 0.0, []
    for i, (out, ref) in enumerate(zip(outputs, reference, strict=True)):
        if out.shape != ref.shape:
            ok = False
            details.append(f"output {i}: shape {tuple(out.shape)} != {tuple(ref.shape)}")
            continue
        a = out.detach().to("cpu", torch.float64)
        b = ref.detach().to("cpu", torch.float64)
        nan_a, nan_b = torch.isnan(a), torch.isnan(b)
        if not torch.equal(nan_a, nan_b):
            ok = False
            details.append(f"output {i}: NaNs differ")
        keep = ~(nan_a | nan_b)
        err = (a - b).abs()[keep]
        mag = b.abs()[keep]
        if err.numel():
            max_abs = max(max_abs, float(err.max()))
            big = mag > atol
            if bool(big.any()):
                max_rel = max(max_rel, float((err[big] / mag[big]).max()))
            bad = int((err > atol + rtol * mag).sum())
            if bad:
                ok = False
                details.append(f"output {i}: {bad} of {err.numel()} elements out of tolerance")
    return Correctness(ok, max_abs, max_rel, rtol, atol, "; ".join(details))
