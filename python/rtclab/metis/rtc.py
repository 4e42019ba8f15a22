"""Metis on a real-time bandwidth estimator (issue: learned controllers, point 2-5 for RTC).

Teacher: a small DNN (multi-layer perceptron, 2 × 64 ReLU, scikit-learn's `MLPRegressor`, Adam,
CPU) that imitates send-side GCC on rtclab/BandwidthEstimation-v0 by DAgger: in round 0 GCC's own
estimate drives the flow; in later rounds the DNN drives while GCC, running as a shadow on the
same feedback, labels each step with the estimate it would make (log10 bit/s). Then
reinforcement-learning fine-tuning on the environment's reward (the challenge's network score)
by evolution strategies (`rl_finetune`), kept only if it improves the training calls. The DNN's
input is the step observation with rates in log10 and delays in units of 100 ms; it runs as a
numpy forward pass. (No GPU framework: PyPI's torch for Linux brings the CUDA runtime, several GB
for a 2 × 64 network; scikit-learn's Adam and numpy do this on a CPU in a minute.)

Student: Metis's regression tree (CART on the raw observation — splits do not care about the
monotone rescaling — with DAgger on student-visited states relabelled by the DNN and
cost-complexity pruning chosen by hold-out MSE), deployed as `cc = "tree"` in the simulator or
the emulator.

Scenarios: random capacity staircases (seeded; 0.3-4 Mbit/s steps of 4-12 s, RTT 20-120 ms,
queue 100-400 ms, 40 s, one media flow capped at 2.5 Mbit/s); training and held-out sets use
disjoint seeds. Call-level score: the MMSys'21 challenge's network formula over the whole call
(p95 one-way delay against the 5th percentile as the minimum, mean receive rate, loss ratio).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rtclab.gym.bwe import FEATURE_NAMES, MAX_BPS, MIN_BPS, BandwidthEstimationEnv

LOG_RATE = (0, 7, 8)  # rate features (bit/s) read in log10


def scenario(seed: int, duration_s: int = 40) -> dict:
    rng = np.random.default_rng(seed)
    steps, t = [], 0.0
    while t < duration_s:
        steps.append({"at": f"{t:.3f}s", "rate": f"{rng.uniform(0.3, 4.0):.3f}Mbps"})
        t += rng.uniform(4, 12)
    return {"name": f"bwe-staircase-{seed}", "duration": f"{duration_s}s",
            "link": {"capacity": {"schedule": steps}, "queue": {"limit": f"{int(rng.uniform(100, 400))}ms"}},
            "flows": [{"name": "agent", "kind": "media", "cc": "gcc", "rtt": f"{int(rng.uniform(20, 120))}ms",
                       "media": {"start_bitrate": "300kbps", "max_bitrate": "2.5Mbps", "sender": "ideal"}}]}


def dnn_input(obs: np.ndarray) -> np.ndarray:
    x = np.array(obs, dtype=float, copy=True).reshape(-1, len(FEATURE_NAMES))
    x[:, list(LOG_RATE)] = np.log10(np.maximum(x[:, list(LOG_RATE)], 1e3))
    x[:, [1, 2, 3, 6]] /= 100.0
    x[:, 5] /= 20.0
    return x


@dataclass
class Mlp:
    """The teacher's forward pass from exported weights (numpy)."""
    weights: list[np.ndarray]
    biases: list[np.ndarray]

    @classmethod
    def from_sklearn(cls, m) -> "Mlp":
        return cls([w.copy() for w in m.coefs_], [b.copy() for b in m.intercepts_])

    @classmethod
    def load(cls, path: str | Path) -> "Mlp":
        from rtclab.inputs import InputFileError, load_npz

        z = load_npz(path, "teacher model")
        try:
            n = int(z["layers"])
            return cls([z[f"w{i}"] for i in range(n)], [z[f"b{i}"] for i in range(n)])
        except (KeyError, TypeError, ValueError) as e:
            raise InputFileError(f"{path}: not a teacher model saved by rtclab (missing or bad array {e})") from None

    def save(self, path: str | Path) -> None:
        arrays = {"layers": np.array(len(self.weights))}
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        with open(path, "wb") as f:
            np.savez(f, **arrays)

    def log_rate(self, obs: np.ndarray) -> np.ndarray:
        h = dnn_input(obs)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def estimate(self, obs: np.ndarray) -> float:
        return float(np.clip(10 ** self.log_rate(obs)[0], MIN_BPS, MAX_BPS))


