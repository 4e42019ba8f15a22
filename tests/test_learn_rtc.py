"""rtclab/BandwidthEstimation-v0, `cc = "tree"` in both engines, and the RTC teacher → tree."""

import json
import os
import shutil

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("sklearn")

import rtclab  # noqa: E402
import rtclab.gym  # noqa: E402,F401
from rtclab.gym.bwe import DEFAULT_SCENARIO, FEATURE_NAMES  # noqa: E402

ROOT = os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip")


def const_tree(path, bps, n_features=9):
    path.write_text(json.dumps({"format": "rtclab-tree", "version": 1, "task": "regression",
                                "n_features": n_features,
                                "nodes": {"feature": [-1], "threshold": [0], "left": [-1], "right": [-1],
                                          "value": [bps]}}))
    return path


def tree_scenario(file, duration="8s"):
    return f"""
name = "tree-cc"
duration = "{duration}"
[link]
capacity = "3Mbps"
queue = {{ limit = "200ms" }}
[[flows]]
kind = "media"
cc = "tree"
rtt = "40ms"
media = {{ start_bitrate = "300kbps", max_bitrate = "2.5Mbps", tree = {{ file = "{file}" }} }}
"""


def test_bwe_env_api_determinism_and_teacher_labels():
    from gymnasium.utils.env_checker import check_env
    env = gymnasium.make("rtclab/BandwidthEstimation-v0").unwrapped
    check_env(env, skip_render_check=True)
    env.close()

    def play(seed):
        e = gymnasium.make("rtclab/BandwidthEstimation-v0", teacher="gcc", seed=seed).unwrapped
        e.reset()
        out, labels = [], []
        for i in range(200):
            o, r, done, _, info = e.step([1e6 if i % 20 < 10 else 2e6])
            out.append((o.tolist(), r))
            labels.append(info["teacher_bps"])
        e.close()
        return out, labels
    a, la = play(3)
    b, _ = play(3)
    assert a == b
    obs = np.array([o for o, _ in a])
    assert obs.shape[1] == len(FEATURE_NAMES) == 9
    assert (obs[50:, 0] > 0).all() and set(obs[:, 7]) == {1e6, 2e6}
    assert all(x is not None and x > 0 for x in la[20:])  # GCC's shadow estimate


def test_bwe_env_rewards_and_bad_input():
    env = gymnasium.make("rtclab/BandwidthEstimation-v0", reward="qoe").unwrapped
    env.reset(seed=1)
    rewards = [env.step([8e5])[1] for _ in range(100)]
    assert np.isfinite(rewards).all() and max(rewards) > 0
    env.close()
    with pytest.raises(ValueError, match="flow 3: the scenario has 1 flows"):
        gymnasium.make("rtclab/BandwidthEstimation-v0", flow=3)
    scn = json.loads(json.dumps(DEFAULT_SCENARIO))
    scn["flows"][0]["kind"] = "tcp"
    with pytest.raises(ValueError, match="drives a media flow"):
        gymnasium.make("rtclab/BandwidthEstimation-v0", scenario=scn)
    with pytest.raises(ValueError, match="step_ms"):
        gymnasium.make("rtclab/BandwidthEstimation-v0", step_ms=0)
    # Start rates are read by the scenario layer's parser: bytes are bytes.
    scn = json.loads(json.dumps(DEFAULT_SCENARIO))
    scn["flows"][0]["media"]["start_bitrate"] = "0.1MBps"
    e = gymnasium.make("rtclab/BandwidthEstimation-v0", scenario=scn).unwrapped
    assert e.start_bps == 800_000
    e.close()


def test_tree_controller_sets_the_estimate_in_the_simulator(tmp_path):
    const_tree(tmp_path / "t.json", 800_000)
    (tmp_path / "s.toml").write_text(tree_scenario("t.json"))
    r = rtclab.run(str(tmp_path / "s.toml"), seed=1, progress=False)
    f = r.summary["flows"][0]
    assert f["cc"] == "tree"
    assert 0.6 < f["throughput_mbps"] < 0.9, f["throughput_mbps"]


