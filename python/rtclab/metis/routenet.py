"""A RouteNet-style graph neural network that predicts each path's mean delay from a topology's
link capacities, a routing and a traffic matrix — the global system Metis interprets (spec
`zhuge-metis.md` B.5).

Lineage: Rusek, Suárez-Varela, Mestres, Barlet-Ros, Cabellos-Aparicio, "Unveiling the potential
of Graph Neural Networks for network modeling and optimization in SDN" (SOSR'19) and "RouteNet:
Leveraging Graph Neural Networks for network modeling and optimization in SDN" (IEEE JSAC 2020),
and the variant Metis' authors interpret (transys-project/metis `interpret-routenet/
routenet_with_link_cap_explain.py`). Link states start from the link's capacity, path states
from the path's traffic; each of T rounds runs a GRU along every path over the states of the
links it crosses (the path's state is the GRU's), then updates each link by a second GRU from
the sum of the path-GRU outputs at that link; a readout (Dense 256 SELU, dropout, Dense 256
SELU, dropout, Dense 1) maps a path's state to its delay. Sizes are B.5's: state 32, readout
256, T = 8, dropout 0.5; the readout kernels carry the L2 penalty. The delay is predicted in
units standardised on the training set (mean and standard deviation kept with the model), as
RouteNet's delay labels are.

`mask` (one factor per (path, position) connection, 1 = the model as trained) multiplies the
link state each path's GRU reads in every round: the hook B.5's hypergraph interpretation
trains (`rtclab.metis.hypergraph`).

JAX with optax (ADR 0006); imported only by the commands that train or interpret.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

STATE = 32
READOUT = 256
ROUNDS = 8
DROPOUT = 0.5
L2 = 0.1
#: Paths are padded to this many hops (every path of the built-in graphs has fewer).
MAX_HOPS_DEFAULT = 12


class ModelError(ValueError):
    """A model file or a training request that cannot be used."""


@dataclass
class Batch:
    """Samples of one topology and shape, stacked: `cap` [B, L], `rate` [B, P], `idx` and `valid`
    [B, P, H] (each path's link indices, padded), `y` [B, P] delay in ms (NaN where unknown)."""

    topology: str
    cap: np.ndarray
    rate: np.ndarray
    idx: np.ndarray
    valid: np.ndarray
    y: np.ndarray

    def __len__(self) -> int:
        return len(self.cap)

    def take(self, sel) -> "Batch":
        return Batch(self.topology, self.cap[sel], self.rate[sel], self.idx[sel], self.valid[sel], self.y[sel])


def batches_of(samples: list[dict[str, Any]], max_hops: int = MAX_HOPS_DEFAULT) -> list[Batch]:
    """Groups data-set samples by topology (same numbers of links and paths) into arrays."""
    groups: dict[str, list[dict]] = {}
    for s in samples:
        groups.setdefault(s["topology"], []).append(s)
    out = []
    for name, ss in groups.items():
        P, L = len(ss[0]["paths"]), len(ss[0]["capacity_mbps"])
        # Padded to the group's longest path (the GRU's steps are the model's main cost).
        H = max(len(path) for s in ss for path in s["paths"])
        if H > max_hops:
            raise ModelError(f"topology {name}: a path of {H} hops; the model takes at most {max_hops}")
        idx = np.zeros((len(ss), P, H), np.int32)
        valid = np.zeros((len(ss), P, H), bool)
        for b, s in enumerate(ss):
            for p, path in enumerate(s["paths"]):
                idx[b, p, : len(path)] = path
                valid[b, p, : len(path)] = True
        y = np.array([[np.nan if d is None else d for d in s.get("delay_ms", [None] * P)] for s in ss], np.float64)
        out.append(Batch(name, np.array([s["capacity_mbps"] for s in ss], np.float32),
                         np.array([s["rate_mbps"] for s in ss], np.float32), idx, valid, y))
        if any(len(s["capacity_mbps"]) != L or len(s["paths"]) != P for s in ss):
            raise ModelError(f"topology {name}: samples of different shapes")
    return out


# ----------------------------------------------------------------------------- the network


def _dense(key, n_in: int, n_out: int):
    import jax

    lim = np.sqrt(6.0 / (n_in + n_out))  # Glorot uniform, as Keras' default
    return {"w": jax.random.uniform(key, (n_in, n_out), minval=-lim, maxval=lim), "b": np.zeros(n_out, np.float32)}


def _gru(key, n_in: int, n: int):
    import jax

    k = jax.random.split(key, 2)
    return {"x": _dense(k[0], n_in, 3 * n), "h": _dense(k[1], n, 3 * n)}


def init_params(seed: int) -> dict:
    import jax

    k = jax.random.split(jax.random.PRNGKey(seed), 5)
    return {
        "path_gru": _gru(k[0], STATE, STATE),
        "link_gru": _gru(k[1], STATE, STATE),
        "r1": _dense(k[2], STATE, READOUT),
        "r2": _dense(k[3], READOUT, READOUT),
        "out": _dense(k[4], READOUT, 1),
    }


def _gru_step(g, x, h):
    """Keras/TF GRU cell (reset gate after the matrix product, `reset_after`)."""
    return _gru_from_gates(g, x @ g["x"]["w"] + g["x"]["b"], h)


def _gru_from_gates(g, gx, h):
    """The GRU cell given its input's projection `gx` = x W + b."""
    import jax
    import jax.numpy as jnp

    gh = h @ g["h"]["w"] + g["h"]["b"]
    zx, rx, nx_ = jnp.split(gx, 3, axis=-1)
    zh, rh, nh = jnp.split(gh, 3, axis=-1)
    z = jax.nn.sigmoid(zx + zh)
    r = jax.nn.sigmoid(rx + rh)
    n = jnp.tanh(nx_ + r * nh)
    return z * h + (1.0 - z) * n


def forward(params, cap, rate, idx, valid, mask=None, dropout_key=None):
    """Standardised delay per path [P] for one sample. `mask` [P, H] scales the link state each
    path reads (None = all ones). With `dropout_key` the readout drops units (training)."""
    import jax
    import jax.numpy as jnp

    L, (P, H) = cap.shape[0], idx.shape
    link = jnp.zeros((L, STATE)).at[:, 0].set(cap / 10.0)
    path = jnp.zeros((P, STATE)).at[:, 0].set(rate)
    m = valid.astype(jnp.float32) if mask is None else mask * valid
    flat_idx = idx.reshape(-1)
    flat_valid = valid.reshape(-1, 1).astype(jnp.float32)
    g = params["path_gru"]

    def round_(carry, _):
        link, path = carry
        # The GRU's input projection of a masked link state, (m · x) W + b = m · (x W) + b: one
        # product per link, gathered per connection (not one per connection).
        gx = (link @ g["x"]["w"])[idx] * m[..., None] + g["x"]["b"]  # [P, H, 3S]

        def hop(h, xs):
            gxj, vj = xs
            hn = _gru_from_gates(g, gxj, h)
            h = jnp.where(vj[:, None], hn, h)
            return h, hn

        path, outs = jax.lax.scan(hop, path, (jnp.swapaxes(gx, 0, 1), valid.T))
        msgs = jnp.swapaxes(outs, 0, 1).reshape(P * H, STATE) * flat_valid
        agg = jax.ops.segment_sum(msgs, flat_idx, num_segments=L)
        return (_gru_step(params["link_gru"], agg, link), path), None

    (link, path), _ = jax.lax.scan(round_, (link, path), None, length=ROUNDS)
    h = jax.nn.selu(path @ params["r1"]["w"] + params["r1"]["b"])
    if dropout_key is not None:
        k1, k2 = jax.random.split(dropout_key)
        h = jnp.where(jax.random.bernoulli(k1, 1 - DROPOUT, h.shape), h / (1 - DROPOUT), 0.0)
    h = jax.nn.selu(h @ params["r2"]["w"] + params["r2"]["b"])
    if dropout_key is not None:
        h = jnp.where(jax.random.bernoulli(k2, 1 - DROPOUT, h.shape), h / (1 - DROPOUT), 0.0)
    return (h @ params["out"]["w"] + params["out"]["b"])[:, 0]


# ----------------------------------------------------------------------------- the model


@dataclass
class Norm:
    delay_mean: float
    delay_std: float


@dataclass
class Model:
    """Trained parameters with the delay normalisation; predicts delay in ms."""

    params: dict
    norm: Norm
    max_hops: int = MAX_HOPS_DEFAULT
    info: Optional[dict] = None

    def predict(self, batch: Batch, mask=None) -> np.ndarray:
        """Delay in ms [B, P]."""
        import jax

        f = _predict_fn()
        out = f(self.params, batch.cap, batch.rate, batch.idx, batch.valid,
                np.ones(batch.idx.shape, np.float32) if mask is None else mask)
        return np.asarray(jax.device_get(out), np.float64) * self.norm.delay_std + self.norm.delay_mean

    def save(self, path: str | os.PathLike) -> None:
        import jax

        flat, _ = jax.tree_util.tree_flatten_with_path(self.params)
        arrays = {jax.tree_util.keystr(k): np.asarray(v) for k, v in flat}
        meta = {"format": "rtclab-routenet/1", "norm": asdict(self.norm), "max_hops": self.max_hops,
                "state": STATE, "readout": READOUT, "rounds": ROUNDS, "info": self.info or {}}
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
        tmp.replace(path)

    @staticmethod
    def load(path: str | os.PathLike) -> "Model":
        import jax

        try:
            z = np.load(path)
            meta = json.loads(bytes(z["__meta__"]).decode())
        except (OSError, ValueError, KeyError) as e:
            raise ModelError(f"{path}: not an rtclab RouteNet model ({e})") from None
        if meta.get("format") != "rtclab-routenet/1" or (meta["state"], meta["readout"], meta["rounds"]) != (STATE, READOUT, ROUNDS):
            raise ModelError(f"{path}: not an rtclab RouteNet model of this version's sizes")
        template = init_params(0)
        flat, tree = jax.tree_util.tree_flatten_with_path(template)
        leaves = []
        for k, v in flat:
            a = z[jax.tree_util.keystr(k)]
            if a.shape != v.shape:
                raise ModelError(f"{path}: parameter {jax.tree_util.keystr(k)} has shape {a.shape}, expected {v.shape}")
            leaves.append(a)
        return Model(jax.tree_util.tree_unflatten(tree, leaves), Norm(**meta["norm"]), meta["max_hops"], meta.get("info"))


_PREDICT = None


def _predict_fn():
    global _PREDICT
    if _PREDICT is None:
        import jax

        _PREDICT = jax.jit(jax.vmap(forward, in_axes=(None, 0, 0, 0, 0, 0)))
    return _PREDICT


def _l2(params) -> Any:
    import jax.numpy as jnp

    return sum(jnp.sum(params[k]["w"] ** 2) for k in ("r1", "r2")) / 2.0


def train(train_set: list[Batch], epochs: int, batch_size: int = 16, lr: float = 1e-3, seed: int = 1,
          l2: float = L2, on_epoch: Optional[Callable[[int, float], None]] = None, max_hops: int = MAX_HOPS_DEFAULT) -> Model:
    """Adam on the mean squared error of standardised delay (paths with a measured delay only)
    plus `l2` × the readout kernels' squared norm / 2 / the number of paths in a batch."""
    import jax
    import jax.numpy as jnp
    import optax

    ys = np.concatenate([b.y[np.isfinite(b.y)] for b in train_set])
    if len(ys) < 2:
        raise ModelError("the training set has no measured delays")
    norm = Norm(float(ys.mean()), float(ys.std() or 1.0))
    params = init_params(seed)
    opt = optax.adam(optax.exponential_decay(lr, transition_steps=max(1, 20 * sum(len(b) for b in train_set) // batch_size),
                                             decay_rate=0.8, staircase=True))
    state = opt.init(params)

    def loss_fn(p, cap, rate, idx, valid, y, key):
        keys = jax.random.split(key, cap.shape[0])
        pred = jax.vmap(lambda c, r, i, v, k: forward(p, c, r, i, v, None, k))(cap, rate, idx, valid, keys)
        ok = jnp.isfinite(y)
        z = jnp.where(ok, (y - norm.delay_mean) / norm.delay_std, 0.0)
        n = jnp.maximum(ok.sum(), 1)
        return jnp.sum(jnp.where(ok, (pred - z) ** 2, 0.0)) / n + l2 * _l2(p) / n

    @jax.jit
    def step(p, s, cap, rate, idx, valid, y, key):
        val, g = jax.value_and_grad(loss_fn)(p, cap, rate, idx, valid, y, key)
        upd, s = opt.update(g, s, p)
        return optax.apply_updates(p, upd), s, val

    rng = np.random.default_rng(seed)
    key = jax.random.PRNGKey(seed)
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        plan = [(bi, sel) for bi, b in enumerate(train_set)
                for sel in np.array_split(rng.permutation(len(b)), max(1, len(b) // batch_size))]
        rng.shuffle(plan)
        total = 0.0
        for bi, sel in plan:
            b = train_set[bi].take(sel)
            key, sub = jax.random.split(key)
            params, state, val = step(params, state, b.cap, b.rate, b.idx, b.valid, b.y, sub)
            total += float(val)
        if on_epoch is not None:
            on_epoch(epoch, total / max(1, len(plan)))
    info = {"epochs": epochs, "batch_size": batch_size, "lr": lr, "seed": seed, "l2": l2,
            "train_samples": sum(len(b) for b in train_set), "train_seconds": round(time.perf_counter() - t0, 1)}
    return Model(params, norm, max_hops, info)


def relative_errors(model: Model, batches: list[Batch]) -> np.ndarray:
    """|predicted − measured| / measured for every path with a measured delay."""
    out = []
    for b in batches:
        pred = model.predict(b)
        ok = np.isfinite(b.y)
        out.append(np.abs(pred[ok] - b.y[ok]) / b.y[ok])
    return np.concatenate(out) if out else np.zeros(0)
