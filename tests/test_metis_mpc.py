"""RobustMPC as a Metis teacher and the retention study (dissertation Fig 5.6)."""

import json
from itertools import product

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("sklearn")

import rtclab.gym  # noqa: E402,F401
from rtclab.metis import mpc, pensieve, retention  # noqa: E402
from rtclab.metis.convert import rollout, teacher_policy  # noqa: E402


def _loop_mpc(state: np.ndarray, sizes_mb: np.ndarray, qoe: str) -> int:
    """The look-ahead written as Pensieve's mpc.py writes it: one sequence at a time, `>=` keeps
    the last best. Throughput prediction from the module (tested on its own below)."""
    s = state.reshape(6, 8)
    bw = float(mpc.predicted_throughput(state[None, :])[0])
    util = mpc.utility(qoe)
    pen = mpc.REBUFFER_PENALTY[qoe]
    last = int(np.abs(np.array(pensieve.BITRATES_KBPS) - s[0, -1] * 4300).argmin())
    left = int(round(s[5, -1] * 48))
    nxt, h = 48 - left, min(5, max(left, 1))
    best, best_r = None, -np.inf
    for combo in product(range(6), repeat=h):
        buf, r, prev = s[1, -1] * 10, 0.0, last
        for k, q in enumerate(combo):
            dl = sizes_mb[q, min(nxt + k, 47)] / bw
            rebuf = max(dl - buf, 0.0)
            buf = max(buf - dl, 0.0) + 4.0
            r += util[q] - pen * rebuf - abs(util[q] - util[prev])
            prev = q
        if r >= best_r:
            best, best_r = combo, r
    return best[0]


def test_throughput_prediction_is_the_robust_harmonic_mean():
    s = np.zeros((6, 8))
    s[2] = [0, 0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    hm = 5 / (1 / 2 + 1 + 1 / 2 + 1 + 1 / 2)
    # errors of the last five against the harmonic mean of up to five before each
    errs = []
    for t in range(3, 8):
        prev = [x for x in s[2, max(0, t - 5):t] if x > 0]
        est = len(prev) / sum(1 / x for x in prev)
        errs.append(abs(est - s[2, t]) / s[2, t])
    assert mpc.predicted_throughput(s.reshape(1, -1))[0] == pytest.approx(hm / (1 + max(errs)))
    assert mpc.predicted_throughput(np.zeros((1, 48)))[0] == 0.0


@pytest.mark.parametrize("qoe", ["lin", "log", "hd"])
def test_vectorised_mpc_chooses_what_the_plain_loop_chooses(qoe):
    teacher = mpc.RobustMpcTeacher(qoe)
    env = gymnasium.make("rtclab/ABR-v0", traces=pensieve.load_traces()[:3], qoe=qoe, seed=2).unwrapped
    env.reset(seed=2)
    states = np.asarray(rollout(env, teacher_policy(teacher, None), 2)[0])
    rng = np.random.default_rng(0)
    pick = states[rng.choice(len(states), 25, replace=False)]
    pick[:3, 47] = np.array([2, 1, 3]) / 48  # row 5, last column: the end of the video, shorter look-ahead
    got = teacher.act(pick)
    want = [_loop_mpc(s, teacher.sizes_mb, qoe) for s in pick]
    assert list(got) == want
    assert len(set(want)) > 1  # the states are not all one decision


def test_mpc_goes_up_on_a_fat_link_and_down_on_a_thin_one():
    t = mpc.RobustMpcTeacher("lin")
    fat, thin = np.zeros((6, 8)), np.zeros((6, 8))
    for s, thr, buf in ((fat, 5.0, 2.0), (thin, 0.03, 0.1)):
        s[0, -1], s[1, -1], s[2, :] = 1850 / 4300, buf, thr
        s[5, -1] = 40 / 48
    assert list(t.act(np.stack([fat.ravel(), thin.ravel()]))) == [5, 0]
    assert t.probs(fat.ravel()[None, :]).tolist() == [[0, 0, 0, 0, 0, 1]]
    with pytest.raises(ValueError, match="critic"):
        t.value(fat.ravel()[None, :])
    with pytest.raises(ValueError, match="unknown QoE"):
        mpc.RobustMpcTeacher("mos")
    with pytest.raises(ValueError, match="chunk sizes"):
        mpc.RobustMpcTeacher("lin", chunks=500)


def test_normalised_ratios_by_hand():
    teacher, tree, floor = np.array([2.0, 4.0]), np.array([1.0, 4.0]), np.array([0.0, 0.0])
    r = retention.normalised_ratios(teacher, tree, floor, percentiles=(0, 100))
    assert r[0] == pytest.approx(0.5) and r[100] == pytest.approx(1.0)
    # negative QoE (log) normalises the same way; a teacher at the floor has no ratio
    r = retention.normalised_ratios(np.array([-1.0, -3.0]), np.array([-2.0, -3.0]), np.array([-3.0, -3.0]),
                                    percentiles=(0, 100))
    assert np.isnan(r[0]) and r[100] == pytest.approx(0.5)


def test_a_retention_cell_converts_and_scores_on_held_out_traces():
    traces = pensieve.load_traces()[:10]
    c = retention.cell("robustmpc", "hd", "norway10", traces, iterations=1)
    assert (c.train_traces, c.test_traces) == (8, 2)
    assert len(c.teacher_qoe) == len(c.tree_qoe) == len(c.floor_qoe) == 2
    assert set(c.ratios) == set(retention.PERCENTILES) and c.leaves >= 1
    with pytest.raises(ValueError, match="unknown ABR teacher"):
        retention.cell("hotdash", "lin", "x", traces, iterations=1)


def test_cli_converts_robustmpc_under_another_qoe(cli, tmp_path):
    out = tmp_path / "m"
    r = cli("metis", "convert", "--teacher", "robustmpc", "--qoe", "hd", "--iterations", "1", "--videos", "2",
            "--quiet", "--out", out)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "conversion.json").read_text())
    assert s["qoe"] == "hd" and s["teacher"].startswith("robustmpc") and s["teacher_actions"] == "deterministic"
    assert "RobustMPC (hd QoE)" in r.stdout
    r = cli("metis", "convert", "--teacher", "robustmpc", "--resample", "critic", "--out", tmp_path / "x")
    assert r.returncode == 2 and "critic" in r.stderr
    assert not (tmp_path / "x").exists()
