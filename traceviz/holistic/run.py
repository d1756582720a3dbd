"""Run Holistic Trace Analysis (the ``hta`` package, from ``traceinsight``) on one trace file.

``hta`` is imported inside :func:`run_hta` only. HTA wants a directory of per-rank files; the
trace is linked into a temporary directory under a name whose suffix matches its bytes
(``.json.gz`` when gzip-compressed), and HTA is told the rank explicitly (its own rank sniffing
is a regex over the raw text that falls back to 0). Each analysis runs in its own
``try``/``except``; a failure becomes an entry of :attr:`HtaResult.errors`, never an exception.

Times are HTA's microseconds (see :mod:`traceviz.holistic.result`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from traceviz.errors import TracevizError
from traceviz.holistic.notes import Totals, definition_notes
from traceviz.holistic.result import HtaResult
from traceviz.lazy import pandas as pd
from traceviz.trace.source import GZIP_MAGIC, read_trace_bytes
from traceviz.vocab import CATEGORY_BY_NAME, Category

#: HTA's default outlier cut-offs for its launch statistics, in µs (``runtime_cutoff``,
#: ``launch_delay_cutoff`` of ``TraceAnalysis.get_cuda_kernel_launch_stats``).
RUNTIME_CUTOFF_US = 50
LAUNCH_DELAY_CUTOFF_US = 100
#: Passed to HTA's ``TraceAnalysis``: keep the last ProfilerStep (HTA drops it by default).
INCLUDE_LAST_STEP = True
#: The category of the CPU-side step annotations (their GPU-timeline copies are
#: ``gpu_user_annotation``).
CPU_STEP_CATEGORY = "user_annotation"
#: HTA's annotation prefix for training steps (``critical_path_analysis(annotation=...)``).
STEP_ANNOTATION = "ProfilerStep"

_GPU_OP_CATEGORIES = {
    Category.KERNEL: "kernel",
    Category.GPU_MEMCPY: "gpu_memcpy",
    Category.GPU_MEMSET: "gpu_memset",
}
_LAUNCH_CATEGORIES = (Category.CUDA_RUNTIME, Category.CUDA_DRIVER)


class _Header(msgspec.Struct):
    """The one top-level key :func:`read_rank` needs; msgspec skips everything else."""

    distributedInfo: dict[str, Any] | None = None  # the trace's own key


def hta_available() -> bool:
    """True when the ``hta`` package can be imported (checked without importing it)."""
    import importlib.util

    return importlib.util.find_spec("hta") is not None


def read_rank(trace_path: str | Path) -> int | None:
    """The trace's ``distributedInfo.rank``, or None when absent or unreadable."""
    try:
        data, _, _ = read_trace_bytes(trace_path)
        header = msgspec.json.decode(data, type=_Header)
    except (msgspec.DecodeError, msgspec.ValidationError, TracevizError):
        return None
    rank = (header.distributedInfo or {}).get("rank")
    return rank if isinstance(rank, int) and not isinstance(rank, bool) else None


