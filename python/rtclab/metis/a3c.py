"""Pensieve's A3C, for Metis's design case (dissertation §5.5.3, Fig 5.7-5.8; spec `zhuge-metis.md`
B.6.2): train the original network and the modified one — the last bitrate's branch concatenated
to the output layer — from the same seeds, and compare test QoE against training iterations.

Lineage: Mao, Netravali, Alizadeh, "Neural Adaptive Video Streaming with Pensieve", SIGCOMM'17;
the released trainer hongzimao/pensieve `sim/multi_agent.py` + `sim/a3c.py` (16 agents, a
central learner, TRAIN_SEQ_LEN 100, γ 0.99, actor RMSProp 1e-4, critic RMSProp 1e-3), and the
modified network of transys-project/metis `case-design/a3c.py`. Our own code, JAX + optax
(ADR 0006).

Networks (actor and critic alike): six branches of 128 ReLU units over Pensieve's 6 × 8 state —
the last bitrate, the buffer (1 value each), the throughput and download-time histories (8 each),
the next chunk sizes (6) and chunks left (1); the original concatenates all six (768) → Dense 128
ReLU → output; the modified concatenates five (640) → Dense 128 ReLU, then concatenates the last
bitrate's branch (256) → output. Output: softmax over 6 bitrates (actor) or one value (critic).
The "Conv1D" branches of the original see a length-1 sequence, so only one kernel tap meets data:
they are dense layers over 8 (or 6) inputs with the conv's initialisation (uniform scaling over
fan-in 4 × channels); the other dense layers start truncated-normal with σ 0.02 (tflearn's
defaults), biases at 0.

Training, as released: each of 16 agents plays a video on a random training trace from a random
start, sampling bitrates from the actor (first cumulative probability above U{1..999}/1000);
a video's 47 decisions are one batch (a video ends before TRAIN_SEQ_LEN = 100 steps), terminal,
so the return of its last step is 0 (the released `compute_gradients` sets R[-1] = 0 without the
last reward) and R_t = r_t + γ·R_{t+1} before it. Actor loss Σ −log π(a|s)·(R − V) + β·Σ π·log(π +
1e-6), critic loss mean (R − V)²; all 16 gradients are computed at the same parameters and the
central learner applies them one after the other (16 RMSProp steps, decay 0.9, ε 1e-10 inside
the square root, mean square starting at 1, as TensorFlow 1's RMSProp). One iteration (the
released "epoch") is one such round.

Entropy weight: the released `sim/README.md` says to start it large (1 to 5) and lower it to 0.1
after at least 100,000 iterations; Metis's `case-design/a3c.py` has the constant 0.5. We decay it
linearly from 1.0 to 0.1 over the first eighth of the run (100,000 of the paper's 800,000
iterations) and hold 0.1 after, the same shape for every run length.

Test QoE: every `eval_every` iterations, the actor plays each held-out trace once from its start
(sampling with a fixed seed, as Pensieve's test), mean linear QoE per chunk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rtclab.metis.pensieve import sample_actions

AGENTS = 16
GAMMA = 0.99
ACTOR_LR = 1e-4
CRITIC_LR = 1e-3
ENTROPY_EPS = 1e-6
ENTROPY_START, ENTROPY_END, ENTROPY_DECAY_SHARE = 1.0, 0.1, 1 / 8
HIDDEN = 128
# (name, row, first column, width): the six input branches (last column = newest value)
BRANCHES = (("bitrate", 0, 7, 1), ("buffer", 1, 7, 1), ("throughput", 2, 0, 8), ("download", 3, 0, 8),
            ("sizes", 4, 0, 6), ("left", 5, 7, 1))
CONV = {"throughput", "download", "sizes"}


def entropy_weight(iteration: int, total: int) -> float:
    decay = max(1.0, total * ENTROPY_DECAY_SHARE)
    return ENTROPY_START + (ENTROPY_END - ENTROPY_START) * min(1.0, iteration / decay)


def init_net(key, outputs: int, modified: bool) -> dict:
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(key, len(BRANCHES) + 2)
    p = {}
    for k, (name, _row, _col, width) in zip(keys, BRANCHES):
        if name in CONV:  # tflearn conv_1d: uniform scaling over fan-in = kernel 4 × channels
            lim = float(np.sqrt(3.0 / (4 * width)))
            w = jax.random.uniform(k, (width, HIDDEN), minval=-lim, maxval=lim)
        else:
            w = 0.02 * jax.random.truncated_normal(k, -2.0, 2.0, (width, HIDDEN))
        p[name] = (w, jnp.zeros(HIDDEN))
    merged = HIDDEN * (len(BRANCHES) - 1 if modified else len(BRANCHES))
    p["dense"] = (0.02 * jax.random.truncated_normal(keys[-2], -2.0, 2.0, (merged, HIDDEN)), jnp.zeros(HIDDEN))
    out_in = 2 * HIDDEN if modified else HIDDEN
    p["out"] = (0.02 * jax.random.truncated_normal(keys[-1], -2.0, 2.0, (out_in, outputs)), jnp.zeros(outputs))
    return p


def forward(p: dict, states, modified: bool):
    """[N, 48] states → [N, outputs] pre-activation outputs."""
    import jax
    import jax.numpy as jnp

    s = states.reshape(-1, 6, 8)
    h = {name: jax.nn.relu(s[:, row, col:col + width] @ p[name][0] + p[name][1])
         for name, row, col, width in BRANCHES}
    names = [b[0] for b in BRANCHES if not (modified and b[0] == "bitrate")]
    z = jax.nn.relu(jnp.concatenate([h[n] for n in names], axis=1) @ p["dense"][0] + p["dense"][1])
    if modified:
        z = jnp.concatenate([h["bitrate"], z], axis=1)
    return z @ p["out"][0] + p["out"][1]


@dataclass
class Curve:
    variant: str
    seed: int
    iterations: list[int] = field(default_factory=list)
    test_qoe: list[float] = field(default_factory=list)
    seconds: float = 0.0


class Trainer:
    """A3C as released for one network variant ("original" or "modified") and one seed."""

    def __init__(self, train_traces, test_traces, modified: bool, seed: int = 0, agents: int = AGENTS):
        import gymnasium
        import jax
        import jax.numpy as jnp
        import optax

        import rtclab.gym  # noqa: F401

        self.modified = modified
        self.agents = agents
        key = jax.random.PRNGKey(seed)
        ka, kc = jax.random.split(key)
        self.actor = init_net(ka, 6, modified)
        self.critic = init_net(kc, 1, modified)
        self.opt_a = optax.rmsprop(ACTOR_LR, decay=0.9, eps=1e-10, initial_scale=1.0, eps_in_sqrt=True)
        self.opt_c = optax.rmsprop(CRITIC_LR, decay=0.9, eps=1e-10, initial_scale=1.0, eps_in_sqrt=True)
        self.sa, self.sc = self.opt_a.init(self.actor), self.opt_c.init(self.critic)
        self.envs = [gymnasium.make("rtclab/ABR-v0", traces=train_traces, seed=seed * 1000 + i).unwrapped
                     for i in range(agents)]
        self.test_env = [gymnasium.make("rtclab/ABR-v0", traces=[t], trace_order="sequential", seed=seed).unwrapped
                         for t in test_traces]
        self.rng = np.random.default_rng(seed)
        m = modified

        def probs(actor, s):
            return jax.nn.softmax(forward(actor, s, m))

        def losses(actor, critic, s, a, r, beta):
            v = forward(critic, s, m)[:, 0]
            # returns: terminal batch, R[-1] = 0 (the released compute_gradients), then r + γR
            def back(carry, x):
                ret = x + GAMMA * carry
                return ret, ret
            _, rets = jax.lax.scan(back, 0.0, r[:-1], reverse=True)
            big_r = jnp.concatenate([rets, jnp.zeros(1)])
            td = jax.lax.stop_gradient(big_r - v)
            pi = jax.nn.softmax(forward(actor, s, m))
            logp = jnp.log(jnp.take_along_axis(pi, a[:, None], axis=1)[:, 0])
            actor_obj = jnp.sum(-logp * td) + beta * jnp.sum(pi * jnp.log(pi + ENTROPY_EPS))
            critic_obj = jnp.mean((big_r - v) ** 2)
            return actor_obj, critic_obj

        def grads(actor, critic, s, a, r, beta):
            ga = jax.grad(lambda p: losses(p, critic, s, a, r, beta)[0])(actor)
            gc = jax.grad(lambda p: losses(actor, p, s, a, r, beta)[1])(critic)
            return ga, gc

        def round_(actor, critic, sa, sc, S, A, R, beta):
            ga, gc = jax.vmap(grads, in_axes=(None, None, 0, 0, 0, None))(actor, critic, S, A, R, beta)

            def apply(carry, g):
                actor, critic, sa, sc = carry
                ua, sa = self.opt_a.update(g[0], sa, actor)
                uc, sc = self.opt_c.update(g[1], sc, critic)
                return (optax.apply_updates(actor, ua), optax.apply_updates(critic, uc), sa, sc), None

            (actor, critic, sa, sc), _ = jax.lax.scan(apply, (actor, critic, sa, sc), (ga, gc))
            return actor, critic, sa, sc

        self._probs = jax.jit(probs)
        self._round = jax.jit(round_)

    def _play(self, envs, rng, reset_kw=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every env plays one video in lockstep; states [E, T, 48], actions and rewards [E, T]."""
        for e in envs:
            e.reset(**(reset_kw or {}))
        S, A, R = [], [], []
        done = False
        while not done:
            s = np.stack([e.observation.reshape(-1) for e in envs]).astype(np.float32)
            a = sample_actions(np.asarray(self._probs(self.actor, s)), rng)
            out = [e.step_fast(int(x)) for e, x in zip(envs, a)]
            S.append(s)
            A.append(a)
            R.append([r for r, _ in out])
            done = out[0][1]
            if any(d != done for _, d in out):
                raise RuntimeError("the agents' videos differ in length")
        return np.stack(S, 1), np.stack(A, 1), np.asarray(R, dtype=np.float32).T

    def iteration(self, i: int, total: int) -> float:
        S, A, R = self._play(self.envs, self.rng)
        beta = np.float32(entropy_weight(i, total))
        self.actor, self.critic, self.sa, self.sc = self._round(self.actor, self.critic, self.sa, self.sc,
                                                                S, A.astype(np.int32), R, beta)
        return float(R.sum(axis=1).mean())

    def test_qoe(self, seed: int = 42) -> float:
        """Mean linear QoE per chunk over the held-out traces (each once, from its start)."""
        _, _, R = self._play(self.test_env, np.random.default_rng(seed), {"seed": seed})
        return float(R.mean(axis=1).mean())

    def actor_arrays(self) -> dict[str, np.ndarray]:
        return {f"{k}.{i}": np.asarray(v) for k, pair in self.actor.items() for i, v in enumerate(pair)}


