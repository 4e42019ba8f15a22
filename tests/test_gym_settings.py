"""The Gymnasium environments refuse bad settings with a message naming the setting, as
scenarios do, instead of NaN rewards, flipped signs, silent defaults or a crash."""

import math

import pytest

pytest.importorskip("gymnasium")

from rtclab.gym.abr import AbrEnv  # noqa: E402
from rtclab.gym.bwe import BandwidthEstimationEnv  # noqa: E402


@pytest.mark.parametrize("kw,match", [
    ({"delay_weight": math.nan}, r"delay_weight must be a finite number in \[0, inf\], got nan"),
    ({"freeze_weight": math.inf}, r"freeze_weight must be a finite number"),
    ({"delay_weight": -1.0}, r"delay_weight must be in \[0, inf\], got -1"),
    ({"qoe_fps": 0}, r"qoe_fps must be in \(0, 1000\], got 0"),
    ({"qoe_fps": -30}, r"qoe_fps must be in \(0, 1000\], got -30"),
    ({"step_ms": 1e-9}, r"step_ms must be in \[1, 10000\], got 1e-09"),
    ({"step_ms": "60"}, r"step_ms must be a number, got '60'"),
    ({"seed": -1}, r"seed must be a whole number in 0..=18446744073709551615, got -1"),
    ({"seed": 2**64}, r"seed must be a whole number"),
    ({"scenario": "no-such-scenario"}, r"scenario: no such file or built-in scenario: 'no-such-scenario'"),
])
def test_bwe_env_refuses_bad_settings(kw, match):
    with pytest.raises(ValueError, match=match):
        BandwidthEstimationEnv(**kw)


def test_bwe_env_takes_a_builtin_scenario_and_qoe_fps_as_given():
    env = BandwidthEstimationEnv(scenario="gcc-staircase", qoe_fps=15)
    assert env.fps == 15.0
    env.close()


def test_bwe_env_refuses_non_finite_actions_by_name():
    env = BandwidthEstimationEnv()
    env.reset()
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=r"not a finite rate; the action is the estimate in bit/s"):
            env.step([bad])
    with pytest.raises(ValueError, match="not a rate"):
        env.step("fast")
    obs, reward, *_ = env.step([1e12])  # out of range: clipped, as the Box space says
    assert math.isfinite(reward)
    with pytest.raises(ValueError, match="seed must be"):
        env.reset(seed=-5)
    env.close()


@pytest.mark.parametrize("kw,match", [
    ({"chunks": 0}, r"chunks must be a whole number in 1..=100000, got 0"),
    ({"chunks": -1}, r"chunks must be a whole number"),
    ({"chunks": 10**9}, r"chunks must be a whole number"),
    ({"chunks": 60}, r"49 chunk sizes, the video needs 60"),
    ({"seed": -1}, r"seed must be a whole number"),
])
def test_abr_env_refuses_bad_settings(kw, match):
    with pytest.raises(ValueError, match=match):
        AbrEnv(**kw)
