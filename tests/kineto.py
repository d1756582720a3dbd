"""Build small Kineto traces by hand, with every time given in integer nanoseconds.

Times are written the way Kineto writes them: microseconds as ``"{us}.{ns:03}"`` relative to
``baseTimeNanoseconds``. The builder hands out correlation ids so a launch and its activities
stay linked.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CPU_PID, CPU_TID, BWD_TID = 100, 100, 101
BASE_NS = 1_790_000_000_000_000_000
NCCL_ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def us(ns: int) -> float:
    """Kineto's ``"{us}.{ns:03}"`` as a JSON number."""
    return float(f"{ns // 1000}.{ns % 1000:03d}")


@dataclass
class TraceBuilder:
    events: list[dict[str, Any]] = field(default_factory=list)
    top: dict[str, Any] = field(default_factory=dict)
    _corr: int = 1000

    def x(self, cat: str, name: str, ts: int, dur: int, pid: Any = CPU_PID, tid: Any = CPU_TID,
          **args: Any) -> dict[str, Any]:
        ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": us(ts),
              "dur": us(dur), "args": args}
        self.events.append(ev)
        return ev

    def step(self, n: int, ts: int, dur: int, tid: int = CPU_TID) -> None:
        self.x("user_annotation", f"ProfilerStep#{n}", ts, dur, tid=tid)

    def cpu_op(self, name: str, ts: int, dur: int, tid: int = CPU_TID, cat: str = "cpu_op") -> None:
        self.x(cat, name, ts, dur, tid=tid)

    def launch(self, ts: int, dur: int = 1_000, name: str = "cudaLaunchKernel",
               tid: int = CPU_TID, cat: str = "cuda_runtime") -> int:
        """A launch call; returns its correlation id."""
        self._corr += 1
        self.x(cat, name, ts, dur, tid=tid, correlation=self._corr)
        return self._corr

    def runtime(self, name: str, ts: int, dur: int, tid: int = CPU_TID) -> None:
        """A runtime call with no GPU activity (e.g. a synchronize)."""
        self._corr += 1
        self.x("cuda_runtime", name, ts, dur, tid=tid, correlation=self._corr)

    def gpu(self, corr: int | None, ts: int, dur: int, name: str = "k", stream: int = 7,
            cat: str = "kernel", device: int = 0) -> None:
        args: dict[str, Any] = {"device": device, "stream": stream}
        if corr is not None:
            args["correlation"] = corr
        self.x(cat, name, ts, dur, pid=device, tid=stream, **args)

    def kernel(self, launch_ts: int, ts: int, dur: int, name: str = "k", stream: int = 7,
               launch_dur: int = 1_000, api: str = "cudaLaunchKernel") -> int:
        corr = self.launch(launch_ts, launch_dur, name=api,
                           cat="cuda_driver" if api.startswith("cu") and not api.startswith(
                               "cuda") else "cuda_runtime")
        self.gpu(corr, ts, dur, name=name, stream=stream)
        return corr

    def distributed(self, rank: int, world_size: int, hostname: str | None = None,
                    groups: dict[str, list[int]] | None = None) -> None:
        """``distributedInfo`` (NCCL) and, with ``hostname``, the traceviz stamp naming the host."""
        pgs = groups if groups is not None else {"0": list(range(world_size))}
        self.top["distributedInfo"] = {
            "backend": "nccl", "rank": rank, "world_size": world_size, "nccl_version": "2.21.5",
            "pg_config": [{"pg_name": n, "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                           "pg_size": len(r), "ranks": r} for n, r in pgs.items()],
        }
        if hostname is not None:
            self.top["traceviz"] = {"hostname": hostname}

    def collective(self, launch_ts: int, ts: int, dur: int, name: str = "allreduce",
                   nelems: int = 1024, group: str = "0", seq: int | None = None,
                   dtype: str = "Float", stream: int = 20, on_kernel: bool = False,
                   params: bool = True,
                   kernel: str = NCCL_ALLREDUCE
                   ) -> int:
        """A collective: ``record_param_comms`` CPU op around a launch of an NCCL kernel.

        The collective parameters go on the CPU op (``params``) and, with ``on_kernel``, also on
        the kernel (torch >= 2.3). Returns the kernel's correlation id.
        """
        self._corr += 1
        corr, ext = self._corr, self._corr + 500_000
        comm: dict[str, Any] = {"Collective name": name, "In msg nelems": nelems,
                                "Out msg nelems": nelems, "Process Group Name": group,
                                "Group size": 2, "dtype": dtype}
        if seq is not None:
            comm["Seq"] = seq
        self.x("cpu_op", "record_param_comms", launch_ts - 100, 1_200,
               **{"External id": ext, **(comm if params else {})})
        self.x("cuda_runtime", "cudaLaunchKernel", launch_ts, 1_000, correlation=corr,
               **{"External id": ext})
        self.x("kernel", kernel, ts, dur, pid=0, tid=stream, device=0, stream=stream,
               correlation=corr, **{"External id": ext, **(comm if on_kernel else {})})
        return corr

    def document(self) -> dict[str, Any]:
        doc = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "Test GPU", "numSms": 10,
                                  "computeMajor": 9, "computeMinor": 0}],
            "baseTimeNanoseconds": BASE_NS,
            **self.top,
            "traceEvents": [
                {"ph": "M", "name": "process_name", "pid": CPU_PID, "tid": 0,
                 "args": {"name": "python3"}},
                {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0,
                 "args": {"labels": "GPU 0"}},
                *self.events,
            ],
        }
        return doc

    def write(self, path: Path, gzipped: bool = False) -> Path:
        data = json.dumps(self.document(), indent=1).encode()
        path.write_bytes(gzip.compress(data) if gzipped else data)
        return path
