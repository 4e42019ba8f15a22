"""Gymnasium environments on rtclab's core.

- `rtclab/ABR-v0` (`rtclab.gym.abr.AbrEnv`): Pensieve's adaptive-bitrate environment.

Importing `rtclab.gym` registers them with `gymnasium`:

    import gymnasium, rtclab.gym
    env = gymnasium.make("rtclab/ABR-v0", trace_order="sequential")
"""

from __future__ import annotations

import gymnasium

from rtclab.gym.abr import AbrEnv

__all__ = ["AbrEnv"]

if "rtclab/ABR-v0" not in gymnasium.registry:
    gymnasium.register(id="rtclab/ABR-v0", entry_point="rtclab.gym.abr:AbrEnv",
                       max_episode_steps=None, disable_env_checker=True)
