"""Metis' global-system half: topologies, the Poisson data-set generator, the RouteNet-style model
and the hypergraph interpretation (spec zhuge-metis.md B.5; docs/algorithms/metis.md)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rtclab.metis import netdata
from rtclab.metis.topologies import TopologyError, dijkstra_path, routing, synthetic, topology
from rtclab.runner import run


def test_built_in_topologies_have_the_published_sizes():
    for name, nodes, edges in (("nsfnet", 14, 21), ("geant2", 24, 37)):
        t = topology(name)
        assert (t.nodes, len(t.edges), len(t.links)) == (nodes, edges, 2 * edges)
        assert len(t.pairs()) == nodes * (nodes - 1)


def test_routing_shortest_paths_and_k_variants():
    import networkx as nx

    t = topology("nsfnet")
    g = t.graph()
    sp = routing(t, 1, 0)
    for (s, d), p in zip(t.pairs(), sp):
        assert t.links[p[0]][0] == s and t.links[p[-1]][1] == d
        assert all(t.links[a][1] == t.links[b][0] for a, b in zip(p, p[1:]))  # contiguous
        assert len(p) == nx.shortest_path_length(g, s, d)
    k3 = routing(t, 3, 5)
    assert k3 == routing(t, 3, 5)  # deterministic
    assert k3 != sp and sum(map(len, k3)) > sum(map(len, sp))


def test_synthetic_graphs_are_connected_and_repeatable_and_bad_names_are_named():
    a, b = synthetic(20, 3), synthetic(20, 3)
    assert a.edges == b.edges and a.edges != synthetic(20, 4).edges
    assert topology("synth20-3").edges == a.edges
    for bad in ("ring", "synthX", "synth2-1"):
        with pytest.raises(TopologyError, match="topology|3 nodes"):
            topology(bad)


def test_dijkstra_follows_the_weights():
    t = topology("nsfnet")
    w = [1.0] * len(t.links)
    direct = dijkstra_path(t, 0, 1, w)
    assert direct == [t.index[(0, 1)]]
    w[t.index[(0, 1)]] = 100.0
    assert t.index[(0, 1)] not in dijkstra_path(t, 0, 1, w)


def test_poisson_source_through_one_link_matches_md1_queueing():
    # 8 Mbit/s of 1000-byte Poisson datagrams into 10 Mbit/s: rho = 0.8, service 0.8 ms. M/D/1's
    # mean wait rho / (2 mu (1 - rho)) = 1.6 ms; plus transmission 0.8 ms and propagation 0.1 ms.
    scn = {"duration": "120s", "links": [{"name": "a", "capacity": "10Mbps", "delay": "0.1ms",
                                          "queue": {"kind": "droptail", "limit": "1000pkt"}}],
           "flows": [{"kind": "poisson", "path": ["a"], "packet_size": "1000B", "params": {"rate_mbps": 8}}]}
    f = run(scn, progress=False).summary["flows"][0]
    assert f["sending_rate_mbps"] == pytest.approx(8.0, rel=0.02)
    assert f["queuing_delay_ms"]["mean"] == pytest.approx(1.6, rel=0.08)
    assert f["one_way_delay_ms"]["mean"] == pytest.approx(2.5, rel=0.06)


def test_sample_plans_are_deterministic_and_load_scaled():
    spec = netdata.DatasetSpec(["nsfnet"], 3, 3, (0.5, 0.5), 2.0, 7)
    a, b = netdata.sample_plan(spec, 1), netdata.sample_plan(spec, 1)
    assert a == b and a != netdata.sample_plan(spec, 2)
    loads = np.zeros(len(a["capacity_mbps"]))
    for r, p in zip(a["rate_mbps"], a["paths"]):
        loads[p] += r
    assert max(loads / np.array(a["capacity_mbps"])) == pytest.approx(0.5)
    assert a["capacity_mbps"][0::2] == a["capacity_mbps"][1::2]  # both directions of an edge


def test_dataset_generation_resume_and_refusals(tmp_path):
    out = tmp_path / "ds"
    spec = netdata.DatasetSpec(["nsfnet"], 2, 2, (0.4, 0.6), 1.0, 1)
    netdata.generate(spec, out, workers=1, progress=False)
    first = netdata.read_samples(out)
    assert [s["index"] for s in first] == [0, 1]
    assert all(d is None or d > 0 for d in first[0]["delay_ms"]) and len(first[0]["delay_ms"]) == 182
    with pytest.raises(netdata.DatasetError, match="already holds"):
        netdata.generate(spec, out, workers=1, progress=False)
    # An interrupted write leaves a cut line: reading ignores it, resuming replaces it.
    with open(out / "samples.jsonl", "a") as f:
        f.write('{"index": 2, "topol')
    assert len(netdata.read_samples(out)) == 2
    spec.samples = 3
    netdata.generate(spec, out, workers=1, resume=True, progress=False)
    again = netdata.read_samples(out)
    assert [s["index"] for s in again] == [0, 1, 2] and again[:2] == first
    with pytest.raises(netdata.DatasetError, match="different data set"):
        netdata.generate(netdata.DatasetSpec(["geant2"], 3, 2, (0.4, 0.6), 1.0, 1), out, resume=True, progress=False)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(netdata.DatasetError, match="not an rtclab metis data set"):
        netdata.generate(spec, mine, progress=False)
    assert (mine / "notes.txt").read_text() == "mine"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("metis-global")
    netdata.generate(netdata.DatasetSpec(["nsfnet"], 4, 2, (0.3, 0.8), 2.0, 3), d / "ds", workers=1, progress=False)
    return d


def test_routenet_trains_saves_and_masks_consistently(tiny):
    from rtclab.metis import routenet as rn

    batches = rn.batches_of(netdata.read_samples(tiny / "ds"))
    (b,) = batches
    assert b.idx.shape == (4, 182, b.idx.shape[2]) and b.valid.sum() == sum(len(p) for s in netdata.read_samples(tiny / "ds") for p in s["paths"])
    losses = []
    model = rn.train(batches, epochs=12, batch_size=4, on_epoch=lambda e, v: losses.append(v))
    assert np.mean(losses[-3:]) < losses[0]
    # A mask of ones is the unmasked model.
    assert np.allclose(model.predict(b), model.predict(b, np.ones(b.idx.shape, np.float32)))
    model.save(tiny / "m.npz")
    again = rn.Model.load(tiny / "m.npz")
    assert np.allclose(again.predict(b), model.predict(b)) and again.norm == model.norm
    (tiny / "bad.npz").write_bytes(b"not a model")
    with pytest.raises(rn.ModelError, match="not an rtclab RouteNet model"):
        rn.Model.load(tiny / "bad.npz")


def test_mask_of_an_input_the_model_ignores_falls(tiny):
    """With the path GRU's input weights zeroed, no connection changes the output: the fidelity
    term is flat and the size and entropy terms push every mask below 0.5."""
    import jax

    from rtclab.metis import hypergraph as hg
    from rtclab.metis import routenet as rn

    (b,) = rn.batches_of(netdata.read_samples(tiny / "ds"))
    params = rn.init_params(3)
    params["path_gru"]["x"]["w"] = jax.numpy.zeros_like(params["path_gru"]["x"]["w"])
    model = rn.Model(params, rn.Norm(5.0, 2.0))
    e = hg.explain(model, b.take(slice(0, 1)), steps=150, seed=1)
    m = e.mask[e.valid]
    assert m.max() < 0.5 and e.losses[-1][1] < e.losses[0][1]
    assert e.losses[-1][2] < 1e-4  # fidelity: only the readout's dropout noise (the input is ignored)
    # Every mask started at 0.5 and fell: no decision is "kept" at 90 % of the steps or after.
    assert e.decision_flips() == 0.0 and np.isfinite(e.convergence())
    total, mean = e.link_weight(42)
    assert total.sum() == pytest.approx(m.sum()) and np.nanmax(mean) < 0.5


def test_cli_routenet_and_explain_end_to_end(tiny, tmp_path):
    cli = [sys.executable, "-m", "rtclab.cli"]
    r = subprocess.run(cli + ["metis", "routenet", "--test", str(tiny / "ds"), "--out", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "either --train" in r.stderr
    r = subprocess.run(cli + ["metis", "routenet", "--train", str(tiny / "ds"), "--test", str(tiny / "ds"), "--epochs", "1",
                              "--quiet", "--out", str(tmp_path / "rn")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "rn" / "routenet.json").read_text())
    assert s["relative_error"]["nsfnet"]["held_out_topology"] is False and (tmp_path / "rn" / "errors.png").exists()
    r = subprocess.run(cli + ["metis", "explain", "--model", str(tmp_path / "rn" / "model.npz"), "--steps", "20",
                              "--seeds", "2", "--duration", "1", "--quiet", "--out", str(tmp_path / "ex")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ex = json.loads((tmp_path / "ex" / "explain.json").read_text())
    assert ex["connections"] == sum(len(p) for p in routing(topology("nsfnet"), 1, 1))
    assert len(ex["top"]) == 5 and len(ex["top_overlap"]["overlap"]) == 1
    assert ex["adjustment"]["before"]["simulated"]["mean_ms"] > 0
    for f in ("connections.csv", "mask_loss.png", "topology.png"):
        assert (tmp_path / "ex" / f).exists()
    # Nothing of the user's is replaced.
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "keep.txt").write_text("x")
    r = subprocess.run(cli + ["metis", "explain", "--model", str(tmp_path / "rn" / "model.npz"), "--steps", "2",
                              "--seeds", "1", "--duration", "1", "--quiet", "--out", str(tmp_path / "user")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not written by rtclab" in r.stderr
    assert (tmp_path / "user" / "keep.txt").read_text() == "x"


def test_fused_lasso_limits_and_mixture_recovers_two_lines():
    from rtclab.metis import baselines as bl

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    beta = np.array([0.5, 1.0, 2.0, -1.0, 0.0])
    y = beta[0] + X @ beta[1:] + rng.normal(scale=0.01, size=400)
    w = np.ones(400)
    D = bl._difference_matrix(4, [range(0, 4)])
    # No penalty: least squares.
    assert np.allclose(bl.fused_lasso(X, y, w, D, lam=0.0, iters=50), beta, atol=0.01)
    # A heavy fused penalty ties the group's coefficients together (their mean, 0.5).
    tied = bl.fused_lasso(X, y, w, D, lam=1e4, iters=300)
    assert np.ptp(tied[1:]) < 0.05 and tied[1:].mean() == pytest.approx(0.5, abs=0.05)
    # Two regimes, y = 2x or y = -2x: the mixture finds both slopes.
    x = rng.uniform(-1, 1, size=(600, 1))
    side = rng.random(600) < 0.5
    y2 = np.where(side, 2 * x[:, 0], -2 * x[:, 0]) + rng.normal(scale=0.02, size=600)
    m = bl.MixtureFusedLasso(components=2, lam=0.0, iters=30, seed=1).fit(x, y2)
    assert sorted(np.round(m.beta[:, 1])) == [-2.0, 2.0]
    assert m.predict_at(np.array([0.5]), 1.0) == pytest.approx(1.0, abs=0.05)


def test_fidelity_and_pensieve_feature_cells():
    from rtclab import _core
    from rtclab.metis import baselines as bl

    f = bl.fidelity(np.array([0, 1, 2, 5]), np.array([0, 1, 3, 3]))
    assert f.error_rate == 0.5 and f.rmse == pytest.approx(np.sqrt((1 + 4) / 4))
    rng = np.random.default_rng(2)
    base = rng.random((6, 8))
    F = rng.random((3, 25))
    S = np.ascontiguousarray(bl.pensieve_states(F, base))
    back = np.empty((3, 25))
    _core.abr_features(S, back)
    assert np.allclose(back, F)
    assert np.all(S[:, 4, 6:] == base[4, 6:])  # the cell the actor reads beyond the features


def test_kmeans_stand_ins_fit_a_piecewise_policy():
    from rtclab.metis import baselines as bl

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(600, 3))
    act = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)  # three actions, axis-aligned
    P = np.eye(3)[act] * 0.9 + 0.1 / 3
    lin = bl.KMeansLinear(20, seed=0).fit(X[:400], P[:400])
    assert bl.fidelity(lin.predict(X[400:]), act[400:]).error_rate < 0.2
    lem = bl.KMeansLemna(10, [range(0, 3)], components=2, lam=0.001, seed=0).fit(X[:400], P[:400])
    assert bl.fidelity(lem.predict(X[400:]), act[400:]).error_rate < 0.25


def test_lime_local_prediction_matches_the_packages_own():
    from lime.lime_tabular import LimeTabularExplainer

    from rtclab.metis.baselines import local_prediction

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))

    def proba(Z):
        z = np.stack([Z[:, 0] + Z[:, 1], -Z[:, 0], 0.5 * Z[:, 2]], axis=1)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    exp = LimeTabularExplainer(X, mode="classification", random_state=0)
    for label in range(3):
        e = exp.explain_instance(X[3], proba, labels=(label,), num_features=4, num_samples=300)
        assert local_prediction(e, label) == pytest.approx(float(np.ravel(e.local_pred)[0]))
