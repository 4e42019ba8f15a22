"""`rtclab/ABR-v0`: the Pensieve adaptive-bitrate environment (spec `zhuge-metis.md` B.7) as a
Gymnasium environment, on the Rust core (`rtclab_learn::abr`).

A video of 48 chunks of 4 s at six bitrates (300-4300 kbit/s) is downloaded chunk by chunk over a
throughput trace (Pensieve's `<seconds> <Mbit/s>` format; default: the 142 Norway HSDPA traces in
`rtclab/data/pensieve/traces/norway`), 80 ms RTT, 95 % payload, multiplicative delay noise
U[0.9, 1.1], a 60 s buffer cap. `reset` downloads the first chunk at 750 kbit/s (Pensieve's default);
each `step(a)` downloads the next chunk at bitrate index `a` and returns its QoE (linear by
default; `qoe="log"` or `"hd"` as PiTree defines them). 47 decisions per episode.

Observation: Pensieve's 6 × 8 state (float64). `features()` gives Metis's 25-value serialisation.
`snapshot()` / `restore(s)` save and put back the whole environment (random stream included), so a
caller can try several actions from one state; `one_step_rewards(snaps)` replays one download per
bitrate from many compact snapshots at once (Metis's reward-aware relabelling).

Options (`gymnasium.make("rtclab/ABR-v0", ...)`): `traces` (a folder or a list of (name, text)),
`video` (a folder with `video_size_0..5`), `qoe`, `trace_order` ("random": random trace and start
per episode, Pensieve's training environment; "sequential": trace i from its start on episode i,
its test environment), `noise`, `seed`, `chunks` (video length; the size files must hold that many).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rtclab import _core
from rtclab.gym import settings
from rtclab.metis.pensieve import BITRATES_KBPS, load_traces, load_video


class AbrEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, traces: str | Path | list[tuple[str, str]] | None = None,
                 video: str | Path | list[tuple[str, str]] | None = None, qoe: str = "lin",
                 trace_order: str = "random", noise: bool = True, seed: int = 0, chunks: int = 48):
        if trace_order not in ("random", "sequential"):
            raise ValueError(f"trace_order must be 'random' or 'sequential', got {trace_order!r}")
        seed = settings.seed(seed)
        chunks = settings.whole("chunks", chunks, 1, 100_000)
        tr = traces if isinstance(traces, list) else load_traces(traces)
        vid = video if isinstance(video, list) else load_video(video)
        self.core = _core.AbrCore(tr, vid, seed=seed, qoe=qoe, noise=noise, chunks=chunks)
        self.trace_order = trace_order
        self.qoe = qoe
        self._episode = 0
        self._obs = np.zeros((6, 8))
        self.observation_space = spaces.Box(0.0, np.inf, shape=(6, 8), dtype=np.float64)
        self.action_space = spaces.Discrete(6)
        self.bitrates_kbps = BITRATES_KBPS

    @property
    def trace_names(self) -> list[str]:
        return self.core.trace_names

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            seed = settings.seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            self.core.reseed(seed)
            self._episode = 0
        trace = (options or {}).get("trace")
        if trace is None and self.trace_order == "sequential":
            trace = self._episode % self.core.trace_count
        self._episode += 1
        info = self.core.reset(self._obs, trace)
        return self._obs.copy(), info

    def step(self, action):
        reward, done, rebuf = self.core.step(int(action), self._obs)
        return self._obs.copy(), reward, done, False, {"rebuffer_s": rebuf}

    def step_fast(self, action: int) -> tuple[float, bool]:
        """`step` without copying the observation (read `self.observation`): for rollouts."""
        reward, done, _ = self.core.step(action, self._obs)
        return reward, done

    @property
    def observation(self) -> np.ndarray:
        return self._obs

    def features(self) -> np.ndarray:
        return np.array(self.core.features())

    def snapshot(self) -> tuple:
        return (self.core.copy(), self._obs.copy(), self._episode)

    def restore(self, snap: tuple) -> None:
        core, obs, ep = snap
        self.core.restore(core)
        self._obs[:] = obs
        self._episode = ep

    def position(self) -> list[float]:
        """The compact position for `one_step_rewards`."""
        return self.core.snapshot()

    def one_step_rewards(self, positions: np.ndarray) -> np.ndarray:
        pos = np.ascontiguousarray(positions, dtype=np.float64)
        out = np.empty((len(pos), 6))
        self.core.one_step_rewards(pos, out)
        return out
