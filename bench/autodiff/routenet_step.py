"""Training speed of one RouteNet step (NSFNet-sized: 182 paths, 42 links, 5 hops; state 32, T =
8, readout 256) in JAX and in PyTorch, on CPU: the measurement behind docs/adr/0006.

    python bench/autodiff/routenet_step.py jax      # needs jax, optax
    python bench/autodiff/routenet_step.py torch    # needs torch

Prints the import time, the first step (JIT compile for JAX) and the median of 50 steps over a
batch of 16 samples. Random inputs: only the cost is measured.
"""

import statistics
import sys
import time

P, L, H, S, R, T, B = 182, 42, 5, 32, 256, 8, 16


def bench_jax():
    t0 = time.perf_counter()
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    from rtclab.metis import routenet as rn

    imp = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    cap = rng.choice([5.0, 10.0, 20.0], (B, L)).astype(np.float32)
    rate = rng.uniform(0.1, 1, (B, P)).astype(np.float32)
    idx = rng.integers(0, L, (B, P, H)).astype(np.int32)
    valid = np.ones((B, P, H), bool)
    y = rng.normal(size=(B, P)).astype(np.float32)
    params = rn.init_params(1)
    opt = optax.adam(1e-3)
    state = opt.init(params)

    def loss(p, key):
        keys = jax.random.split(key, B)
        pred = jax.vmap(lambda c, r, i, v, k: rn.forward(p, c, r, i, v, None, k))(cap, rate, idx, valid, keys)
        return jnp.mean((pred - y) ** 2)

    @jax.jit
    def step(p, s, key):
        v, g = jax.value_and_grad(loss)(p, key)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, v

    key = jax.random.PRNGKey(0)
    t = time.perf_counter()
    params, state, v = step(params, state, key)
    v.block_until_ready()
    first = time.perf_counter() - t
    times = []
    for _ in range(50):
        key, sub = jax.random.split(key)
        t = time.perf_counter()
        params, state, v = step(params, state, sub)
        v.block_until_ready()
        times.append(time.perf_counter() - t)
    return imp, first, statistics.median(times)


def bench_torch():
    t0 = time.perf_counter()
    import torch

    imp = time.perf_counter() - t0
    torch.manual_seed(1)
    cap = torch.randint(0, 3, (B, L)).float() * 5 + 5
    rate = torch.rand(B, P)
    idx = torch.randint(0, L, (B, P, H))
    y = torch.randn(B, P)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.path = torch.nn.GRUCell(S, S)
            self.link = torch.nn.GRUCell(S, S)
            self.ro = torch.nn.Sequential(torch.nn.Linear(S, R), torch.nn.SELU(), torch.nn.Dropout(0.5),
                                          torch.nn.Linear(R, R), torch.nn.SELU(), torch.nn.Dropout(0.5),
                                          torch.nn.Linear(R, 1))

        def forward(self, cap, rate, idx):
            link = torch.zeros(B * L, S)
            link[:, 0] = cap.reshape(-1) / 10
            path = torch.zeros(B * P, S)
            path[:, 0] = rate.reshape(-1)
            gidx = (idx + (torch.arange(B) * L)[:, None, None]).reshape(B * P, H)
            for _ in range(T):
                x = link[gidx]
                outs = []
                for h in range(H):
                    path = self.path(x[:, h], path)
                    outs.append(path)
                msgs = torch.stack(outs, 1).reshape(-1, S)
                agg = torch.zeros(B * L, S).index_add_(0, gidx.reshape(-1), msgs)
                link = self.link(agg, link)
            return self.ro(path).reshape(B, P)

    net = Net()
    opt = torch.optim.Adam(net.parameters(), 1e-3)

    def step():
        opt.zero_grad()
        loss = torch.mean((net(cap, rate, idx) - y) ** 2)
        loss.backward()
        opt.step()

    t = time.perf_counter()
    step()
    first = time.perf_counter() - t
    times = []
    for _ in range(50):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return imp, first, statistics.median(times)


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "jax"
    imp, first, med = {"jax": bench_jax, "torch": bench_torch}[which]()
    print(f"{which}: import {imp:.2f} s, first step {first:.2f} s, step (batch {B}) median {med * 1000:.1f} ms")
