"""Learned controllers: the Pensieve teacher, rtclab/ABR-v0, trees and Metis's pipeline."""

import json

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("sklearn")

import rtclab.gym  # noqa: E402,F401
from rtclab import _core  # noqa: E402
from rtclab.metis import pensieve  # noqa: E402
from rtclab.metis.tree import Tree, TreeFileError, pruning_path  # noqa: E402

# The released model ships with rtclab (rtclab/data/pensieve): never skipped for want of it.
DATA = pensieve.data_dir()


@pytest.fixture(scope="module")
def teacher():
    return pensieve.PensieveTeacher()


def test_teacher_matches_the_original_graph(teacher):
    ref = pensieve.reference_io()
    assert np.abs(teacher.probs(ref["states"]) - ref["actor_probs"]).max() < 1e-5
    assert np.abs(teacher.value(ref["states"]) - ref["critic_value"][:, 0]).max() < 1e-4
    net = _core.PensieveNetCore(teacher.actor.arrays)
    rust = np.array(net.forward_batch(np.ascontiguousarray(ref["states"], dtype=np.float64))).reshape(-1, 6)
    assert np.abs(rust - ref["actor_probs"]).max() < 1e-5
    # The "missing bitrates": the greedy actor never picks 1200 or 2850 kbit/s on these states.
    assert set(np.unique(ref["actor_probs"].argmax(axis=1))) <= {0, 1, 3, 5}


def test_abr_env_passes_gymnasiums_checker_and_is_deterministic():
    from gymnasium.utils.env_checker import check_env
    env = gymnasium.make("rtclab/ABR-v0").unwrapped
    check_env(env, skip_render_check=True)

    def play(seed):
        e = gymnasium.make("rtclab/ABR-v0").unwrapped
        e.reset(seed=seed)
        rewards, done, i = [], False, 0
        while not done:
            _, r, done, _, _ = e.step(i % 6)
            rewards.append(r)
            i += 1
        return rewards
    a, b = play(5), play(5)
    assert a == b and len(a) == 47
    assert play(6) != a


def test_snapshot_restore_and_one_step_replay():
    env = gymnasium.make("rtclab/ABR-v0", noise=False).unwrapped
    env.reset(seed=1)
    env.step(3)
    snap, pos = env.snapshot(), np.array([env.position()])
    replay = env.one_step_rewards(pos)[0]
    for a in range(6):
        env.restore(snap)
        _, r, *_ = env.step(a)
        assert r == pytest.approx(replay[a], abs=1e-12)
    with pytest.raises(ValueError, match="quality 6"):
        env.step(6)


def test_buffer_based_baseline():
    from rtclab.metis.evaluate import buffer_based
    s = np.zeros(48)
    for buf, a in ((4.9, 0), (5.0, 0), (10.0, 2), (14.9, 4), (15.0, 5)):
        s[15] = buf / 10
        assert buffer_based(s, None) == a


def _sk_tree(seed=0):
    from sklearn.tree import DecisionTreeClassifier
    rng = np.random.default_rng(seed)
    x = rng.random((400, 3))
    y = (x[:, 0] > 0.5).astype(int) + (x[:, 1] > 0.3) + (rng.random(400) < 0.1)
    est = DecisionTreeClassifier(random_state=0).fit(x, y)
    return est, Tree.from_sklearn(est, ["a", "b", "c"]), x, y


def test_tree_json_round_trip_through_the_rust_evaluator(tmp_path):
    est, tree, x, _ = _sk_tree()
    assert (tree.predict(x) == est.predict(x)).all()
    path = tmp_path / "t.json"
    tree.write(path)
    back = Tree.read(path, n_features=3)
    core = back.core()
    out = np.empty(len(x))
    core.predict_batch(np.ascontiguousarray(x), out)
    assert (out == est.predict(x)).all()
    assert core.leaf_count == tree.leaf_count


def test_bad_tree_files_are_named(tmp_path):
    _, tree, _, _ = _sk_tree()
    p = tmp_path / "t.json"
    tree.write(p)
    with pytest.raises(TreeFileError, match=r"t\.json: the tree reads 3 features, but this environment provides 25"):
        Tree.read(p, n_features=25)
    p.write_text("{not json")
    with pytest.raises(TreeFileError, match=r"t\.json: not valid JSON"):
        Tree.read(p)
    d = tree.to_json()
    d["nodes"]["left"][0] = 0
    p.write_text(json.dumps(d))
    with pytest.raises(TreeFileError, match=r"t\.json: node 0: left child 0"):
        Tree.read(p)


