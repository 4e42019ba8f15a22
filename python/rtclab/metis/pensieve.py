"""Pensieve's released model and data as a Metis teacher (spec `zhuge-metis.md` B.4, B.7).

The actor and critic come from `rtclab/data/pensieve/pensieve_actor_critic.npz` (hongzimao/pensieve
`pretrain_linear_reward`, MIT; see that folder's README for provenance). The forward pass is numpy,
float32 like the original graph: six ReLU branches of 128 units over the 6 × 8 state (the three
"Conv1D" layers see a length-1 sequence, so only kernel tap 1 meets data), 768 → 128 ReLU, then
6-way softmax (actor) or one value (critic). `tests/test_learn.py` checks it against the original
graph's outputs in `reference_io.npz`.

Where the data is: the copy shipped with rtclab, or $RTCLAB_PENSIEVE_DATA (`rtclab.datasets`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from rtclab import datasets
from rtclab.datasets import DataMissing  # noqa: F401  re-exported: callers catch pensieve.DataMissing

BITRATES_KBPS = (300, 750, 1200, 1850, 2850, 4300)
FEATURE_NAMES = (["last_bitrate", "buffer"] + [f"throughput_{i}" for i in range(8)]
                 + [f"download_time_{i}" for i in range(8)] + [f"next_size_{i}" for i in range(6)]
                 + ["chunks_left"])
_BRANCHES = (("FullyConnected", 0, 7, 1), ("FullyConnected_1", 1, 7, 1), ("Conv1D", 2, 0, 8),
             ("Conv1D_1", 3, 0, 8), ("Conv1D_2", 4, 0, 6), ("FullyConnected_2", 4, 7, 1))


def data_dir() -> Path:
    return datasets.locate("pensieve")


def load_traces(folder: str | Path | None = None, prefix: str = "") -> list[tuple[str, str]]:
    """(name, text) of every trace file in `folder` (default: the Norway set) whose name starts
    with `prefix`, sorted by name."""
    folder = Path(folder) if folder else data_dir() / "traces" / "norway"
    if not folder.is_dir():
        raise DataMissing(f"trace folder {folder} does not exist")
    files = sorted(p for p in folder.iterdir()
                   if p.is_file() and not p.name.startswith(".") and p.name.startswith(prefix))
    if not files:
        raise DataMissing(f"trace folder {folder} holds no trace files" + (f" named {prefix}*" if prefix else ""))
    return [(p.name, p.read_text(errors="replace")) for p in files]


def load_video(folder: str | Path | None = None) -> list[tuple[str, str]]:
    folder = Path(folder) if folder else data_dir()
    out = []
    for i in range(6):
        p = folder / f"video_size_{i}"
        if not p.is_file():
            raise DataMissing(f"{p} is missing (chunk sizes of bitrate level {i})")
        out.append((p.name, p.read_text()))
    return out


def sample_actions(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of probabilities, as Pensieve's agents and test draw them: the first
    whose cumulative probability exceeds U{1..999}/1000."""
    u = rng.integers(1, 1000, size=len(p)) / 1000.0
    return (np.cumsum(p, axis=1) > u[:, None]).argmax(axis=1)


class PensieveNet:
    """One network (actor or critic) of the released checkpoint, numpy float32."""

    def __init__(self, arrays: dict[str, np.ndarray], net: str):
        def get(name):
            key = f"{net}.{name}"
            if key not in arrays:
                raise ValueError(f"array {key} missing from the checkpoint")
            return np.asarray(arrays[key], dtype=np.float32)
        self.net = net
        self.branches = []
        for name, row, col, cols in _BRANCHES:
            w = get(f"{name}.W")
            w = w[1, 0] if name.startswith("Conv") else w  # tap 1 of [4, 1, C, 128]
            self.branches.append((row, col, cols, w.reshape(cols, 128), get(f"{name}.b")))
        self.w3, self.b3 = get("FullyConnected_3.W"), get("FullyConnected_3.b")
        self.w4, self.b4 = get("FullyConnected_4.W"), get("FullyConnected_4.b")
        self.arrays = {k.split(".", 1)[1]: np.asarray(v, dtype=np.float32).ravel().tolist()
                       for k, v in arrays.items() if k.startswith(net + ".")}

    @property
    def parameter_count(self) -> int:
        """Parameters stored in the checkpoint for this network (conv taps included)."""
        return sum(len(v) for v in self.arrays.values())

    def raw(self, states: np.ndarray) -> np.ndarray:
        s = np.asarray(states, dtype=np.float32).reshape(-1, 6, 8)
        hs = [np.maximum(s[:, row, col:col + cols] @ w + b, 0) for row, col, cols, w, b in self.branches]
        h = np.maximum(np.concatenate(hs, axis=1) @ self.w3 + self.b3, 0)
        return h @ self.w4 + self.b4

    def __call__(self, states: np.ndarray) -> np.ndarray:
        z = self.raw(states)
        if z.shape[1] == 1:
            return z[:, 0]
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


class PensieveTeacher:
    """Metis's teacher interface over the released actor (+ critic): `probs(states)`,
    `act(states, rng)` (sampled as Pensieve's test does: first cumulative probability above
    U{1..999}/1000) or greedy, `value(states)` from the critic."""

    def __init__(self, folder: str | Path | None = None, greedy: bool = False):
        from rtclab.inputs import load_npz

        arrays = load_npz(Path(folder or data_dir()) / "pensieve_actor_critic.npz", "Pensieve model")
        self.actor = PensieveNet(arrays, "actor")
        self.critic = PensieveNet(arrays, "critic")
        self.greedy = greedy

    def probs(self, states: np.ndarray) -> np.ndarray:
        return self.actor(states)

    def value(self, states: np.ndarray) -> np.ndarray:
        return self.critic(states)

    def act(self, states: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        p = self.probs(states)
        if self.greedy or rng is None:
            return p.argmax(axis=1)
        return sample_actions(p, rng)


@lru_cache(maxsize=1)
def reference_io(folder: str | None = None) -> dict[str, np.ndarray]:
    with np.load(Path(folder or data_dir()) / "reference_io.npz") as z:
        return {k: z[k] for k in z.files}
