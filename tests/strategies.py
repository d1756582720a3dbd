"""Hypothesis strategies: random Kineto traces whose counts are known by construction.

A generated trace has 0-4 ``ProfilerStep`` windows (0: no markers, one synthetic step), 1-3
streams on 1-2 devices, and between and inside the windows a random sequence of operations:
runtime and driver kernel launches, memcpy / memset calls, graph launches that replay 1-4
nodes, blocking syncs, GPU activities whose launch call is missing from the trace (correlation
id with no runtime call) and activities with no correlation at all. Every time is an integer
number of ns (written as Kineto's ``"{us}.{ns:03}"``). GPU work starts no earlier than its launch
and no earlier than the previous activity on its stream ended, so a generated trace is valid:
it must raise no data-validity warning.

:func:`hostile` then overwrites ``ts`` or ``dur`` of some events with NaN, Infinity, text or
negative values, recording how many of each it wrote.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hypothesis import strategies as st

from tests.kineto import CPU_PID, CPU_TID, TraceBuilder, us

#: op kind -> (API name, runtime category, GPU activity category)
_LAUNCH_OPS = {
    "kernel": ("cudaLaunchKernel", "cuda_runtime", "kernel"),
    "driver": ("cuLaunchKernel", "cuda_driver", "kernel"),
    "memcpy": ("cudaMemcpyAsync", "cuda_runtime", "gpu_memcpy"),
    "memset": ("cudaMemsetAsync", "cuda_runtime", "gpu_memset"),
    "graph": ("cudaGraphLaunch", "cuda_runtime", "kernel"),
}
_OPS = (*_LAUNCH_OPS, "sync", "missing_launch", "no_correlation")
_SYNCS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize")


@dataclass
class GeneratedTrace:
    """The builder plus what it holds, counted while it was built."""

    builder: TraceBuilder
    expected: Counter[str] = field(default_factory=Counter)
    #: hostile only: code -> events whose value was made invalid for that code
    injected: Counter[str] = field(default_factory=Counter)


class _Gen:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.b = TraceBuilder()
        self.exp: Counter[str] = Counter()
        self.devices = draw(st.sampled_from([(0,), (0, 1)]))
        self.streams = draw(st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True))
        self.stream_free = {(d, s): 0 for d in self.devices for s in self.streams}
        self.t = draw(st.integers(0, 5_000))  # the CPU thread's clock, ns

    def ops(self, max_ops: int) -> None:
        for _ in range(self.draw(st.integers(0, max_ops))):
            self.t += self.draw(st.integers(0, 3_000))  # 0: calls touch
            self.op(self.draw(st.sampled_from(_OPS)))

    def op(self, kind: str) -> None:
        d = self.draw
        call_ns = d(st.integers(1, 4_000))
        if kind == "sync":
            self.b.runtime(d(st.sampled_from(_SYNCS)), self.t, call_ns)
            self.t += call_ns
            return
        if kind in _LAUNCH_OPS:
            api, cat, gpu_cat = _LAUNCH_OPS[kind]
            corr: int | None = self.b.launch(self.t, call_ns, name=api, cat=cat)
            self.exp["launches"] += 1
            self.exp["graph_launches"] += kind == "graph"
        else:  # an activity without its launch call
            gpu_cat = "kernel"
            self.b._corr += 1
            corr = self.b._corr if kind == "missing_launch" else None
            self.exp["unlinked"] += 1
        device, stream = d(st.sampled_from(self.devices)), d(st.sampled_from(self.streams))
        nodes = d(st.integers(1, 4)) if kind == "graph" else 1
        for i in range(nodes):
            start = max(self.t + d(st.integers(0, 5_000)),
                        self.stream_free[(device, stream)] + d(st.integers(0, 2_000)))
            dur = d(st.integers(0, 8_000))
            name = f"{kind}_{i}" if gpu_cat == "kernel" else ("Memcpy HtoD" if gpu_cat ==
                                                               "gpu_memcpy" else "Memset")
            self.b.gpu(corr, start, dur, name=name, stream=stream, cat=gpu_cat, device=device)
            self.stream_free[(device, stream)] = start + dur
            self.exp[gpu_cat] += 1
            self.exp["graph_nodes"] += kind == "graph"
        self.t += call_ns


@st.composite
def kineto_traces(draw: st.DrawFn) -> GeneratedTrace:
    """A valid random trace (see the module docstring) and its known counts."""
    g = _Gen(draw)
    n_steps = draw(st.integers(0, 4))
    for n in range(n_steps):
        g.ops(2)  # launched before the window: unattributed
        start = g.t
        g.ops(6)
        g.t += draw(st.integers(0, 3_000))
        g.b.step(n + 1, start, max(1, g.t - start))
        g.t = max(g.t, start + 1)
    g.ops(6 if n_steps == 0 else 2)
    if not g.b.events:  # a trace without timed events is no trace (NotATraceError)
        g.b.cpu_op("aten::empty", g.t, 1_000)
    g.exp["steps"] = n_steps or 1  # no markers: one synthetic step
    g.exp["activities"] = g.exp["kernel"] + g.exp["gpu_memcpy"] + g.exp["gpu_memset"]
    return GeneratedTrace(g.b, g.exp)


_INVALID = {
    "invalid_duration": ("dur", st.sampled_from([float("nan"), float("inf"), "NaN", "abc"])),
    "invalid_timestamp": ("ts", st.sampled_from([float("-inf"), float("inf"), "x", 1e300])),
    "negative_duration": ("dur", st.integers(1, 10_000).map(lambda ns: -ns / 1000)),
    "negative_timestamp": ("ts", st.integers(1, 10_000).map(lambda ns: -ns / 1000)),
}


@st.composite
def hostile(draw: st.DrawFn, traces: st.SearchStrategy[GeneratedTrace] | None = None
            ) -> GeneratedTrace:
    """A generated trace with 1-5 events' ``ts`` or ``dur`` made invalid (one code each)."""
    gen = draw(traces if traces is not None else kineto_traces())
    events = gen.builder.events
    if not events:
        gen.builder.cpu_op("op", 0, 1_000)
    picked = draw(st.lists(st.integers(0, len(events) - 1), min_size=1, max_size=5,
                           unique=True))
    for i in picked:
        code = draw(st.sampled_from(sorted(_INVALID)))
        key, values = _INVALID[code]
        events[i][key] = draw(values)
        gen.injected[code] += 1
    return gen


