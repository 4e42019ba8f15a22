"""Test-set QoE of ABR policies on rtclab/ABR-v0 (Pensieve's test protocol: every trace played
once from its start, the QoE of the 47 chunks the policy chose, averaged per chunk)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from rtclab.metis.convert import rollout, teacher_policy, tree_policy

RESERVOIR_S, CUSHION_S = 5.0, 10.0  # Pensieve's bb.py (Huang et al., SIGCOMM'14)


def buffer_based(s, _f) -> int:
    """BB: lowest bitrate below a 5 s reservoir, highest above 15 s, linear in between."""
    buf = s[8 + 7] * 10.0  # row 1, last column, ×10 s
    if buf < RESERVOIR_S:
        return 0
    if buf >= RESERVOIR_S + CUSHION_S:
        return 5
    return int(5 * (buf - RESERVOIR_S) / CUSHION_S)


def videos(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> list[tuple]:
    """One video per trace, each from its start (reseeded first): `rollout`'s (states,
    features, positions, actions, [QoE sum]) per trace."""
    env.reset(seed=seed)
    traces = range(env.core.trace_count) if traces is None else traces
    return [rollout(env, policy, 1, trace=t) for t in traces]


def per_trace_qoe(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> np.ndarray:
    """Mean QoE per chunk of each trace (sequential, from the start)."""
    return np.array([v[4][0] / len(v[3]) for v in videos(env, policy, traces, seed)])


def action_histogram(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> np.ndarray:
    return sum((np.bincount(v[3], minlength=6) for v in videos(env, policy, traces, seed)),
               np.zeros(6, dtype=np.int64))


def policies(teacher, rng_seed: int = 0) -> dict[str, Callable]:
    return {"pensieve-sampled": teacher_policy(teacher, np.random.default_rng(rng_seed)),
            "pensieve-greedy": teacher_policy(teacher, None), "bb": buffer_based}


__all__ = ["per_trace_qoe", "action_histogram", "policies", "buffer_based", "tree_policy"]


def collect_states(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> np.ndarray:
    """The 48-value decision states a policy visits on the given traces."""
    return np.asarray([s for v in videos(env, policy, traces, seed) for s in v[0]])


def python_latency_ns(fn: Callable, rows: np.ndarray) -> np.ndarray:
    """Per-call wall time of fn(row) in nanoseconds."""
    import time
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        t0 = time.perf_counter_ns()
        fn(r)
        out[i] = time.perf_counter_ns() - t0
    return out
