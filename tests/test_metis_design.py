"""Metis's design case: Pensieve's A3C (original and modified network) in JAX."""

import json

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("gymnasium")

from rtclab.metis import a3c, pensieve  # noqa: E402


def test_entropy_schedule_decays_over_the_first_eighth():
    assert a3c.entropy_weight(0, 800_000) == pytest.approx(1.0)
    assert a3c.entropy_weight(50_000, 800_000) == pytest.approx(0.55)
    assert a3c.entropy_weight(100_000, 800_000) == pytest.approx(0.1)
    assert a3c.entropy_weight(700_000, 800_000) == pytest.approx(0.1)


def test_the_modified_network_feeds_the_last_bitrate_to_the_output_layer():
    import jax

    key = jax.random.PRNGKey(0)
    orig, mod = a3c.init_net(key, 6, False), a3c.init_net(key, 6, True)
    assert orig["dense"][0].shape == (768, 128) and orig["out"][0].shape == (128, 6)
    assert mod["dense"][0].shape == (640, 128) and mod["out"][0].shape == (256, 6)
    s = np.random.default_rng(1).random((5, 48)).astype(np.float32)
    assert a3c.forward(orig, s, False).shape == (5, 6) and a3c.forward(mod, s, True).shape == (5, 6)
    # zero the hidden layer's weights: only the modified net still sees the last bitrate
    for p in (orig, mod):
        p["dense"] = (p["dense"][0] * 0, p["dense"][1])
    s2 = s.copy()
    s2[:, 7] += 0.5  # row 0, last column: the last bitrate
    assert np.allclose(a3c.forward(orig, s, False), a3c.forward(orig, s2, False))
    assert not np.allclose(a3c.forward(mod, s, True), a3c.forward(mod, s2, True))


def test_smoothing_and_reach_by_hand():
    c = a3c.Curve("x", 0, [0, 10, 20, 30], [0.0, 1.0, 3.0, 2.0])
    assert list(a3c.smoothed(c, 2)) == [0.0, 0.5, 2.0, 2.5]
    assert a3c.final_level(c, 2) == 2.5
    assert a3c.iterations_to_reach(c, 2.5, 2) == 30 and a3c.iterations_to_reach(c, 1.5, 2) == 20
    assert a3c.iterations_to_reach(c, 9.0, 2) is None


def test_a3c_is_reproducible_and_learns():
    traces = pensieve.load_traces()
    train, test = traces[1:20], traces[:5:2]
    a, tr_a = a3c.train(train, test, False, 3, seed=3, eval_every=3, agents=2)
    b, tr_b = a3c.train(train, test, False, 3, seed=3, eval_every=3, agents=2)
    assert a.test_qoe == b.test_qoe
    pa, pb = tr_a.actor_arrays(), tr_b.actor_arrays()
    assert all(np.array_equal(pa[k], pb[k]) for k in pa)
    # from a random policy (many stalls) to one that plays: the A3C update moves the right way
    c, _ = a3c.train(train, test, False, 50, seed=3, eval_every=50)
    assert c.test_qoe[-1] > c.test_qoe[0] + 3.0, c.test_qoe


def test_cli_design_writes_curves_and_refuses_bad_seeds(cli, tmp_path):
    out = tmp_path / "d"
    r = cli("metis", "design", "--iterations", "2", "--eval-every", "1", "--agents", "2", "--quiet", "--out", out)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "design.json").read_text())
    assert [c["variant"] for c in s["curves"]] == ["original", "modified"]
    assert all(c["iterations"] == [0, 1, 2] for c in s["curves"])
    assert (out / "curves.csv").read_text().count("\n") == 7 and (out / "design.png").is_file()
    assert (out / "actor-modified-seed0.npz").is_file()
    for bad, flag in ((["--seeds", "1,1"], "--seeds"), (["--seeds", "-1"], "--seeds"),
                      (["--agents", "0"], "--agents"), (["--iterations", "0"], "--iterations")):
        r = cli("metis", "design", *bad, "--out", tmp_path / "x")
        assert r.returncode == 2 and flag in r.stderr, (bad, r.stderr)
    assert not (tmp_path / "x").exists()