def run_hta(
    trace_path: str | Path,
    rank: int | None = None,
    totals: Totals | None = None,
    traceviz_overlap: float | None = None,
) -> HtaResult:
    """Run HTA's temporal breakdown, idle time breakdown, kernel launch statistics and
    critical path (one step, single rank) on one trace file.

    Args:
        trace_path: a Kineto trace (``.json`` or gzip, any suffix).
        rank: the rank to give HTA; None reads ``distributedInfo.rank`` (0 when absent, as
            HTA itself would).
        totals: traceviz's ``Analysis.totals`` for the same trace, to phrase the notes on
            definition differences with both sides' numbers (optional).
        traceviz_overlap: traceviz's communication/computation overlap share of this rank
            (:func:`traceviz.analyze.distributed.overlap.transfer_overlap_share`, 0–1), when
            the run's other ranks were analysed, for the overlap note (optional).

    Returns:
        An :class:`HtaResult`; HTA errors are recorded in it, not raised.
    """
    path = Path(trace_path)
    if rank is not None:
        rank_source = "argument"
    else:
        rank = read_rank(path)
        rank_source = "distributedInfo.rank"
        if rank is None:
            rank, rank_source = 0, "none in trace: HTA's default 0"
    base = {"trace_path": str(trace_path), "rank": rank, "rank_source": rank_source}
    if not hta_available():
        return HtaResult(
            hta_version=None,
            ns_rounding_disabled=False,
            include_last_profiler_step=INCLUDE_LAST_STEP,
            seconds=0.0,
            errors={"load": "hta is not installed: pip install 'traceviz[hta]'"},
            **base,
        )

    t0 = time.perf_counter()
    with (
        _quiet_hta() as ns_rounding_disabled,
        tempfile.TemporaryDirectory(prefix="traceviz-hta-") as tmp,
    ):
        from hta.version import __version__ as hta_version

        fields: dict[str, Any] = {}
        errors: dict[str, str] = {}
        try:
            analysis = _load(path, rank, Path(tmp))
            df = analysis.t.get_trace(rank)  # raises when HTA kept no events of this rank
        except Exception as exc:  # any HTA failure becomes a note
            errors["load"] = _describe(exc)
        else:
            fields, errors = _run_analyses(analysis, df, rank)
    if traceviz_overlap is not None:
        fields["traceviz_overlap_pct"] = 100 * traceviz_overlap
    result = HtaResult(
        hta_version=hta_version,
        ns_rounding_disabled=ns_rounding_disabled,
        include_last_profiler_step=INCLUDE_LAST_STEP,
        seconds=time.perf_counter() - t0,
        errors=errors,
        **fields,
        **base,
    )
    return _with_notes(result, totals)


def _with_notes(result: HtaResult, totals: Totals | None) -> HtaResult:
    from dataclasses import replace

    return replace(result, notes=definition_notes(result, totals))


# --- running HTA ------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet_hta() -> Iterator[bool]:
    """Silence HTA (its logger, root-logger calls, prints, warnings) and turn its ns rounding
    off for the duration; yields whether the installed HTA has that option.

    HTA reads ``HTA_DISABLE_NS_ROUNDING`` once into a singleton (``HTAEnvOptions``); setting
    the option on that object has the same effect and leaves ``os.environ`` alone.
    """
    hta_logger = logging.getLogger("hta")
    root = logging.getLogger()
    was_disabled = hta_logger.disabled
    # HTA calls logging.debug()/error() on the root logger, which would install a stderr
    # handler (logging.basicConfig) when the application has none.
    guard = logging.NullHandler() if not root.handlers else None
    options, previous = _ns_rounding_option()
    hta_logger.disabled = True
    if guard:
        root.addHandler(guard)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            if options is not None:
                options.set_disable_ns_rounding(True)
            yield options is not None
    finally:
        if options is not None:
            options.set_disable_ns_rounding(previous)
        if guard:
            root.removeHandler(guard)
        hta_logger.disabled = was_disabled


def _ns_rounding_option() -> tuple[Any, bool]:
    """HTA's option singleton and its current ns-rounding setting (None when unsupported)."""
    try:
        from hta.configs.env_options import HTAEnvOptions
    except ImportError:
        return None, False
    options = HTAEnvOptions.instance()
    if not hasattr(options, "set_disable_ns_rounding"):
        return None, False
    return options, bool(options.disable_ns_rounding())


def _load(path: Path, rank: int, tmp: Path) -> Any:
    """Stage ``path`` as ``tmp/rank<rank>.json[.gz]`` and load it with HTA's TraceAnalysis."""
    from hta.trace_analysis import TraceAnalysis

    with path.open("rb") as fh:
        suffix = ".json.gz" if fh.read(2) == GZIP_MAGIC else ".json"
    staged = tmp / f"rank{rank}{suffix}"
    try:
        os.symlink(path.resolve(), staged)
    except OSError:  # no symlinks (some Windows setups): copy instead
        shutil.copyfile(path, staged)
    return TraceAnalysis(
        trace_files={rank: str(staged)},
        trace_dir=str(tmp),
        include_last_profiler_step=INCLUDE_LAST_STEP,
    )