def test_tree_controller_errors_name_the_key_and_the_file(tmp_path):
    from rtclab._core import ConfigError
    (tmp_path / "s.toml").write_text(tree_scenario("missing.json"))
    with pytest.raises(ConfigError, match=r"media\.tree\.file.*missing\.json"):
        rtclab.run(str(tmp_path / "s.toml"), progress=False)
    const_tree(tmp_path / "t3.json", 1e6, n_features=3)
    (tmp_path / "s.toml").write_text(tree_scenario("t3.json"))
    with pytest.raises(ConfigError, match=r"t3\.json: the tree reads 3 features; the bandwidth-estimation observation has 9"):
        rtclab.run(str(tmp_path / "s.toml"), progress=False)
    (tmp_path / "s.toml").write_text(tree_scenario("t3.json").replace('cc = "tree"', 'cc = "gcc"'))
    with pytest.raises(ConfigError, match=r"media\.tree.*use cc = \"tree\""):
        rtclab.run(str(tmp_path / "s.toml"), progress=False)
    (tmp_path / "s.toml").write_text(tree_scenario("t3.json").replace(', tree = { file = "t3.json" }', ""))
    with pytest.raises(ConfigError, match=r"media\.tree.*needs media\.tree"):
        rtclab.run(str(tmp_path / "s.toml"), progress=False)


@pytest.mark.skipif(not ROOT, reason="the emulator needs root, /dev/net/tun and iproute2")
def test_tree_controller_runs_in_the_emulator_as_in_the_simulator(tmp_path):
    const_tree(tmp_path / "t.json", 800_000)
    (tmp_path / "s.toml").write_text(tree_scenario("t.json", "6s"))
    sim = rtclab.run(str(tmp_path / "s.toml"), seed=1, progress=False).summary["flows"][0]
    emu = rtclab.run(str(tmp_path / "s.toml"), seed=1, progress=False, engine="emu").summary["flows"][0]
    assert emu["cc"] == "tree"
    assert abs(emu["throughput_mbps"] - sim["throughput_mbps"]) < 0.15, (emu["throughput_mbps"], sim["throughput_mbps"])


def test_rtc_teacher_and_tree_pipeline_end_to_end(tmp_path):
    from rtclab.metis import rtc
    mlp, log = rtc.train_teacher([5], rounds=0, max_seconds=30)
    assert log[0]["samples"] > 300 and log[0]["train_r2"] > 0.5
    mlp.save(tmp_path / "mlp.npz")
    back = rtc.Mlp.load(tmp_path / "mlp.npz")
    o = np.array([8e5, 5.0, 9.0, 25.0, 0.0, 6.0, 0.1, 9e5, 9e5])
    assert back.estimate(o) == mlp.estimate(o)
    tuned, es = rtc.rl_finetune(mlp, [5], generations=1, pairs=1, scenarios_per_eval=1)
    assert len(es) == 2 and "kept" in es[-1]
    assert (tuned is mlp) != es[-1]["kept"]
    tree, _ = rtc.convert_rtc(mlp, [5], iterations=1, max_leaves=16)
    assert tree.leaf_count <= 16 and tree.n_features == 9
    tree.write(tmp_path / "tree.json")
    s = rtc.native(rtc.scenario(77, duration_s=10), "tree", str(tmp_path / "tree.json"))
    assert s["flows"][0]["cc"] == "tree" and s["flows"][0]["throughput_mbps"] > 0.1


def test_bwe_env_vectorised_form():
    vec = gymnasium.make_vec("rtclab/BandwidthEstimation-v0", num_envs=3, vectorization_mode="sync")
    obs, _ = vec.reset(seed=2)
    assert obs.shape == (3, 9)
    for _ in range(20):
        obs, rew, term, trunc, info = vec.step(np.full((3, 1), 8e5))
    assert rew.shape == (3,) and np.isfinite(rew).all()
    vec.close()
