"""Gymnasium environments on rtclab's core.

- `rtclab/ABR-v0` (`rtclab.gym.abr.AbrEnv`): Pensieve's adaptive-bitrate environment.
- `rtclab/BandwidthEstimation-v0` (`rtclab.gym.bwe.BandwidthEstimationEnv`): set a media flow's
  bandwidth estimate every 60 ms in any rtclab scenario (the OpenNetLab gym's task).

Importing `rtclab.gym` registers them with `gymnasium`:

    import gymnasium, rtclab.gym
    env = gymnasium.make("rtclab/ABR-v0", trace_order="sequential")
"""

from __future__ import annotations

import gymnasium

from rtclab.gym.abr import AbrEnv
from rtclab.gym.bwe import BandwidthEstimationEnv

__all__ = ["AbrEnv", "BandwidthEstimationEnv"]

if "rtclab/ABR-v0" not in gymnasium.registry:
    gymnasium.register(id="rtclab/ABR-v0", entry_point="rtclab.gym.abr:AbrEnv",
                       max_episode_steps=None, disable_env_checker=True)

if "rtclab/BandwidthEstimation-v0" not in gymnasium.registry:
    gymnasium.register(id="rtclab/BandwidthEstimation-v0", entry_point="rtclab.gym.bwe:BandwidthEstimationEnv",
                       max_episode_steps=None, disable_env_checker=True)
