"""AuTO's two agents on rtclab's datacenter fabric (`rtclab.metis.dcenv`), trained as the paper
describes, and Metis' trees of them (spec `zhuge-metis.md` B.2, B.8; dissertation §5.3.2 step 3
and §5.5.6; issue 43 item 3).

Lineage: Chen, Li, Chen, Lin, Wang, "AuTO: Scaling Deep Reinforcement Learning for
Datacenter-Scale Automatic Traffic Optimization", SIGCOMM'18 (PS/CS split, sRLA by DDPG, lRLA by
policy gradient); the lRLA network shape of transys-project/metis
`interpret-auto/lime_simple_model.py` (Dense 300 sigmoid → BatchNorm → Dense softmax); Lillicrap
et al., "Continuous control with deep reinforcement learning", ICLR'16 (DDPG); Williams 1992
(REINFORCE). Our own code, JAX + optax (ADR 0006).

- **sRLA** (short flows): every `PERIOD_S` it sets the four MLFQ thresholds α1..α4 from what
  the flows finished in the last period looked like (per size bin: share of flows and mean log
  slowdown; the current thresholds; the offered load). Its actor is a deterministic policy
  (17 → 64 → 64 → 4, tanh), trained by DDPG with a critic Q(s, a) (21 → 64 → 64 → 1), a replay
  buffer, target networks (τ 0.01) and Gaussian exploration noise.
- **lRLA** (long flows): every `PERIOD_L` it gives each long flow (one that has sent α4 bytes)
  a priority among the four long-flow queues, from that flow's attained service and age, its
  queue, the counts of long and short flows, its rank among the long flows, the long flows' mean
  attained service and the offered load (8 inputs). Its network is the released shape with our
  sizes: 8 → Dense 300 sigmoid → BatchNorm → Dense 4 softmax; trained by REINFORCE with a
  per-period baseline and an entropy bonus.
- **Reward** (both): the mean of size / FCT over the flows finished in the period, over the
  capacity (= the mean of 1 / slowdown; the period's reward carries over when none finished).
  AuTO's objective is that average throughput; its reward is the *ratio* of consecutive
  periods' values, whose expectation is near 1 under any stationary policy (no gradient signal
  about the level), so we reward the level itself.

Where we differ from the paper, besides the reward: the released lRLA reads 143 inputs (11 active
flows × 5-tuple + priority, 11 finished flows × 5-tuple + size + FCT) and picks one of 36 outputs;
our fabric has one bottleneck port, where 5-tuples carry no information, so the lRLA decides per
flow from that flow's state and the port's (8 inputs, 4 priorities). BatchNorm normalises with
running statistics (updated from every training batch, as in inference mode) both when acting and
when learning, so the policy that acts is the policy whose gradient is taken.

Each agent is trained, converted and compared in the setting it decides in: the sRLA with long
flows fair-shared in queue 4, the lRLA under the default (PIAS) thresholds, where long flows
exist whatever an sRLA learns — an sRLA may raise α4 past every flow size and leave an lRLA
trained under it nothing to decide (ours does on web search). The joint system (both DNNs, both
trees) is evaluated as well.

Metis: a DAgger loop per agent (its tree acts after the first iteration, its DNN labels every
visited state): the lRLA into a classification tree (CART, cost-complexity pruned to
`max_leaves` by hold-out accuracy), the sRLA into one regression tree per threshold (the actor's
tanh outputs; pruned by hold-out MSE) — "continuous outputs, e.g. queue thresholds → regression
tree" [D §5.3.2 step 3].
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rtclab.metis.dcenv import DEFAULT_THRESHOLDS, LONG_QUEUES, SHORT_QUEUES, Fabric, Finished, slowdown

PERIOD_L = 0.01        # s, lRLA decision period
PERIOD_S = 0.1         # s, sRLA decision period
EPISODE_S = 2.0        # s of fabric time per training episode
CAPACITY_BPS = 10e9
LOAD = 0.7
MAX_LONG = 64          # long flows the lRLA decides for per period (most attained service first)
SIZE_BINS = np.array([1e4, 3e4, 1e5, 3e5, 1e6])   # bytes: 6 bins for the sRLA state
LOG_A1 = (3.0, 5.0)    # log10 bytes: range of α1
DECADES = 1.5          # the most α_k may exceed α_{k−1}, in decades

LRLA_FEATURES = ["log10 attained bytes", "log10 age (s)", "long queue (0-3)", "long flows", "short flows",
                 "rank of attained service", "log10 mean attained bytes (long)", "offered load"]
SRLA_FEATURES = ([f"share of flows < {b / 1e3:g} KB" for b in SIZE_BINS] + ["share of flows ≥ 1 MB"]
                 + [f"log10 slowdown, bin {i}" for i in range(6)]
                 + [f"log10 α{k + 1}" for k in range(SHORT_QUEUES)] + ["offered load"])

# ----------------------------------------------------------------------------- state and action


def thresholds_of(a: np.ndarray) -> np.ndarray:
    """sRLA action (4 values in [−1, 1]) → increasing thresholds in bytes."""
    a = np.clip(np.asarray(a, float), -1.0, 1.0)
    lo, hi = LOG_A1
    logs = lo + (a[0] + 1.0) / 2.0 * (hi - lo) + np.concatenate([[0.0], np.cumsum((a[1:] + 1.0) / 2.0 * DECADES)])
    return 10.0 ** logs


class Observer:
    """Keeps what the agents' states need between decisions: the flows finished and the bytes
    offered since the last sRLA decision."""

    def __init__(self, fab: Fabric):
        self.fab = fab
        self.since: list[Finished] = []
        self.bytes0, self.t0 = fab.arrived_bytes, fab.now
        self.load = fab.load

    def add(self, fin: Finished) -> None:
        if len(fin):
            self.since.append(fin)

    def srla_state(self) -> np.ndarray:
        f = Finished.concat(self.since)
        dt = self.fab.now - self.t0
        if dt > 0:
            self.load = (self.fab.arrived_bytes - self.bytes0) / (self.fab.capacity * dt)
        self.since, self.bytes0, self.t0 = [], self.fab.arrived_bytes, self.fab.now
        share, slow = np.zeros(6), np.zeros(6)
        if len(f):
            b = np.searchsorted(SIZE_BINS, f.size, side="right")
            sd = np.log10(slowdown(f, self.fab.capacity * 8.0))
            share = np.bincount(b, minlength=6) / len(f)
            cnt = np.bincount(b, minlength=6)
            slow = np.where(cnt > 0, np.bincount(b, weights=sd, minlength=6) / np.maximum(cnt, 1), 0.0)
        return np.concatenate([share, slow, np.log10(self.fab.thresholds), [self.load]])

    def lrla_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(indices of the long flows decided for, their 8 features)."""
        fab = self.fab
        idx = fab.active_long()
        if len(idx) > MAX_LONG:
            idx = idx[np.argsort(-fab.sent[idx], kind="stable")[:MAX_LONG]]
        n = len(idx)
        if n == 0:
            return idx, np.zeros((0, len(LRLA_FEATURES)))
        sent = fab.sent[idx]
        rank = np.argsort(np.argsort(sent, kind="stable"), kind="stable") / max(1, n - 1)
        x = np.column_stack([np.log10(sent), np.log10(fab.now - fab.arr[idx] + 1e-6), fab.long_q[idx].astype(float),
                             np.full(n, float(n)), np.full(n, float(len(fab.size) - n)), rank,
                             np.full(n, np.log10(sent.mean())), np.full(n, self.load)])
        return idx, x