# --- ambiguities (traceviz/analyze/health/ambiguity.py, and shared_correlation) -----------------

#: The ambiguity codes :func:`ambiguous` can inject.
AMBIGUITIES = ("multi_activity_launch", "launch_on_several_devices", "flow_end_before_start",
               "nested_steps", "shared_correlation")


def _end_ns(events: list[dict]) -> int:
    """The latest end of the builder's timed events, ns (0 without any)."""
    ends = [round(e["ts"] * 1000) + round(e.get("dur", 0) * 1000) for e in events
            if e.get("ph") == "X"]
    return max(ends, default=0)


def _flow(b: TraceBuilder, ph: str, flow_id: int, ts: int, pid: int, tid: int) -> None:
    ev = {"ph": ph, "id": flow_id, "pid": pid, "tid": tid, "ts": us(ts), "cat": "ac2g",
          "name": "ac2g"}
    if ph == "f":
        ev["bp"] = "e"
    b.events.append(ev)


@st.composite
def ambiguous(draw: st.DrawFn, traces: st.SearchStrategy[GeneratedTrace] | None = None
              ) -> GeneratedTrace:
    """A valid generated trace with 1-5 ambiguity codes injected, each 1-31 times
    (``injected[code]``: the count its warning must carry). The injected events come after
    every other event (or, for nested steps, inside a window), on streams of their own, so
    they raise no other strict code. ``multi_activity_launch`` may put up to 31 activities on
    one kernel launch; every flow the trace gets also has a well-ordered twin and an orphan
    end (no start), neither of which is flagged."""
    gen = draw(traces if traces is not None else kineto_traces())
    b = gen.builder
    codes = draw(st.lists(st.sampled_from(AMBIGUITIES), min_size=1, max_size=5, unique=True))
    t = _end_ns(b.events) + 10_000
    stream = 900  # streams of the injected activities: one each, never shared
    for code in codes:
        if code == "multi_activity_launch":
            for _ in range(draw(st.integers(1, 2))):
                api, cat, gpu_cat = _LAUNCH_OPS[draw(st.sampled_from(
                    ["kernel", "driver", "memcpy", "memset"]))]
                corr = b.launch(t, 1_000, name=api, cat=cat)
                n = draw(st.integers(2, 31))
                for i in range(n):
                    stream += 1
                    b.gpu(corr, t + 5_000 + i * 100, 50, name=f"amb_{i}", stream=stream,
                          cat=gpu_cat)
                gen.injected[code] += n - 1
                t += 20_000
        elif code == "launch_on_several_devices":
            for _ in range(draw(st.integers(1, 3))):  # a batch copy: several activities allowed
                corr = b.launch(t, 1_000, name="cudaMemcpyBatchAsync")
                for dev in (0, 1):
                    stream += 1
                    b.gpu(corr, t + 5_000, 50, name="Memcpy DtoD", stream=stream,
                          cat="gpu_memcpy", device=dev)
                gen.injected[code] += 1
                t += 20_000
        elif code == "flow_end_before_start":
            n = draw(st.integers(1, 31))
            for i in range(n):
                corr = b.launch(t, 1_000, name="cudaLaunchKernel")
                stream += 1
                b.gpu(corr, t + 5_000, 50, name="flowed", stream=stream)
                _flow(b, "s", corr, t, CPU_PID, CPU_TID)
                _flow(b, "f", corr, t - draw(st.integers(1, 5_000)), 0, stream)  # backwards
                _flow(b, "s", 10**9 + i, t, CPU_PID, CPU_TID)  # a well-ordered twin
                _flow(b, "f", 10**9 + i, t + draw(st.integers(0, 5_000)), 0, stream)
                _flow(b, "f", 2 * 10**9 + i, t - 1, CPU_PID, CPU_TID)  # orphan end: not judged
                t += 20_000
            gen.injected[code] += n
        elif code == "nested_steps":
            outer_start = t
            n = draw(st.integers(1, 4))
            t += 1_000
            for i in range(n):
                b.step(1_000 + i, t, draw(st.integers(1, 5_000)))
                t += 6_000
            b.step(999, outer_start, t - outer_start)
            gen.injected[code] += n
            t += 10_000
        else:  # shared_correlation: a later call reusing an earlier launch's id
            for _ in range(draw(st.integers(1, 3))):
                corr = b.launch(t, 1_000)
                stream += 1
                b.gpu(corr, t + 5_000, 50, name="owned", stream=stream)
                b.x("cuda_runtime", "cudaLaunchKernel", t + 2_000, 1_000, correlation=corr)
                gen.injected[code] += 1
                t += 20_000
    return gen
