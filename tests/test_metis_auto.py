"""AuTO on rtclab's datacenter fabric (issue 43 item 3): the fluid MLFQ fabric's physics, the
agents' action mapping, a tiny end-to-end study (train, convert, evaluate) and the command's
errors."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from rtclab.metis import dcenv
from rtclab.metis.dcenv import Fabric, mean_size, sample_sizes


def _fabric_with(flows: list[tuple[float, float]], thresholds=(1e12,) * 4, capacity_bps=8e6) -> Fabric:
    """A fabric (1 MB/s) whose arrivals are replaced by the given (time, size) flows."""
    fab = Fabric("websearch", 0.5, capacity_bps, seed=0)
    fab.set_thresholds(thresholds)
    pending = sorted(flows)

    def admit():
        fab.admit(pending.pop(0)[1])
        fab._next_arrival = pending[0][0] if pending else float("inf")

    fab._admit = admit
    fab._next_arrival = pending[0][0]
    return fab


def test_sizes_follow_the_workload_mean():
    rng = np.random.default_rng(1)
    for name in dcenv.WORKLOADS:
        s = sample_sizes(name, rng, 400_000)
        assert s.min() >= dcenv.MSS and np.all(s % dcenv.MSS == 0)
        # Whole packets round up: the sample mean sits at most half a packet above the CDF's mean.
        assert mean_size(name) * 0.97 < s.mean() < mean_size(name) * 1.03 + dcenv.MSS


def test_one_flow_alone_takes_size_over_capacity():
    fab = _fabric_with([(0.0, 500_000.0)])
    f = fab.advance(2.0)
    assert len(f) == 1 and f.fct[0] == pytest.approx(0.5, rel=1e-9)


def test_one_queue_shares_the_port_equally():
    # Two flows of 1 MB at t=0 in one queue: both at 0.5 MB/s, both finish at 2 s.
    fab = _fabric_with([(0.0, 1e6), (0.0, 1e6)])
    f = fab.advance(3.0)
    assert np.allclose(np.sort(f.fct), [2.0, 2.0])


def test_mlfq_demotes_by_bytes_sent_and_serves_strictly_by_priority():
    # Thresholds 100 KB...: a 1 MB flow from t=0 is demoted at 0.1 s; a 50 KB flow arriving at
    # 0.5 s runs alone in queue 0 (finishes at 0.55 s) while the big one waits, which then ends
    # at 1.05 s (1 MB of service + 0.05 s of pre-emption).
    fab = _fabric_with([(0.0, 1e6), (0.5, 50e3)], thresholds=(100e3, 200e3, 300e3, 400e3))
    f = fab.advance(2.0)
    by_size = dict(zip(f.size, f.fct + f.arrival))
    assert by_size[50e3] == pytest.approx(0.55, abs=1e-9)
    assert by_size[1e6] == pytest.approx(1.05, abs=1e-9)
    assert f.long[f.size == 1e6][0] and not f.long[f.size == 50e3][0]


def test_long_flow_priorities_order_long_flows():
    fab = _fabric_with([(0.0, 2e6), (0.0, 2e6)], thresholds=(10e3, 20e3, 30e3, 40e3))
    fab.advance(0.1)                      # both long by now (50 KB sent each)
    idx = fab.active_long()
    assert len(idx) == 2
    fab.set_long_priority(idx, np.array([0, 3]))
    f = fab.advance(10.0)
    first, second = sorted(f.fct)
    assert first == pytest.approx(0.1 + (2e6 - 50e3) / 1e6, rel=1e-6)   # runs alone after 0.1 s
    assert second == pytest.approx(4.0, rel=1e-6)                       # the port is never idle


def test_work_conservation_on_random_arrivals():
    fab = Fabric("websearch", 0.6, 10e9, seed=3)
    f = fab.advance(1.0)
    served = f.size.sum() + fab.sent.sum()
    assert served <= fab.capacity * 1.0 + 1.0
    assert served == pytest.approx(fab.arrived_bytes - (fab.size - fab.sent).sum(), rel=1e-9)


def test_a_drained_episode_scores_every_arrival():
    from rtclab.metis import auto as au

    ep = au.run(None, au.las_policy, seed=4, seconds=0.5, drain=True)
    fab = Fabric("websearch", au.LOAD, au.CAPACITY_BPS, seed=4)   # the same arrivals, counted
    fab.advance(0.5)
    assert len(ep.finished) == fab.next_id and np.all(ep.finished.arrival < 0.5)


def test_fabric_errors_name_the_problem():
    with pytest.raises(ValueError, match="load 1.2"):
        Fabric("websearch", 1.2)
    with pytest.raises(ValueError, match="workload 'hadoop'"):
        Fabric("hadoop", 0.5)
    fab = Fabric()
    with pytest.raises(ValueError, match="non-decreasing"):
        fab.set_thresholds([5e3, 1e3, 2e3, 3e3])
    with pytest.raises(ValueError, match="long-flow priority"):
        fab.set_long_priority(np.array([0]), np.array([4]))


def test_threshold_action_mapping_round_trips():
    from rtclab.metis import auto as au

    thr = np.array([10e3, 100e3, 1e6, 10e6])
    assert np.allclose(au.thresholds_of(au.action_of_thresholds(thr)), thr)
    t = au.thresholds_of(np.array([-1, 1, 0.3, -1]))
    assert np.all(np.diff(t) >= 0) and t[0] == pytest.approx(1e3)


def test_tiny_study_is_deterministic_and_complete():
    pytest.importorskip("jax")
    from rtclab.metis import autorun

    opts = SimpleNamespace(workload="websearch", load=0.6, srla_steps=40, lrla_episodes=2, iterations=2, episodes=1,
                           max_leaves=20, test_seeds=1, test_seconds=0.5, seed=0)
    a, b = autorun.study(opts), autorun.study(opts)
    assert a.summary["fct"] == b.summary["fct"]
    s = a.summary
    assert set(s["fct"]) == set(autorun.POLICY_NAMES)
    assert s["conversion"]["lrla_leaves"] <= 20 and all(n <= 20 for n in s["conversion"]["srla_leaves"])
    for f in s["fct"].values():
        assert f["flows"] > 100 and f["mean_ms"] > 0 and f["mean_slowdown"] >= 1.0
    # Every policy is scored on the same flows (each test episode drained).
    assert len({f["flows"] for f in s["fct"].values()}) == 1
    assert s["latency_ratio"]["srla"] > 0


def test_cli_auto_writes_its_files_and_refuses_bad_input(tmp_path):
    pytest.importorskip("jax")
    out = tmp_path / "auto"
    cmd = [sys.executable, "-m", "rtclab.cli", "metis", "auto", "--srla-steps", "20", "--lrla-episodes", "1",
           "--iterations", "1", "--episodes", "1", "--test-seeds", "1", "--test-seconds", "0.3", "--quiet",
           "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    for name in ("auto.json", "fct.png", "lrla-tree.json", "srla-tree-4.json", "lrla.npz", "srla-actor.npz"):
        assert (out / name).is_file(), name
    s = json.loads((out / "auto.json").read_text())
    assert s["tree_vs_dnn"]["-lrla"]["mean"] > 0 and "tree / DNN" in r.stdout
    for bad, msg in ((["--load", "1.5"], "--load 1.5"), (["--workload", "hadoop"], "--workload 'hadoop'"),
                     (["--srla-steps", "0"], "--srla-steps 0"), (["--test-seconds", "inf"], "--test-seconds inf")):
        r = subprocess.run([*cmd[:5], *bad, "--out", str(tmp_path / "bad")], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 2 and msg in r.stderr, (bad, r.stderr)
        assert not (tmp_path / "bad").exists()
