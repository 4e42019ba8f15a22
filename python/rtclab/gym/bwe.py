"""`rtclab/BandwidthEstimation-v0`: set a media flow's bandwidth estimate every step, in any
rtclab scenario, in the manner of the OpenNetLab gym (spec `peers-and-test-suites.md` §3.1) —
but in-process on the simulator's step API (`Simulation.run_until`), deterministic per seed, no
subprocesses and no Docker.

One media flow of the scenario (`flow`, by index or name; its `cc` is replaced) is driven by the
agent: every `step_ms` (60 ms by default, as the gym) the agent's action — the estimate in bit/s —
becomes the flow's target rate, the simulator runs one step, and the observation of that step
comes back (9 values, `rtclab_cc::learned::obs`; `FEATURE_NAMES`):

    recv_rate_bps, delay_mean_ms, delay_p95_ms, delay_base_ms, loss_ratio, packets,
    delay_trend_ms, estimate_bps, send_rate_bps

Mapping to the gym's per-packet statistics: the gym hands the agent every received packet's
`send_time_ms`, `arrival_time_ms`, `payload_size` and `sequence_number`; its example agent turns them
into receive rate, mean delay, loss ratio and the last estimate. We compute those (and the rest)
in Rust from the transport feedback of the packets reported during the step — exact send and
arrival times, known one feedback interval and half an RTT late, as at any send-side estimator.

Reward (`reward=`): "network" (default) is the MMSys'21 challenge's network score of the step,
`20·delay_score + 20·recv_rate_score + 30·(1 − loss)` (0-70); "qoe" uses the receiver:
`frames/(fps·step) − delay_weight·mean frame delay (s) − freeze_weight·freeze time/step`; or a
callable `f(obs, info) -> float`. `info` carries the network score, the frame counters and, with
`teacher="gcc"`, the estimate send-side GCC makes from the same feedback (it runs as a shadow and
does not drive the flow: a teacher's label for imitation).

Default scenario (embedded): one 2 Mbit/s-capped media flow over a link stepping 1.5 → 3 → 0.8 →
2 Mbit/s, 40 ms RTT, 200 ms queue, 60 s. A vectorised form: `gymnasium.make_vec(
"rtclab/BandwidthEstimation-v0", num_envs=N, vectorization_mode="sync")`.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rtclab import _core
from rtclab.gym import settings

FEATURE_NAMES = tuple(_core.BweAgent.feature_names())
MIN_BPS, MAX_BPS = 10_000.0, 20_000_000.0
#: A step is at least the simulator's 1 ms metering grain and at most 10 s.
MIN_STEP_MS, MAX_STEP_MS = 1.0, 10_000.0

DEFAULT_SCENARIO: dict[str, Any] = {
    "name": "bwe-gym-default",
    "duration": "60s",
    "link": {"capacity": {"schedule": [{"at": "0s", "rate": "1.5Mbps"}, {"at": "15s", "rate": "3Mbps"},
                                        {"at": "30s", "rate": "0.8Mbps"}, {"at": "45s", "rate": "2Mbps"}]},
             "queue": {"limit": "200ms"}},
    "flows": [{"name": "agent", "kind": "media", "cc": "gcc", "rtt": "40ms",
               "media": {"start_bitrate": "300kbps", "max_bitrate": "2Mbps", "sender": "ideal"}}],
}

_ids = itertools.count()


def _load(scenario) -> tuple[dict, str]:
    """(scenario dict, base dir) from a dict, a file, a built-in name or TOML text, read as
    `rtclab run` reads them (the same checks and messages)."""
    if scenario is None:
        return copy.deepcopy(DEFAULT_SCENARIO), "."
    if isinstance(scenario, dict):
        return copy.deepcopy(scenario), "."
    import tomllib

    from rtclab.scenarios import ScenarioNotFound, load_scenario

    try:
        src = load_scenario(Path(scenario) if isinstance(scenario, os.PathLike) else str(scenario))
    except ScenarioNotFound as e:
        raise ValueError(f"scenario: {e}") from None
    try:
        return (json.loads(src.text) if src.format == "json" else tomllib.loads(src.text)), src.base_dir
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"scenario {src.display}: invalid TOML: {e}") from None


class BandwidthEstimationEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, scenario: dict | str | os.PathLike | None = None, flow: int | str = 0,
                 step_ms: float = 60.0, reward: str | Callable = "network", teacher: str | None = None,
                 seed: int = 0, qoe_fps: float | None = None, delay_weight: float = 1.0, freeze_weight: float = 1.0):
        step_ms = settings.number("step_ms", step_ms, MIN_STEP_MS, MAX_STEP_MS)
        if not (callable(reward) or reward in ("network", "qoe")):
            raise ValueError(f"reward must be 'network', 'qoe' or a callable, got {reward!r}")
        delay_weight = settings.number("delay_weight", delay_weight, 0.0)
        freeze_weight = settings.number("freeze_weight", freeze_weight, 0.0)
        if qoe_fps is not None:
            qoe_fps = settings.number("qoe_fps", qoe_fps, 0.0, 1000.0, lo_open=True)
        seed = settings.seed(seed)
        self.base, self.base_dir = _load(scenario)
        flows = self.base.get("flows") or []
        idx = next((i for i, f in enumerate(flows) if f.get("name") == flow), None) if isinstance(flow, str) else flow
        if idx is None or not (0 <= idx < len(flows)):
            raise ValueError(f"flow {flow!r}: the scenario has {len(flows)} flows"
                             + (f" ({', '.join(str(f.get('name')) for f in flows)})" if flows else ""))
        if flows[idx].get("kind") != "media":
            raise ValueError(f"flow {flow!r} is a {flows[idx].get('kind')!r} flow; the agent drives a media flow")
        self.flow = idx
        media = flows[idx].setdefault("media", {})
        self.fps = qoe_fps if qoe_fps is not None else float(media.get("fps", 30.0))
        self.start_bps = float(_core.parse_rate(str(media.get("start_bitrate", "300kbps"))))
        self.agent = _core.BweAgent(f"gym_agent_{os.getpid()}_{next(_ids)}", start_bps=self.start_bps,
                                    shadow=teacher, min_bps=MIN_BPS, max_bps=MAX_BPS)
        flows[idx]["cc"] = self.agent.name
        media.pop("gcc", None)
        media.pop("zoom_like", None)
        media.pop("tree", None)
        media.setdefault("feedback", "twcc")
        self.step_s = step_ms / 1000.0
        self.reward_kind = reward
        self.delay_weight, self.freeze_weight = delay_weight, freeze_weight
        self.seed_value = seed
        self.sim = None
        self._obs = np.zeros(len(FEATURE_NAMES))
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(len(FEATURE_NAMES),), dtype=np.float64)
        self.action_space = spaces.Box(MIN_BPS, MAX_BPS, shape=(1,), dtype=np.float64)
        self._text = json.dumps(self.base)
        _core.Simulation(self._text, "json", self.base_dir, seed)  # check the scenario now

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            seed = settings.seed(seed)  # before gymnasium's own check, whose range is narrower
        super().reset(seed=seed)
        if seed is not None:
            self.seed_value = seed
        self.agent.reset(self.start_bps)
        self.sim = _core.Simulation(self._text, "json", self.base_dir, self.seed_value)
        self.t = 0.0
        self._totals = (0, 0.0, 0.0)
        self._obs[:] = 0.0
        self._obs[7] = self.start_bps
        return self._obs.copy(), {}

    def step(self, action):
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        try:
            raw = float(np.asarray(action, dtype=float).reshape(-1)[0])
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"action {action!r}: not a rate; the action is the estimate in bit/s, one number "
                             f"(values outside {MIN_BPS:g}..{MAX_BPS:g} are clipped)") from None
        if not np.isfinite(raw):
            raise ValueError(f"action {raw}: not a finite rate; the action is the estimate in bit/s "
                             f"(values outside {MIN_BPS:g}..{MAX_BPS:g} are clipped, NaN and infinities refused)")
        bps = float(np.clip(raw, MIN_BPS, MAX_BPS))
        self.agent.set_estimate(bps)
        self.t += self.step_s
        done = self.sim.run_until(self.t)
        score, shadow = self.agent.close_step(self.step_s, self._obs)
        frames, delay_sum, freeze = self.sim.media_totals(self.flow)
        f0, d0, z0 = self._totals
        self._totals = (frames, delay_sum, freeze)
        info = {"network_score": score, "teacher_bps": shadow, "frames": frames - f0,
                "frame_delay_s": (delay_sum - d0) / (frames - f0) if frames > f0 else None,
                "freeze_s": freeze - z0, "time_s": self.t}
        if self.reward_kind == "network":
            reward = score
        elif self.reward_kind == "qoe":
            fd = info["frame_delay_s"] or 0.0
            reward = (info["frames"] / (self.fps * self.step_s) - self.delay_weight * fd
                      - self.freeze_weight * info["freeze_s"] / self.step_s)
        else:
            reward = float(self.reward_kind(self._obs.copy(), info))
        return self._obs.copy(), reward, bool(done), False, info

    def close(self):
        self.agent.close()