def episode(scn: dict, policy, seed: int = 1, teacher: bool = True):
    """Plays one call; `policy(obs) -> bps` or None (GCC's shadow estimate drives). Returns the
    observations, the teacher's labels (log10 bit/s; NaN before GCC's first estimate), the
    summary of the run and the environment's mean network score per step."""
    env = BandwidthEstimationEnv(scn, teacher="gcc" if teacher else None, seed=seed)
    try:
        obs, _ = env.reset()
        xs, ys, scores = [], [], []
        est, done = env.start_bps, False
        while not done:
            if policy is not None:
                est = policy(obs)
            xs.append(obs.copy())
            obs, r, done, _, info = env.step([est])
            scores.append(info["network_score"])
            t = info["teacher_bps"]
            ys.append(np.log10(t) if t else np.nan)
            if policy is None and t:
                est = t
        # Label each decision state with the teacher's estimate after seeing the same feedback.
        summary = _finish(env.sim)
        return np.array(xs), np.array(ys), summary, float(np.mean(scores))
    finally:
        env.close()


def _finish(sim) -> dict:
    text, _ = sim.finish()
    return json.loads(text)


def call_score(summary: dict, flow: int = 0) -> dict:
    f = summary["flows"][flow]
    owd = f["one_way_delay_ms"]
    p95, base = min(owd["p95"] or 400.0, 400.0), owd["p5"] or 0.0
    delay = max(0.0, (400.0 - p95) / max(400.0 - base, 1e-9))
    rate = min(1.0, f["throughput_mbps"] / 4.0)
    loss = f["loss_ratio"] or 0.0
    m = f.get("media") or {}
    return {"network_score": 20 * delay + 20 * rate + 30 * (1 - loss), "throughput_mbps": f["throughput_mbps"],
            "owd_p95_ms": owd["p95"], "loss_ratio": loss,
            "frame_delay_ms_p95": (m.get("frame_delay_ms") or {}).get("p95"), "freeze_s": m.get("freeze_time_s")}


