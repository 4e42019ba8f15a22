"""A datacenter flow-scheduling environment for AuTO (Chen et al., "AuTO: Scaling Deep
Reinforcement Learning for Datacenter-Scale Automatic Traffic Optimization", SIGCOMM'18), the
second local system Metis converts (spec `zhuge-metis.md` B.2; dissertation §5.5.6).

The fabric is one bottleneck port with eight strict-priority queues, AuTO's split of them:

- queues 0-3 are a **multi-level feedback queue** (MLFQ; Bai et al., PIAS, NSDI'15): every flow
  starts in queue 0 and is demoted to queue k once it has sent α_k bytes. The four thresholds
  α1 < α2 < α3 < α4 are what AuTO's **sRLA** (short-flow agent) sets;
- a flow that has sent α4 bytes is a **long flow**; queues 4-7 hold long flows at the priority
  AuTO's **lRLA** (long-flow agent) gives each one (queue 4 until it has decided).

The model is flow-level and exact for its fluid abstraction: between events, the highest non-empty
queue's flows share the capacity equally (TCP's fair share within a queue) and every lower queue
waits (strict priority); events are arrivals, completions, threshold crossings and the agents'
decision epochs. It omits what a packet-level fabric adds (slow start, losses, per-host links
and incast): AuTO's testbed had those; rtclab's packet simulator can be given the same priority
queues later, these agents' interfaces unchanged.

Flow sizes follow the two standard workloads of the datacenter-transport literature, as
piecewise-linear CDFs in 1460-byte packets (the ns-2 tables of pFabric, SIGCOMM'13 and PIAS):
**web search** (Alizadeh et al., DCTCP, SIGCOMM'10) and **data mining** (Greenberg et al., VL2,
SIGCOMM'09). Arrivals are Poisson at the rate that makes the offered load `load` × capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MSS = 1460
#: (packets, cumulative probability), interpolated linearly between points.
WORKLOADS = {
    "websearch": ((6, 0.0), (6, 0.15), (13, 0.2), (19, 0.3), (33, 0.4), (53, 0.53), (133, 0.6), (667, 0.7),
                  (1333, 0.8), (3333, 0.9), (6667, 0.97), (20000, 1.0)),
    "datamining": ((1, 0.0), (1, 0.5), (2, 0.6), (3, 0.7), (7, 0.8), (267, 0.9), (2107, 0.95), (66667, 0.99),
                   (666667, 1.0)),
}
SHORT_QUEUES, LONG_QUEUES = 4, 4
#: PIAS-style default thresholds (bytes) before the sRLA has decided.
DEFAULT_THRESHOLDS = (10e3, 100e3, 1e6, 10e6)


def workload(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name not in WORKLOADS:
        raise ValueError(f"workload {name!r}: expected one of {', '.join(WORKLOADS)}")
    pts = np.array(WORKLOADS[name], dtype=float)
    return pts[:, 0], pts[:, 1]


def mean_size(name: str) -> float:
    """Mean flow size in bytes of a workload (exact for the piecewise-linear CDF)."""
    x, p = workload(name)
    return float(np.sum(np.diff(p) * (x[1:] + x[:-1]) / 2.0) * MSS)


def sample_sizes(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Flow sizes in bytes: inverse-CDF sampling, at least one packet, whole packets."""
    x, p = workload(name)
    u = rng.random(n)
    return np.maximum(1.0, np.ceil(np.interp(u, p, x))) * MSS


@dataclass
class Finished:
    size: np.ndarray       # bytes
    fct: np.ndarray        # seconds
    arrival: np.ndarray    # seconds
    long: np.ndarray       # bool: became a long flow (sent α4 bytes)

    @classmethod
    def empty(cls) -> "Finished":
        z = np.zeros(0)
        return cls(z, z, z, np.zeros(0, bool))

    def __len__(self) -> int:
        return len(self.size)

    @staticmethod
    def concat(parts: list["Finished"]) -> "Finished":
        if not parts:
            return Finished.empty()
        return Finished(*(np.concatenate([getattr(f, k) for f in parts]) for k in ("size", "fct", "arrival", "long")))