def reward(fin: Finished, capacity_bps: float) -> float | None:
    if not len(fin):
        return None
    return float(np.mean(1.0 / slowdown(fin, capacity_bps)))


# ----------------------------------------------------------------------------- controllers

SrlaPolicy = Callable[[np.ndarray], np.ndarray]          # state (17,) → action (4,) in [−1, 1]
LrlaPolicy = Callable[[np.ndarray], np.ndarray]          # features (n, 8) → levels (n,)


@dataclass
class Episode:
    finished: Finished
    srla_states: list = field(default_factory=list)
    srla_actions: list = field(default_factory=list)
    lrla_states: list = field(default_factory=list)      # per lRLA period: (n, 8)
    lrla_actions: list = field(default_factory=list)
    rewards_l: list = field(default_factory=list)        # per lRLA period
    rewards_s: list = field(default_factory=list)        # per sRLA period


def run(srla: SrlaPolicy | None, lrla: LrlaPolicy | None, seed: int, seconds: float = EPISODE_S,
        workload: str = "websearch", load: float = LOAD, capacity_bps: float = CAPACITY_BPS,
        record: bool = False, thresholds=None, drain: bool = False) -> Episode:
    """One episode of the fabric under the two agents (None: the default thresholds / queue 4;
    `thresholds` fixes the MLFQ thresholds in bytes instead of an sRLA). With `drain`, arrivals
    stop after `seconds` and the agents go on until every flow has finished, so that every policy
    is scored on the same flows (without it, the flows a policy leaves unfinished would drop out
    of its FCT)."""
    fab = Fabric(workload, load, capacity_bps, seed)
    if thresholds is not None:
        fab.set_thresholds(thresholds)
    obs = Observer(fab)
    ep = Episode(Finished.empty())
    parts: list[Finished] = []
    steps_per_s = int(round(PERIOD_S / PERIOD_L))
    last_l = last_s = 0.0
    acc_s: list[Finished] = []
    steps = int(round(seconds / PERIOD_L))
    step = -1
    while True:
        step += 1
        if step >= steps:
            if not (drain and len(fab.size)):
                break
            fab.stop_arrivals()
        if step % steps_per_s == 0:
            s = obs.srla_state()
            if step > 0 and record:
                r = reward(Finished.concat(acc_s), capacity_bps)
                last_s = r if r is not None else last_s
                ep.rewards_s.append(last_s)
            acc_s = []
            if srla is not None:
                a = np.asarray(srla(s), float)
                fab.set_thresholds(thresholds_of(a))
                if record:
                    ep.srla_states.append(s)
                    ep.srla_actions.append(a)
        idx, x = obs.lrla_state()
        if lrla is not None and len(idx):
            lv = np.asarray(lrla(x), np.int64)
            fab.set_long_priority(idx, lv)
            if record:
                ep.lrla_states.append(x)
                ep.lrla_actions.append(lv)
        elif record:
            ep.lrla_states.append(np.zeros((0, len(LRLA_FEATURES))))
            ep.lrla_actions.append(np.zeros(0, np.int64))
        fin = fab.advance((step + 1) * PERIOD_L)
        obs.add(fin)
        acc_s.append(fin)
        parts.append(fin)
        if record:
            r = reward(fin, capacity_bps)
            last_l = r if r is not None else last_l
            ep.rewards_l.append(last_l)
    if record and srla is not None:
        r = reward(Finished.concat(acc_s), capacity_bps)
        ep.rewards_s.append(r if r is not None else last_s)
    ep.finished = Finished.concat(parts)
    return ep