def test_weakest_link_pruning_on_a_hand_computed_tree():
    # root(0) -> leaf 1 | inner 2 -> inner 3 (-> leaves 4, 5) | leaf 6
    f = np.array([0, -1, 0, 0, -1, -1, -1])
    left = np.array([1, -1, 3, 4, -1, -1, -1])
    right = np.array([2, -1, 6, 5, -1, -1, -1])
    t = Tree("classification", f, np.zeros(7), left, right, np.zeros(7), np.ones((7, 2)), ["x"], [0.0, 1.0])
    risk = np.array([11.0, 2.0, 6.0, 3.0, 1.0, 1.0, 1.0])
    # g(3) = (3 - 2) / 1 = 1 < g(2) = (6 - 3) / 2 < g(0) = (11 - 5) / 3: collapse 3 (α 1);
    # then g(2) = (6 - 4) / 1 = 2 < g(0) = (11 - 6) / 2: collapse 2 (α 2); then the root (α 3).
    p = pruning_path(t, risk)
    assert list(p.alpha) == [1.0, 2.0, 3.0]
    assert [p.step[i] for i in (3, 2, 0)] == [0, 1, 2] and np.isinf(p.step[[1, 4, 5, 6]]).all()
    assert list(p.leaves) == [4, 3, 2, 1]
    # A tie (R(0) = 10: g(0) = g(2) = 2 after the first step) goes to the first node in pre-order.
    risk[0] = 10.0
    p = pruning_path(t, risk)
    assert list(p.alpha) == [1.0, 2.0] and p.step[0] == 1 and list(p.leaves) == [4, 3, 1]
    sub = t.subtree(p.step < 1)
    assert sub.node_count == 5 and sub.leaf_count == 3


def test_conversion_is_reproducible_and_respects_the_leaf_budget(teacher):
    from rtclab.metis.convert import convert
    traces = pensieve.load_traces()[:6]

    def once():
        env = gymnasium.make("rtclab/ABR-v0", traces=traces).unwrapped
        return convert(env, teacher, iterations=2, videos=2, max_samples=3000, max_leaves=12,
                       resample="critic", test_videos=2, seed=3)
    a, b = once(), once()
    assert a.tree.leaf_count <= 12
    env = gymnasium.make("rtclab/ABR-v0", traces=traces).unwrapped
    d = convert(env, teacher, iterations=1, videos=2, max_samples=3000, max_leaves=12, test_videos=2,
                holdout="distinct")
    assert d.tree.leaf_count <= 12
    with pytest.raises(ValueError, match="holdout"):
        convert(env, teacher, iterations=1, videos=1, max_samples=100, holdout="nope")
    assert a.tree.to_json() == b.tree.to_json()
    assert len(a.iterations) == 2 and a.dataset_size == 3 * 2 * 47


def test_cli_convert_writes_the_tree_and_names_bad_input(cli, tmp_path):
    out = tmp_path / "m"
    r = cli("metis", "convert", "--iterations", "1", "--videos", "2", "--max-leaves", "20", "--quiet",
            "--out", out)
    assert r.returncode == 0, r.stderr
    for f in ("tree.json", "tree.svg", "tree.html", "conversion.json"):
        assert (out / f).is_file(), f
    s = json.loads((out / "conversion.json").read_text())
    assert s["leaves"] <= 20 and s["test_traces"] == 29
    assert Tree.read(out / "tree.json", n_features=25).leaf_count == s["leaves"]
    r = cli("metis", "convert", "--oversample", "9=2", "--out", tmp_path / "x")
    assert r.returncode == 2 and "--oversample" in r.stderr
    assert not (tmp_path / "x").exists()


def test_rust_tree_rollouts_equal_python_rollouts(teacher):
    """`AbrCore.play_tree` (whole videos in Rust) gives the QoE the Python loop gives."""
    from rtclab.metis.convert import rollout, tree_policy
    traces = pensieve.load_traces()[:4]
    env = gymnasium.make("rtclab/ABR-v0", traces=traces, trace_order="sequential", noise=False).unwrapped
    # A tree over the 25 ABR features: fit on a teacher rollout.
    from sklearn.tree import DecisionTreeClassifier
    s, f, _, _, _ = rollout(env, lambda s, f: int(teacher.act(s[None, :])[0]), 2, trace=0)
    est = DecisionTreeClassifier(max_leaf_nodes=12, random_state=0).fit(np.asarray(f), teacher.act(np.asarray(s)))
    tree = Tree.from_sklearn(est, pensieve.FEATURE_NAMES)
    py = [rollout(env, tree_policy(tree), 1, trace=t)[4][0] for t in range(4)]
    rust = env.core.play_tree(tree.core(), traces=[0, 1, 2, 3])
    assert rust == pytest.approx(py, abs=1e-9)
    bad = Tree.from_sklearn(_sk_tree()[0], ["a", "b", "c"]).core()
    with pytest.raises(ValueError, match="reads 3 features; the ABR environment has 25"):
        env.core.play_tree(bad, traces=[0])
