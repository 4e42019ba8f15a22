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


def per_trace_qoe(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> np.ndarray:
    """Mean QoE per chunk of each trace (sequential, from the start)."""
    env.reset(seed=seed)
    traces = range(env.core.trace_count) if traces is None else traces
    out = []
    for t in traces:
        _, _, _, acts, totals = rollout(env, policy, 1, trace=t)
        out.append(totals[0] / len(acts))
    return np.array(out)


def action_histogram(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> np.ndarray:
    env.reset(seed=seed)
    traces = range(env.core.trace_count) if traces is None else traces
    counts = np.zeros(6, dtype=np.int64)
    for t in traces:
        acts = rollout(env, policy, 1, trace=t)[3]
        counts += np.bincount(acts, minlength=6)
    return counts


def policies(teacher, rng_seed: int = 0) -> dict[str, Callable]:
    return {"pensieve-sampled": teacher_policy(teacher, np.random.default_rng(rng_seed)),
            "pensieve-greedy": teacher_policy(teacher, None), "bb": buffer_based}


__all__ = ["per_trace_qoe", "action_histogram", "policies", "buffer_based", "tree_policy"]


def collect_states(env, policy: Callable, traces: list[int] | None = None, seed: int = 0) -> np.ndarray:
    """The 48-value decision states a policy visits on the given traces."""
    env.reset(seed=seed)
    traces = range(env.core.trace_count) if traces is None else traces
    out = []
    for t in traces:
        out += rollout(env, policy, 1, trace=t)[0]
    return np.asarray(out)


def python_latency_ns(fn: Callable, rows: np.ndarray) -> np.ndarray:
    """Per-call wall time of fn(row) in nanoseconds."""
    import time
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        t0 = time.perf_counter_ns()
        fn(r)
        out[i] = time.perf_counter_ns() - t0
    return out