def train_teacher(train_seeds: list[int], rounds: int = 3, seed: int = 0, max_seconds: float = 120.0):
    """DAgger imitation of GCC; returns (Mlp, log)."""
    from sklearn.neural_network import MLPRegressor
    t0 = time.perf_counter()
    X, Y, log = [], [], []
    for s in train_seeds:
        x, y, _, _ = episode(scenario(s), None)
        X.append(x)
        Y.append(y)
    mlp = None
    for r in range(rounds + 1):
        x, y = np.concatenate(X), np.concatenate(Y)
        ok = np.isfinite(y)
        model = MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=300, random_state=seed, early_stopping=True,
                             n_iter_no_change=15, learning_rate_init=1e-3)
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(dnn_input(x[ok]), y[ok])
        mlp = Mlp.from_sklearn(model)
        log.append({"round": r, "samples": int(ok.sum()), "seconds": time.perf_counter() - t0,
                    "train_r2": float(model.score(dnn_input(x[ok]), y[ok])), "epochs": int(model.n_iter_),
                    "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught)})
        if r == rounds or time.perf_counter() - t0 > max_seconds:
            break
        for s in train_seeds:  # the DNN drives, GCC relabels
            x2, y2, _, _ = episode(scenario(s), mlp.estimate)
            X.append(x2)
            Y.append(y2)
    return mlp, log


def _flat(m: Mlp) -> np.ndarray:
    return np.concatenate([a.ravel() for pair in zip(m.weights, m.biases) for a in pair])


def _unflat(m: Mlp, v: np.ndarray) -> Mlp:
    ws, bs, i = [], [], 0
    for w, b in zip(m.weights, m.biases):
        ws.append(v[i:i + w.size].reshape(w.shape))
        i += w.size
        bs.append(v[i:i + b.size].reshape(b.shape))
        i += b.size
    return Mlp(ws, bs)


def rl_finetune(mlp: Mlp, train_seeds: list[int], generations: int = 8, pairs: int = 4, sigma: float = 0.02,
                lr: float = 0.002, seed: int = 0, scenarios_per_eval: int = 2, max_seconds: float = 120.0):
    """Reinforcement-learning fine-tuning by evolution strategies (Salimans et al., 2017):
    antithetic Gaussian perturbations of the weights, each scored by the mean per-step network
    score of whole calls on training scenarios, rank-normalised returns, a gradient step. The
    calls a generation plays are shared by all its perturbations (common random numbers).
    Returns (fine-tuned Mlp, log); the result is kept only if it beats the start on the same calls."""
    rng = np.random.default_rng(seed)
    theta = _flat(mlp)
    t0 = time.perf_counter()

    def score(v, seeds):
        m = _unflat(mlp, v)
        return float(np.mean([episode(scenario(s), m.estimate, teacher=False)[3] for s in seeds]))

    log = []
    for g in range(generations):
        seeds = list(rng.choice(train_seeds, size=min(scenarios_per_eval, len(train_seeds)), replace=False))
        eps = rng.standard_normal((pairs, theta.size))
        ret = np.array([[score(theta + sigma * e, seeds), score(theta - sigma * e, seeds)] for e in eps])
        ranks = np.argsort(np.argsort(ret.ravel())).reshape(ret.shape) / (ret.size - 1) - 0.5
        grad = ((ranks[:, 0] - ranks[:, 1])[:, None] * eps).sum(axis=0) / (2 * pairs * sigma)
        theta = theta + lr * grad
        log.append({"generation": g, "mean_return": float(ret.mean()), "best": float(ret.max()),
                    "seconds": time.perf_counter() - t0})
        if time.perf_counter() - t0 > max_seconds:
            break
    check = list(train_seeds[: max(2, scenarios_per_eval)])
    before, after = score(_flat(mlp), check), score(theta, check)
    log.append({"check_before": before, "check_after": after, "kept": after > before})
    return (_unflat(mlp, theta) if after > before else mlp), log


def convert_rtc(mlp: Mlp, train_seeds: list[int], iterations: int = 4, max_leaves: int = 100, seed: int = 0):
    """Metis for a continuous action: DAgger with the DNN as teacher, regression CART on the raw
    observation (target log10 bit/s), CCP by hold-out MSE; the exported leaves hold bit/s."""
    from sklearn.tree import DecisionTreeRegressor

    from rtclab.metis.tree import Tree, prune
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    X = [episode(scenario(s), mlp.estimate, teacher=False)[0] for s in train_seeds]
    tree = None
    for _ in range(iterations):
        x = np.concatenate(X)
        y = mlp.log_rate(x)
        perm = rng.permutation(len(x))
        n = int(0.8 * len(x))
        tr, va = perm[:n], perm[n:]
        est = DecisionTreeRegressor(random_state=int(rng.integers(2**31)), min_samples_leaf=2).fit(x[tr], y[tr])
        full = Tree.from_sklearn(est, list(FEATURE_NAMES))
        tree = prune(full, est, max_leaves, x[tr], x[va], y[va]).tree
        policy = _tree_policy(tree)
        X += [episode(scenario(s), policy, teacher=False)[0] for s in train_seeds]
    out = Tree(tree.task, tree.feature, tree.threshold, tree.left, tree.right,
               np.where(tree.feature < 0, 10 ** tree.value, 0.0), tree.histogram, tree.feature_names)
    return out, time.perf_counter() - t0


def _tree_policy(tree_log):
    def act(obs):
        return float(np.clip(10 ** tree_log.predict_one(obs), MIN_BPS, MAX_BPS))
    return act


def native(scn: dict, cc: str, tree_file: str | None = None, seed: int = 1) -> dict:
    """Runs `scn` with the flow's controller set to `cc` (gcc, gcc_paper or tree)."""
    import rtclab
    s = json.loads(json.dumps(scn))
    f = s["flows"][0]
    f["cc"] = cc
    if cc == "tree":
        f["media"]["tree"] = {"file": tree_file}
    return rtclab.run(s, seed=seed).summary