def train(train_traces, test_traces, modified: bool, iterations: int, seed: int = 0, eval_every: int = 100,
          agents: int = AGENTS, progress: Callable[[int, float], None] | None = None) -> tuple[Curve, Trainer]:
    t0 = time.perf_counter()
    tr = Trainer(train_traces, test_traces, modified, seed, agents)
    curve = Curve("modified" if modified else "original", seed)
    for i in range(iterations + 1):
        if i % eval_every == 0 or i == iterations:
            q = tr.test_qoe()
            curve.iterations.append(i)
            curve.test_qoe.append(q)
            if progress:
                progress(i, q)
        if i < iterations:
            tr.iteration(i, iterations)
    curve.seconds = time.perf_counter() - t0
    return curve, tr


def window(curve: Curve, share: float = 0.1) -> int:
    """The smoothing window: `share` of the evaluations, at least one."""
    return max(1, int(round(len(curve.test_qoe) * share)))


def smoothed(curve: Curve, w: int) -> np.ndarray:
    """Trailing moving mean of the test QoE over `w` evaluations (fewer at the start)."""
    q = np.asarray(curve.test_qoe, dtype=float)
    return np.array([q[max(0, j - w + 1):j + 1].mean() for j in range(len(q))])


def final_level(curve: Curve, w: int | None = None) -> float:
    """The smoothed test QoE at the end of the run."""
    return float(smoothed(curve, w or window(curve))[-1])


def iterations_to_reach(curve: Curve, level: float, w: int | None = None) -> int | None:
    """The first evaluated iteration at which the smoothed test QoE reaches `level`; None if it
    never does. With the same window, a curve reaches its own final level by its end."""
    s = smoothed(curve, w or window(curve))
    hit = np.flatnonzero(s >= level - 1e-12)
    return curve.iterations[int(hit[0])] if len(hit) else None


def compare(original: Curve, modified: Curve) -> dict:
    """The design case's figures for one seed: each network's final (smoothed) test QoE, their
    ratio (None unless the original's is positive), when each reaches the original's final
    level, and the iterations the modified network saves (None if either never does)."""
    lo, lm = final_level(original), final_level(modified)
    reach_o, reach_m = iterations_to_reach(original, lo), iterations_to_reach(modified, lo)
    return {"seed": original.seed, "original_final_qoe": lo, "modified_final_qoe": lm,
            "modified_vs_original": lm / lo if lo > 0 else None,
            "original_reaches_its_final_level_at": reach_o, "modified_reaches_it_at": reach_m,
            "iterations_saved": reach_o - reach_m if reach_o is not None and reach_m is not None else None}