class Fabric:
    """One bottleneck port, MLFQ + long-flow queues, fluid strict priority; see the module doc.

    `advance(t)` runs the fabric to time t under the current `thresholds` and long-flow
    priorities (`set_long_priority`); `active_long()` lists the long flows an lRLA decides for."""

    def __init__(self, workload_name: str = "websearch", load: float = 0.7, capacity_bps: float = 10e9,
                 seed: int = 0):
        if not 0.0 < load < 1.0:
            raise ValueError(f"load {load}: expected a value between 0 and 1 (exclusive)")
        if capacity_bps <= 0:
            raise ValueError(f"capacity {capacity_bps}: expected a positive rate")
        workload(workload_name)
        self.workload, self.load, self.capacity = workload_name, float(load), capacity_bps / 8.0  # bytes/s
        self.rate = self.load * self.capacity / mean_size(workload_name)                         # flows/s
        self.reset(seed)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.now = 0.0
        self.size = np.zeros(0)
        self.sent = np.zeros(0)
        self.arr = np.zeros(0)
        self.long_q = np.zeros(0, np.int64)     # 0..3 within the long queues
        self.was_long = np.zeros(0, bool)
        self.next_id = 0                        # flows admitted so far
        self.thresholds = np.array(DEFAULT_THRESHOLDS, dtype=float)
        self._next_arrival = self.rng.exponential(1.0 / self.rate)
        self.arrived_bytes = 0.0

    # ---- control -----------------------------------------------------------------------------
    def set_thresholds(self, thresholds) -> None:
        t = np.asarray(thresholds, dtype=float)
        if t.shape != (SHORT_QUEUES,) or not np.all(np.isfinite(t)) or np.any(t <= 0) or np.any(np.diff(t) < 0):
            raise ValueError(f"thresholds {t.tolist()}: expected {SHORT_QUEUES} positive non-decreasing byte counts")
        self.thresholds = t

    def queue_of(self) -> np.ndarray:
        q = np.searchsorted(self.thresholds, self.sent, side="right")
        return np.where(q >= SHORT_QUEUES, SHORT_QUEUES + self.long_q, q)

    def active_long(self) -> np.ndarray:
        """Indices (into the active arrays) of the long flows."""
        return np.flatnonzero(self.sent >= self.thresholds[-1])

    def set_long_priority(self, idx: np.ndarray, level: np.ndarray) -> None:
        level = np.asarray(level, np.int64)
        if np.any((level < 0) | (level >= LONG_QUEUES)):
            raise ValueError(f"long-flow priority {level.tolist()}: expected 0 to {LONG_QUEUES - 1}")
        self.long_q[idx] = level

    def stop_arrivals(self) -> None:
        """No flow arrives after now (to drain the port: every flow that arrived gets an FCT)."""
        self._next_arrival = float("inf")

    # ---- dynamics ----------------------------------------------------------------------------
    def _admit(self) -> None:
        self.admit(float(sample_sizes(self.workload, self.rng, 1)[0]))
        self._next_arrival = self.now + self.rng.exponential(1.0 / self.rate)

    def admit(self, s: float) -> None:
        """A flow of `s` bytes starts now (in queue 0)."""
        self.size = np.append(self.size, s)
        self.sent = np.append(self.sent, 0.0)
        self.arr = np.append(self.arr, self.now)
        self.long_q = np.append(self.long_q, 0)
        self.was_long = np.append(self.was_long, False)
        self.next_id += 1
        self.arrived_bytes += s

    def advance(self, t_end: float) -> Finished:
        """Run to `t_end`; the flows that finished meanwhile."""
        done: list[Finished] = []
        eps = 1e-6
        while self.now < t_end:
            if len(self.size) == 0:
                if self._next_arrival >= t_end:
                    self.now = t_end
                    break
                self.now = self._next_arrival
                self._admit()
                continue
            q = self.queue_of()
            top = q.min()
            sel = np.flatnonzero(q == top)
            share = self.capacity / len(sel)
            dt = (self.size[sel] - self.sent[sel]).min() / share
            if top < SHORT_QUEUES:
                dt = min(dt, (self.thresholds[top] - self.sent[sel]).min() / share)
            dt = max(0.0, min(dt, self._next_arrival - self.now, t_end - self.now))
            self.sent[sel] += share * dt
            self.now += dt
            self.was_long |= self.sent >= self.thresholds[-1] - eps
            fin = self.sent >= self.size - eps
            if fin.any():
                done.append(Finished(self.size[fin], self.now - self.arr[fin], self.arr[fin], self.was_long[fin]))
                keep = ~fin
                for k in ("size", "sent", "arr", "long_q", "was_long"):
                    setattr(self, k, getattr(self, k)[keep])
            else:
                # A flow exactly at a threshold moves on: snap it past the boundary.
                at = np.isclose(self.sent[sel], self.thresholds[min(top, SHORT_QUEUES - 1)], rtol=0, atol=eps)
                if top < SHORT_QUEUES and at.any():
                    self.sent[sel[at]] = self.thresholds[top] + eps
            if self.now >= self._next_arrival:
                self._admit()
        return Finished.concat(done)


def slowdown(f: Finished, capacity_bps: float) -> np.ndarray:
    """FCT over the ideal (size / capacity)."""
    return f.fct / (f.size * 8.0 / capacity_bps)
