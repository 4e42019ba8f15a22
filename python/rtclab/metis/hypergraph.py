"""Metis' hypergraph interpretation of a global system (spec `zhuge-metis.md` B.5; Meng et al.,
"Interpreting Deep Learning-Based Networking Systems", SIGCOMM'20 §4; released code
transys-project/metis `interpret-routenet/routenet_with_link_cap_explain.py`).

The system is a hypergraph: links are vertices, paths are hyperedges; the incidence I[l, p] = 1
where path p crosses link l. A fractional mask W of I's shape, initialised to 0, gives
M = sigmoid(W ⊙ I) on the connections (0.5 at the start). The frozen model reads every link
state a path's GRU consumes scaled by its connection's M, and W alone is trained (Adam, lr
0.001, ×0.8 every 82,000 steps) on

    L(W) = MSE(f(x; I), f(x; M)) + 0.25 · mean(M) + 2.0 · mean(H(M)),   H the binary entropy

over one sample's connections: stay faithful to the unmasked model, keep few connections, decide
each one. Connections the fit keeps near 1 are the critical ones; a link's importance is the sum
of its connections' masks (`link_weight`) and their mean (`link_weight_mean`).

As in the released code, both model calls run the readout in training mode (dropout on), so the
fit is stochastic and its seed matters: the seed-to-seed overlap of the top connections says
how stable an interpretation is.

The ad-hoc adjustment (released `optimize_routing`): one path is rerouted by Dijkstra over the
directed links weighted by their mask importance (`link_weight`), and the changed routing is
evaluated again — by the model, and here also by running it in rtclab's simulator.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

import numpy as np

from rtclab.metis.routenet import Batch, Model, forward

SIZE_WEIGHT = 0.25
ENTROPY_WEIGHT = 2.0
LR = 1e-3
STEPS = 2000
DECAY_STEPS = 82_000
DECAY = 0.8


@dataclass
class Explanation:
    """A trained mask over one sample's connections."""

    mask: np.ndarray  # [P, H]; 0 where a path has no hop
    valid: np.ndarray  # [P, H]
    idx: np.ndarray  # [P, H] link of each connection
    losses: list[tuple[int, float, float, float, float]]  # (step, total, fidelity, size, entropy)
    seconds: float
    #: The mask after 90 % of the steps: `decision_flips` compares the end with it.
    mask_at_90: np.ndarray | None = None

    def decision_flips(self) -> float:
        """Share of connections whose decision (kept: M > 0.5) changed over the last 10 % of the
        steps: 0 once the interpretation has settled, whatever the entropy term still gains."""
        if self.mask_at_90 is None:
            return float("nan")
        v = self.valid
        return float(np.mean((self.mask[v] > 0.5) != (self.mask_at_90[v] > 0.5)))

    def convergence(self) -> float:
        """Relative change of the mean total loss between the last 10 % of the logged points and
        the 10 % before them: near 0 once the fit has converged (spec B.9, acceptance test 4)."""
        v = np.array([x[1] for x in self.losses])
        n = max(1, len(v) // 10)
        if len(v) < 2 * n or len(v) < 2:
            return float("nan")
        last, before = v[-n:].mean(), v[-2 * n:-n].mean()
        return float(abs(last - before) / abs(last))

    def connections(self) -> list[tuple[float, int, int, int]]:
        """(mask, path, hop, link) for every connection, most critical first."""
        P, H = self.valid.shape
        out = [(float(self.mask[p, h]), p, h, int(self.idx[p, h])) for p in range(P) for h in range(H) if self.valid[p, h]]
        return sorted(out, key=lambda c: (-c[0], c[1], c[2]))

    def top(self, n: int) -> list[tuple[int, int]]:
        """The `n` most critical (link, path) connections."""
        return [(link, p) for _, p, _, link in self.connections()[:n]]

    def link_weight(self, n_links: int) -> tuple[np.ndarray, np.ndarray]:
        """(Σ_paths M, Σ_paths M / Σ_paths I) per link; the mean is NaN for an unused link."""
        total = np.zeros(n_links)
        count = np.zeros(n_links)
        np.add.at(total, self.idx[self.valid], self.mask[self.valid])
        np.add.at(count, self.idx[self.valid], 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return total, np.where(count > 0, total / np.maximum(count, 1), np.nan)


@lru_cache(maxsize=4)
def _stepper(lr: float):
    """The optimiser and one jitted mask step for a learning rate. The model, the sample and the
    mask are arguments, so every `explain` call (seeds, samples of one shape) reuses one compiled
    step instead of compiling its own."""
    import jax
    import jax.numpy as jnp
    import optax

    def loss_fn(w, key, params, cap, rate, idx, valid):
        vf = valid.astype(jnp.float32)
        n = jnp.maximum(vf.sum(), 1.0)
        k1, k2 = jax.random.split(key)
        m = jax.nn.sigmoid(w * vf)
        full = forward(params, cap, rate, idx, valid, None, k1)
        masked = forward(params, cap, rate, idx, valid, m, k2)
        fid = jnp.mean((full - masked) ** 2)
        size = jnp.sum(m * vf) / n
        ent = -jnp.sum(vf * (m * jnp.log(m + 1e-9) + (1 - m) * jnp.log(1 - m + 1e-9))) / n
        return fid + SIZE_WEIGHT * size + ENTROPY_WEIGHT * ent, (fid, size, ent)

    opt = optax.adam(optax.exponential_decay(lr, DECAY_STEPS, DECAY, staircase=True))

    @jax.jit
    def step(w, s, key, params, cap, rate, idx, valid):
        (val, parts), g = jax.value_and_grad(loss_fn, has_aux=True)(w, key, params, cap, rate, idx, valid)
        upd, s = opt.update(g, s, w)
        return optax.apply_updates(w, upd), s, val, parts

    return opt, step


def explain(model: Model, sample: Batch, steps: int = STEPS, seed: int = 1, lr: float = LR,
            on_step: Optional[Callable[[int, float], None]] = None, log_every: int = 50) -> Explanation:
    """Fits the mask to one sample (`sample` holds one sample: index 0 is used)."""
    import jax
    import jax.numpy as jnp

    cap, rate, idx, valid = (jnp.asarray(a[0]) for a in (sample.cap, sample.rate, sample.idx, sample.valid))
    vf = valid.astype(jnp.float32)
    params = model.params
    opt, step = _stepper(float(lr))
    w = jnp.zeros(idx.shape, jnp.float32)
    state = opt.init(w)
    key = jax.random.PRNGKey(seed)
    losses = []
    t0 = time.perf_counter()
    at_90 = None
    for i in range(1, steps + 1):
        key, sub = jax.random.split(key)
        w, state, val, (fid, size, ent) = step(w, state, sub, params, cap, rate, idx, valid)
        if i == max(1, (9 * steps) // 10):
            at_90 = np.asarray(jax.nn.sigmoid(w * vf)) * np.asarray(valid)
        if i == 1 or i % log_every == 0 or i == steps:
            losses.append((i, float(val), float(fid), float(size), float(ent)))
            if on_step is not None:
                on_step(i, float(val))
    mask = np.asarray(jax.nn.sigmoid(w * vf)) * np.asarray(valid)
    return Explanation(mask, np.asarray(valid), np.asarray(idx), losses, time.perf_counter() - t0, at_90)


def overlap(a: list, b: list) -> float:
    """Share of `a`'s items also in `b` (top-k overlap)."""
    return len(set(a) & set(b)) / max(1, len(a))