# ----------------------------------------------------------------------------- networks (numpy forward)


def _dense(p, name, x):
    return x @ p[name + "_w"] + p[name + "_b"]


def lrla_hidden(p: dict, x, xp=np):
    """The lRLA's first layer: fixed feature scaling, Dense 300, sigmoid (BatchNorm's input)."""
    return 1.0 / (1.0 + xp.exp(-_dense(p, "l1", (x - p["in_mean"]) / p["in_std"])))


def lrla_forward(p: dict, x, xp=np):
    """Dense 300 sigmoid → BatchNorm (running statistics) → Dense 4 softmax; the input first
    scaled by fixed feature scales."""
    h = lrla_hidden(p, x, xp)
    h = (h - p["bn_mean"]) / xp.sqrt(p["bn_var"] + 1e-3) * p["bn_gamma"] + p["bn_beta"]
    z = _dense(p, "l2", h)
    z = z - z.max(axis=-1, keepdims=True)
    e = xp.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def srla_forward(p: dict, s, xp=np):
    h = xp.maximum(0.0, _dense(p, "a1", (s - p["in_mean"]) / p["in_std"]))
    h = xp.maximum(0.0, _dense(p, "a2", h))
    return xp.tanh(_dense(p, "a3", h))


def _glorot(rng, fan_in, fan_out):
    lim = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-lim, lim, (fan_in, fan_out))


# Fixed input scales (rough spreads of each feature on the default fabric).
_L_MEAN = np.array([6.5, -1.5, 1.5, 5.0, 5.0, 0.5, 6.5, 0.7])
_L_STD = np.array([1.0, 1.0, 1.2, 5.0, 10.0, 0.3, 1.0, 0.3])
_S_MEAN = np.concatenate([np.full(6, 1 / 6), np.full(6, 0.2), [4.0, 5.0, 6.0, 7.0], [0.7]])
_S_STD = np.concatenate([np.full(6, 0.2), np.full(6, 0.3), np.full(4, 1.0), [0.3]])