def _run_analyses(
    analysis: Any, df: pd.DataFrame, rank: int
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each analysis in its own try/except; returns (HtaResult fields, errors).

    ``df`` is HTA's dataframe of ``rank`` (after its own filtering).
    """
    fields: dict[str, Any] = {}
    errors: dict[str, str] = {}
    names = analysis.t.symbol_table.get_sym_table()
    fields["gpu_ops"] = _gpu_op_counts(df, names)

    steps: list[tuple[str, Any]] = [
        ("temporal_breakdown", lambda: _temporal(analysis, df, names, rank)),
        ("idle_time_breakdown", lambda: _idle(analysis, rank)),
        ("kernel_launch_stats", lambda: _launch_stats(analysis, df, names, rank)),
        ("critical_path", lambda: _critical_path(analysis, df, names, rank)),
        ("comm_comp_overlap", lambda: _comm_overlap(analysis, df, names, rank)),
    ]
    for name, step in steps:
        try:
            fields.update(step())
        except Exception as exc:  # any HTA failure becomes a note
            errors[name] = _describe(exc)
    return fields, errors


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _categories(df: pd.DataFrame, names: list[str]) -> pd.Series:
    """traceviz :class:`Category` of every row of an HTA dataframe (by lower-cased ``cat``)."""
    lookup = {i: CATEGORY_BY_NAME.get(str(s).lower(), Category.OTHER) for i, s in enumerate(names)}
    return df["cat"].map(lookup)


def _gpu_op_counts(df: pd.DataFrame, names: list[str]) -> dict[str, int]:
    cats = _categories(df, names)
    return {label: int((cats == cat).sum()) for cat, label in _GPU_OP_CATEGORIES.items()}


def _temporal(analysis: Any, df: pd.DataFrame, names: list[str], rank: int) -> dict[str, Any]:
    table = analysis.get_temporal_breakdown(visualize=False)
    row = table[table["rank"] == rank].iloc[0]
    spanned = df.loc[df["stream"].ne(-1), "cat"].value_counts()
    return {
        "temporal_events": {str(names[int(c)]): int(n) for c, n in spanned.items()},
        "temporal_breakdown": {
            "kernel_time_us": float(row["kernel_time(us)"]),
            "idle_time_us": float(row["idle_time(us)"]),
            "compute_time_us": float(row["compute_time(us)"]),
            "non_compute_time_us": float(row["non_compute_time(us)"]),
            "idle_pct": float(row["idle_time_pctg"]),
            "compute_pct": float(row["compute_time_pctg"]),
            "non_compute_pct": float(row["non_compute_time_pctg"]),
        },
    }


def _comm_overlap(analysis: Any, df: pd.DataFrame, names: list[str], rank: int
                  ) -> dict[str, Any]:
    """HTA's communication/computation overlap (percent), only when the rank has a kernel
    HTA calls communication (``nccl`` in its name): HTA divides by zero otherwise."""
    from hta.utils.utils import KernelType, get_kernel_type

    gpu = df[df["stream"].ne(-1)]
    kinds = {get_kernel_type(names[int(n)]) for n in gpu["name"].unique()}
    if KernelType.COMMUNICATION.name not in kinds:
        return {}
    table = analysis.get_comm_comp_overlap(visualize=False)
    value = float(table[table["rank"] == rank].iloc[0]["comp_comm_overlap_pctg"])
    return {"comm_comp_overlap_pct": value if math.isfinite(value) else None}


def _idle(analysis: Any, rank: int) -> dict[str, Any]:
    table, _ = analysis.get_idle_time_breakdown(ranks=[rank], visualize=False)
    rows = tuple(
        {
            "stream": int(r.stream),
            "category": str(r.idle_category),
            "idle_time_us": float(r.idle_time),
            "ratio": float(r.idle_time_ratio),
        }
        for r in table.itertuples(index=False)
    )
    return {"idle_time_breakdown": rows}


def _launch_stats(analysis: Any, df: pd.DataFrame, names: list[str], rank: int) -> dict[str, Any]:
    stats = analysis.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]
    covered = set(stats["correlation"].tolist())

    cats = _categories(df, names)
    gpu_corr = set(df.loc[cats.isin(list(_GPU_OP_CATEGORIES)), "correlation"].tolist())
    launches = df[cats.isin(list(_LAUNCH_CATEGORIES)) & df["correlation"].isin(gpu_corr)]
    by_api: dict[str, dict[str, int]] = {}
    for name_id, group in launches.groupby("name", sort=False):
        by_api[str(names[int(name_id)])] = {
            "calls": len(group),
            "in_launch_stats": int(group["correlation"].isin(covered).sum()),
        }

    summary: dict[str, Any] = {
        "rows": len(stats),
        "launches": len(covered),
        "runtime_cutoff_us": RUNTIME_CUTOFF_US,
        "launch_delay_cutoff_us": LAUNCH_DELAY_CUTOFF_US,
        "runtime_outliers": int((stats["cpu_duration"] > RUNTIME_CUTOFF_US).sum()),
        "launch_delay_outliers": int((stats["launch_delay"] > LAUNCH_DELAY_CUTOFF_US).sum()),
        "short_gpu_ops": int((stats["gpu_duration"] < stats["cpu_duration"]).sum()),
    }
    for column, key in (
        ("cpu_duration", "cpu_duration_us"),
        ("gpu_duration", "gpu_duration_us"),
        ("launch_delay", "launch_delay_us"),
    ):
        summary[key] = _describe_series(stats[column])
    return {
        "launch_calls": dict(sorted(by_api.items(), key=lambda kv: -kv[1]["calls"])),
        "launch_stats": summary,
    }


def _describe_series(values: pd.Series) -> dict[str, float] | None:
    """mean / p50 / p95 / max of a µs column (None when empty)."""
    a = values.to_numpy(dtype=float)
    if a.size == 0:
        return None
    p50, p95 = np.percentile(a, [50, 95])
    return {"mean": float(a.mean()), "p50": float(p50), "p95": float(p95), "max": float(a.max())}


def _critical_path(analysis: Any, df: pd.DataFrame, names: list[str], rank: int) -> dict[str, Any]:
    """HTA's critical path over one ProfilerStep (the second one, as HTA's docs advise
    skipping the first; the only one if there is one; the whole trace if there are none)."""
    annotation, instance, window = _pick_step(analysis, df, names)
    found = analysis.critical_path_analysis(rank=rank, annotation=annotation, instance_id=instance)
    if found is None:
        raise RuntimeError(f"HTA found no '{annotation}' annotation for its critical path")
    graph, success = found
    summary: dict[str, Any] = {"window": window, "success": bool(success)}
    edges = graph.get_critical_path_breakdown() if success else None
    if edges is None or edges.empty:
        raise RuntimeError("HTA's critical path analysis did not produce a path")
    total = float(edges["duration"].sum())
    by = edges.groupby("bound_by", sort=False)["duration"].sum().sort_values(ascending=False)
    summary["length_us"] = total
    summary["bound_by"] = tuple(
        {
            "bound_by": str(kind),
            "duration_us": float(us),
            "pct": round(100 * float(us) / total, 2) if total else 0.0,
        }
        for kind, us in by.items()
    )
    return {"critical_path": summary}


def _pick_step(analysis: Any, df: pd.DataFrame, names: list[str]) -> tuple[str, int | None, str]:
    """(annotation, instance_id, label) for ``critical_path_analysis``.

    The window is a CPU step: a ``ProfilerStep#N`` row of category ``user_annotation`` (the
    second by start time; the only one if there is one). Kineto also copies each step onto the
    GPU timeline as ``gpu_user_annotation`` rows, which HTA's dataframe gives stream -1 too: a
    copy spans only the step's GPU work, so it is never chosen. HTA's ``instance_id`` indexes,
    in dataframe order, every row whose name contains the annotation (CPU steps and their copies
    alike), so the position of the chosen row is looked up in that same list.
    """
    sym = analysis.t.symbol_table.get_sym_id_map()
    ids = [v for k, v in sym.items() if STEP_ANNOTATION in k]
    matching = df[df["name"].isin(ids)]
    cpu = matching["stream"].eq(-1)
    if "cat" in matching.columns and CPU_STEP_CATEGORY in sym:
        cpu &= matching["cat"].eq(sym[CPU_STEP_CATEGORY])
    cpu_steps = matching[cpu].sort_values("ts", kind="stable")
    if cpu_steps.empty:
        return "", None, "whole trace (no ProfilerStep)"
    chosen = cpu_steps.index[1] if len(cpu_steps) > 1 else cpu_steps.index[0]
    instance = int(matching.index.get_loc(chosen))
    return STEP_ANNOTATION, instance, str(names[int(df.at[chosen, "name"])])