def init_lrla(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = len(LRLA_FEATURES)
    return {"in_mean": _L_MEAN, "in_std": _L_STD, "l1_w": _glorot(rng, n, 300), "l1_b": np.zeros(300),
            "bn_mean": np.full(300, 0.5), "bn_var": np.full(300, 0.04), "bn_gamma": np.ones(300),
            "bn_beta": np.zeros(300), "l2_w": _glorot(rng, 300, LONG_QUEUES), "l2_b": np.zeros(LONG_QUEUES)}


def init_srla(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    n = len(SRLA_FEATURES)
    actor = {"in_mean": _S_MEAN, "in_std": _S_STD, "a1_w": _glorot(rng, n, 64), "a1_b": np.zeros(64),
             "a2_w": _glorot(rng, 64, 64), "a2_b": np.zeros(64), "a3_w": rng.uniform(-3e-3, 3e-3, (64, SHORT_QUEUES)),
             "a3_b": np.zeros(SHORT_QUEUES)}
    critic = {"c1_w": _glorot(rng, n + SHORT_QUEUES, 64), "c1_b": np.zeros(64), "c2_w": _glorot(rng, 64, 64),
              "c2_b": np.zeros(64), "c3_w": rng.uniform(-3e-3, 3e-3, (64, 1)), "c3_b": np.zeros(1)}
    return actor, critic


FIXED = ("in_mean", "in_std", "bn_mean", "bn_var")


# ----------------------------------------------------------------------------- sRLA: DDPG


@dataclass
class TrainLog:
    agent: str
    episodes: list = field(default_factory=list)     # (episode, mean reward)
    seconds: float = 0.0


def train_srla(steps: int, seed: int = 0, workload: str = "websearch", progress: Callable | None = None,
               gamma: float = 0.9, batch: int = 64, tau: float = 0.01, noise: tuple = (0.3, 0.05),
               episode_steps: int = 20, critic_l2: float = 1e-2, load: float = LOAD) -> tuple[dict, TrainLog]:
    """DDPG: `steps` sRLA decisions, rounded up to whole episodes of `episode_steps` decisions (a
    fresh fabric seed each), one critic and one actor update per decision once the buffer holds a
    batch."""
    import jax
    import jax.numpy as jnp
    import optax

    t0 = time.perf_counter()
    actor, critic = init_srla(seed)
    fixed = {k: actor[k] for k in FIXED if k in actor}
    A = {k: jnp.asarray(v) for k, v in actor.items() if k not in FIXED}
    C = {k: jnp.asarray(v) for k, v in critic.items()}
    At, Ct = A, C
    oa, oc = optax.adam(1e-4), optax.adam(1e-3)
    sa, sc = oa.init(A), oc.init(C)

    def q(Cp, s, a):
        x = jnp.concatenate([(s - fixed["in_mean"]) / fixed["in_std"], a], axis=-1)
        h = jax.nn.relu(x @ Cp["c1_w"] + Cp["c1_b"])
        h = jax.nn.relu(h @ Cp["c2_w"] + Cp["c2_b"])
        return (h @ Cp["c3_w"] + Cp["c3_b"])[..., 0]

    def act(Ap, s):
        return srla_forward({**fixed, **Ap}, s, jnp)

    @jax.jit
    def update(A, C, At, Ct, sa, sc, s, a, r, s2):
        y = r + gamma * q(Ct, s2, act(At, s2))
        l2 = lambda Cp: sum(jnp.sum(Cp[k] ** 2) for k in Cp if k.endswith("_w"))  # noqa: E731
        lc, gc = jax.value_and_grad(lambda Cp: jnp.mean((q(Cp, s, a) - y) ** 2) + critic_l2 * l2(Cp))(C)
        uc, sc = oc.update(gc, sc, C)
        C = optax.apply_updates(C, uc)
        ga = jax.grad(lambda Ap: -jnp.mean(q(C, s, act(Ap, s))))(A)
        ua, sa = oa.update(ga, sa, A)
        A = optax.apply_updates(A, ua)
        At = jax.tree_util.tree_map(lambda t, x: (1 - tau) * t + tau * x, At, A)
        Ct = jax.tree_util.tree_map(lambda t, x: (1 - tau) * t + tau * x, Ct, C)
        return A, C, At, Ct, sa, sc, lc

    rng = np.random.default_rng(seed + 1)
    buf_s, buf_a, buf_r, buf_s2 = [], [], [], []
    log = TrainLog("sRLA")
    episodes = max(1, -(-steps // episode_steps))   # whole episodes, at least `steps` decisions
    for ep_i in range(episodes):
        sigma = noise[0] + (noise[1] - noise[0]) * ep_i / max(1, episodes - 1)
        An = {**fixed, **{k: np.asarray(v) for k, v in A.items()}}

        def policy(s, An=An, sigma=sigma):
            return np.clip(srla_forward(An, s) + rng.normal(0, sigma, SHORT_QUEUES), -1, 1)

        ep = run(policy, None, seed=10_000 * (seed + 1) + ep_i, seconds=episode_steps * PERIOD_S,
                 workload=workload, load=load, record=True)
        S, Aa, R = np.array(ep.srla_states), np.array(ep.srla_actions), np.array(ep.rewards_s)
        for i in range(len(S) - 1):
            buf_s.append(S[i]), buf_a.append(Aa[i]), buf_r.append(R[i]), buf_s2.append(S[i + 1])
        buf_s, buf_a, buf_r, buf_s2 = (x[-20_000:] for x in (buf_s, buf_a, buf_r, buf_s2))
        if len(buf_s) >= batch:
            bs, ba, br, bs2 = map(np.asarray, (buf_s, buf_a, buf_r, buf_s2))
            for _ in range(len(S) - 1):
                j = rng.integers(0, len(bs), batch)
                A, C, At, Ct, sa, sc, _ = update(A, C, At, Ct, sa, sc, bs[j], ba[j], br[j], bs2[j])
        log.episodes.append((ep_i, float(np.mean(R))))
        if progress:
            progress(ep_i + 1, episodes, float(np.mean(R)))
    log.seconds = time.perf_counter() - t0
    return {**fixed, **{k: np.asarray(v) for k, v in A.items()}}, log


def srla_policy(actor: dict) -> SrlaPolicy:
    return lambda s: srla_forward(actor, s)


# ----------------------------------------------------------------------------- lRLA: REINFORCE


def train_lrla(episodes: int, srla: SrlaPolicy | None = None, seed: int = 0, workload: str = "websearch",
               progress: Callable | None = None, gamma: float = 0.9, lr: float = 1e-3, entropy: float = 0.01,
               bn_momentum: float = 0.05, load: float = LOAD) -> tuple[dict, TrainLog]:
    """REINFORCE: one episode per update; every long flow's action in period t is credited with
    the discounted return from t, minus the mean return of the episode's periods (baseline)."""
    import jax
    import jax.numpy as jnp
    import optax

    t0 = time.perf_counter()
    p = init_lrla(seed)
    fixed = {k: p[k] for k in FIXED}
    P = {k: jnp.asarray(v) for k, v in p.items() if k not in FIXED}
    opt = optax.adam(lr)
    st = opt.init(P)

    def loss(Pp, fx, x, a, adv):
        pr = lrla_forward({**fx, **Pp}, x, jnp)
        logp = jnp.log(jnp.take_along_axis(pr, a[:, None], axis=1)[:, 0] + 1e-8)
        ent = -jnp.sum(pr * jnp.log(pr + 1e-8), axis=1)
        return -jnp.mean(logp * adv + entropy * ent)

    @jax.jit
    def step(P, st, fx, x, a, adv):
        g = jax.grad(loss)(P, fx, x, a, adv)
        u, st = opt.update(g, st, P)
        return optax.apply_updates(P, u), st

    rng = np.random.default_rng(seed + 7)
    log = TrainLog("lRLA")
    for ep_i in range(episodes):
        Pn = {**fixed, **{k: np.asarray(v) for k, v in P.items()}}

        def policy(x, Pn=Pn):
            return sample_levels(lrla_forward(Pn, x), rng)

        ep = run(srla, policy, seed=20_000 * (seed + 1) + ep_i, workload=workload, load=load, record=True)
        r = np.asarray(ep.rewards_l)
        G = np.zeros_like(r)
        acc = 0.0
        for t in range(len(r) - 1, -1, -1):
            acc = r[t] + gamma * acc
            G[t] = acc
        adv_t = (G - G.mean()) / (G.std() + 1e-8)
        X = [x for x in ep.lrla_states if len(x)]
        if X:
            x = np.concatenate(X)
            a = np.concatenate([a for a in ep.lrla_actions if len(a)])
            adv = np.concatenate([np.full(len(s), adv_t[t]) for t, s in enumerate(ep.lrla_states) if len(s)])
            # BatchNorm's running statistics from this batch's hidden layer (inference-mode BN).
            h = lrla_hidden(Pn, x)
            fixed["bn_mean"] = (1 - bn_momentum) * fixed["bn_mean"] + bn_momentum * h.mean(axis=0)
            fixed["bn_var"] = (1 - bn_momentum) * fixed["bn_var"] + bn_momentum * h.var(axis=0)
            P, st = step(P, st, {k: jnp.asarray(v) for k, v in fixed.items()}, jnp.asarray(x), jnp.asarray(a),
                         jnp.asarray(adv))
        log.episodes.append((ep_i, float(r.mean())))
        if progress:
            progress(ep_i + 1, episodes, float(r.mean()))
    log.seconds = time.perf_counter() - t0
    return {**fixed, **{k: np.asarray(v) for k, v in P.items()}}, log


def sample_levels(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random((len(probs), 1))
    return np.minimum((np.cumsum(probs, axis=1) < u).sum(axis=1), probs.shape[1] - 1)


def lrla_policy(p: dict) -> LrlaPolicy:
    """Greedy: the most probable level."""
    return lambda x: lrla_forward(p, x).argmax(axis=1)


# ----------------------------------------------------------------------------- baselines


def las_policy(x: np.ndarray) -> np.ndarray:
    """Least attained service among long flows: one queue lower per decade of attained bytes
    past 1 MB (info-agnostic, like the MLFQ above it)."""
    return np.clip(np.floor(x[:, 0] - 6.0), 0, LONG_QUEUES - 1).astype(np.int64)


def fixed_srla(a) -> SrlaPolicy:
    a = np.asarray(a, float)
    return lambda _s: a


def action_of_thresholds(thr) -> np.ndarray:
    """The sRLA action that gives these thresholds (inverse of `thresholds_of`)."""
    logs = np.log10(np.asarray(thr, float))
    lo, hi = LOG_A1
    a0 = (logs[0] - lo) / (hi - lo) * 2.0 - 1.0
    rest = np.diff(logs) / DECADES * 2.0 - 1.0
    return np.clip(np.concatenate([[a0], rest]), -1, 1)


# ----------------------------------------------------------------------------- Metis conversion


@dataclass
class Conversion:
    lrla_tree: object
    srla_trees: list
    seconds: float
    iterations: int
    lrla_accuracy: float          # hold-out, vs the DNN's greedy level
    srla_rmse: list               # hold-out, per threshold (tanh units)
    samples_l: int
    samples_s: int
    log: list = field(default_factory=list)


def tree_policies(conv: Conversion) -> tuple[SrlaPolicy, LrlaPolicy]:
    trees = conv.srla_trees

    def srla(s):
        return np.array([t.predict_one(s) for t in trees])

    def lrla(x):
        return conv.lrla_tree.predict(x).astype(np.int64)

    return srla, lrla


def convert(actor: dict, lrla_net: dict, *, iterations: int = 4, episodes: int = 2, max_leaves: int = 100,
            seed: int = 0, workload: str = "websearch", progress: Callable | None = None,
            load: float = LOAD) -> Conversion:
    """DAgger for each agent in the setting it was trained in (iteration 0: the DNN acts; later:
    its tree; the DNN labels every visited state), then CART + CCP: the sRLA with long flows in
    queue 4, the lRLA under the default (PIAS) thresholds."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    from rtclab.metis.tree import Tree, prune

    t0 = time.perf_counter()
    t_pol = s_pol = None
    XL, YL, XS, YS = [], [], [], []
    rng = np.random.default_rng(seed)
    log = []
    conv = None
    for it in range(iterations):
        srla = srla_policy(actor) if it == 0 else s_pol
        lrla = lrla_policy(lrla_net) if it == 0 else t_pol
        for e in range(episodes):
            ep = run(srla, None, seed=30_000 + 100 * seed + 10 * it + e, workload=workload, load=load, record=True)
            S = np.asarray(ep.srla_states)
            XS.append(S)
            YS.append(srla_forward(actor, S))
            ep = run(None, lrla, seed=40_000 + 100 * seed + 10 * it + e, workload=workload, load=load, record=True)
            xl = [x for x in ep.lrla_states if len(x)]
            if xl:
                x = np.concatenate(xl)
                XL.append(x)
                YL.append(lrla_forward(lrla_net, x).argmax(axis=1))
        if not XL:
            raise ValueError(f"no long flow (one that sent {DEFAULT_THRESHOLDS[-1]:.0e} bytes) appeared in "
                             f"{episodes * (it + 1)} rollouts of {EPISODE_S:g} s: the lRLA has nothing to learn from; "
                             "raise the rollouts per iteration or the load")
        xl, yl, xs, ys = np.concatenate(XL), np.concatenate(YL), np.concatenate(XS), np.concatenate(YS)
        # 80/20 split of the samples (by a seeded permutation).
        il, is_ = rng.permutation(len(xl)), rng.permutation(len(xs))
        cl, cs = max(1, int(0.8 * len(xl))), int(0.8 * len(xs))
        est = DecisionTreeClassifier(random_state=seed).fit(xl[il[:cl]], yl[il[:cl]])
        tl = prune(Tree.from_sklearn(est, LRLA_FEATURES), est, max_leaves, xl[il[:cl]], xl[il[cl:]], yl[il[cl:]]).tree
        trees = []
        for k in range(SHORT_QUEUES):
            er = DecisionTreeRegressor(random_state=seed).fit(xs[is_[:cs]], ys[is_[:cs], k])
            trees.append(prune(Tree.from_sklearn(er, SRLA_FEATURES), er, max_leaves, xs[is_[:cs]], xs[is_[cs:]],
                               ys[is_[cs:], k]).tree)
        acc = float(np.mean(tl.predict(xl[il[cl:]]) == yl[il[cl:]])) if len(il) > cl else float("nan")
        rmse = [float(np.sqrt(np.mean((trees[k].predict(xs[is_[cs:]]) - ys[is_[cs:], k]) ** 2)))
                for k in range(SHORT_QUEUES)]
        conv = Conversion(tl, trees, 0.0, it + 1, acc, rmse, len(xl), len(xs))
        s_pol, t_pol = tree_policies(conv)
        log.append({"iteration": it + 1, "lrla_samples": len(xl), "srla_samples": len(xs),
                    "lrla_leaves": tl.leaf_count, "srla_leaves": [t.leaf_count for t in trees],
                    "lrla_holdout_accuracy": acc, "srla_holdout_rmse": rmse})
        if progress:
            progress(it + 1, iterations, log[-1])
    conv.seconds = time.perf_counter() - t0
    conv.log = log
    return conv


# ----------------------------------------------------------------------------- evaluation


@dataclass
class Fct:
    mean_ms: float
    p99_ms: float
    short_mean_ms: float      # flows under 100 KB
    short_p99_ms: float
    long_mean_ms: float       # flows of 10 MB and more
    mean_slowdown: float
    flows: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def fct_of(f: Finished, capacity_bps: float = CAPACITY_BPS) -> Fct:
    ms = f.fct * 1e3
    short, long_ = f.size < 100e3, f.size >= 10e6
    pick = lambda m, fn: float(fn(ms[m])) if m.any() else float("nan")  # noqa: E731
    return Fct(float(ms.mean()), float(np.percentile(ms, 99)), pick(short, np.mean),
               pick(short, lambda v: np.percentile(v, 99)), pick(long_, np.mean),
               float(slowdown(f, capacity_bps).mean()), len(f))


def evaluate(srla: SrlaPolicy | None, lrla: LrlaPolicy | None, seeds: list[int], seconds: float,
             workload: str = "websearch", load: float = LOAD, thresholds=None) -> Fct:
    """FCT of every flow that arrives in the test episodes, each drained (same seeds for every
    policy → the same flows)."""
    eps = [run(srla, lrla, seed=s, seconds=seconds, workload=workload, load=load, thresholds=thresholds, drain=True)
           for s in seeds]
    return fct_of(Finished.concat([e.finished for e in eps]))


def latency_ns(fn: Callable, rows: np.ndarray, repeat: int = 3) -> float:
    """Median wall time of fn(row) over the rows (best of `repeat` passes per row)."""
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter_ns()
            fn(r)
            best = min(best, time.perf_counter_ns() - t)
        out[i] = best
    return float(np.median(out))
