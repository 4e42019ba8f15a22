"""`rtclab metis routenet` and `rtclab metis explain`: the global-system half of Metis on a model
trained on rtclab's own runs (spec `zhuge-metis.md` B.5; docs/algorithms/metis.md, "Global
systems").

- `routenet_run`: trains the RouteNet-style delay model (`rtclab.metis.routenet`) on one data set
  of `rtclab metis dataset`, or loads one, and measures its relative error per topology on
  another (held-out topologies' samples).
- `explain_run`: Metis' hypergraph interpretation of that model on one network state (topology,
  routing, traffic) for several seeds — the mask loss, the critical connections and their
  stability, each link's importance on a picture of the topology — and the ad-hoc adjustment:
  the path the model thinks slowest is rerouted by Dijkstra over mask-derived link weights (and,
  for comparison, over link loads), and the new routing is evaluated by the model **and run in
  rtclab's simulator**.
"""

from __future__ import annotations

import csv
import json
import random
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

from rtclab.metis.netdata import check_load_and_duration, link_loads, read_samples, traffic_plan
from rtclab.metis.topologies import Topology, dijkstra_path, routing, topology


def _progress_line(enabled: bool, text: str) -> None:
    if enabled:
        print(text, flush=True)


# ----------------------------------------------------------------------------- routenet


def routenet_run(train: Optional[str], test: str, out: str, model_path: Optional[str] = None, epochs: int = 20,
                 seed: int = 1, batch_size: int = 16, verbose: bool = True) -> dict[str, Any]:
    """Trains (or loads) the model and measures its error on `test`. Returns the summary."""
    from rtclab.metis import routenet as rn
    from rtclab.output import write_atomically

    if (train is None) == (model_path is None):
        raise ValueError("give either --train DATASET (to train a model) or --model FILE (to evaluate one)")
    if epochs < 1 or batch_size < 1:
        raise ValueError("--epochs and --batch-size must be at least 1")
    test_batches = rn.batches_of(read_samples(test))
    if not test_batches:
        raise ValueError(f"{test}: the test data set has no finished samples")
    history: list[tuple[int, float]] = []
    if model_path is None:
        train_batches = rn.batches_of(read_samples(train))
        if not train_batches:
            raise ValueError(f"{train}: the training data set has no finished samples")
        t0 = time.perf_counter()

        def on_epoch(e: int, loss: float) -> None:
            history.append((e, loss))
            _progress_line(verbose, f"  epoch {e}/{epochs}: training loss {loss:.4f} ({time.perf_counter() - t0:.0f} s)")

        model = rn.train(train_batches, epochs, batch_size=batch_size, seed=seed, on_epoch=on_epoch)
        model.info = dict(model.info or {}, train_set=str(train),
                          train_topologies=sorted({b.topology for b in train_batches}))
    else:
        model = rn.Model.load(model_path)
    per_topo = {}
    errors = {}
    for b in test_batches:
        e = rn.relative_errors(model, [b])
        errors[b.topology] = e
        per_topo[b.topology] = {"samples": len(b), "paths": int(e.size), "median": float(np.median(e)),
                                "p90": float(np.percentile(e, 90)), "mean": float(e.mean()),
                                "held_out_topology": b.topology not in (model.info or {}).get("train_topologies", [])}
    summary = {"model": model.info, "test_set": str(test), "relative_error": per_topo,
               "training": [{"epoch": e, "loss": v} for e, v in history]}

    def fill(d: Path) -> None:
        model.save(d / "model.npz")
        (d / "routenet.json").write_text(json.dumps(summary, indent=2) + "\n")
        if history:
            with open(d / "training.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["epoch", "loss"])
                w.writerows(history)
        _error_plot(errors, d / "errors.png")

    write_atomically(out, fill, inputs=[p for p in (train, test, model_path) if p], kind="Metis RouteNet model")
    summary["out"] = str(out)
    return summary


def _error_plot(errors: dict[str, np.ndarray], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, e in sorted(errors.items()):
        x = np.sort(e)
        ax.plot(x * 100, np.arange(1, len(x) + 1) / len(x), label=f"{name} (median {np.median(e):.1%})")
    ax.set_xlabel("relative error of predicted mean delay (%)")
    ax.set_ylabel("CDF over paths")
    ax.set_xlim(0, max(50, float(np.percentile(np.concatenate(list(errors.values())), 95)) * 100))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------- explain


def network_state(topo_name: str, k: int, routing_seed: int, traffic_seed: int, load: tuple[float, float]) -> dict:
    """One sample's inputs: routing from the k shortest paths, capacities and traffic drawn."""
    topo = topology(topo_name)
    paths = routing(topo, k, routing_seed)
    return traffic_plan(topo, paths, random.Random(f"explain/{traffic_seed}"), load)


def _batch(model, plan: dict):
    from rtclab.metis import routenet as rn

    return rn.batches_of([plan], model.max_hops)[0]


def simulate(plan: dict, duration_s: float) -> np.ndarray:
    """Mean delay per path (ms) measured by running the network state in the simulator."""
    from rtclab.metis.netdata import measure

    got = measure(plan, duration_s)
    return np.array([np.nan if d is None else d for d in got["delay_ms"]])


def explain_run(model_path: str, out: str, topo_name: str = "nsfnet", k: int = 1, routing_seed: int = 1,
                traffic_seed: int = 1, load: tuple[float, float] = (0.7, 0.7), seeds: int = 3, steps: int = 2000,
                top: int = 5, duration_s: float = 20.0, verbose: bool = True) -> dict[str, Any]:
    from rtclab.metis import hypergraph as hg
    from rtclab.metis import routenet as rn
    from rtclab.output import write_atomically

    if seeds < 1 or steps < 1 or top < 1:
        raise ValueError("--seeds, --steps and --top must be at least 1")
    check_load_and_duration(load, duration_s)
    model = rn.Model.load(model_path)
    topo = topology(topo_name)
    plan = network_state(topo_name, k, routing_seed, traffic_seed, load)
    batch = _batch(model, plan)
    pred = model.predict(batch)[0]
    runs = []
    for s in range(1, seeds + 1):
        t0 = time.perf_counter()
        e = hg.explain(model, batch, steps=steps, seed=s,
                       on_step=lambda i, v: _progress_line(verbose and i % max(1, steps // 4) == 0,
                                                           f"  seed {s}: step {i}/{steps}, loss {v:.4f}"))
        runs.append(e)
        _progress_line(verbose, f"  seed {s}: mask fitted in {time.perf_counter() - t0:.1f} s")
    tops = [e.top(top) for e in runs]
    pairs = [(a, b) for a in range(seeds) for b in range(a + 1, seeds)]
    stability = [hg.overlap(tops[a], tops[b]) for a, b in pairs]
    mean_mask = np.mean([e.mask for e in runs], axis=0)
    avg = hg.Explanation(mean_mask, runs[0].valid, runs[0].idx, [], 0.0)
    weight, weight_mean = avg.link_weight(len(topo.links))
    conns = avg.connections()

    # The ad-hoc adjustment: reroute the path the model thinks slowest.
    worst = int(np.nanargmax(pred))
    src, dst = topo.pairs()[worst]
    util = np.array(link_loads(plan["paths"], plan["rate_mbps"], len(topo.links))) / np.array(plan["capacity_mbps"])
    adjust = {"path": worst, "pair": [src, dst], "old_route": _nodes(topo, plan["paths"][worst])}
    sim_before = simulate(plan, duration_s)
    _progress_line(verbose, f"  simulated the original routing ({duration_s:g} s)")
    adjust["before"] = {"predicted": _stats(pred, worst), "simulated": _stats(sim_before, worst)}
    for name, w in (("mask", weight), ("load", util)):
        # Dijkstra wants positive weights; an unused link costs as little as the least used one
        # (or 1 when no link has a positive weight).
        positive = w[np.isfinite(w) & (w > 0)]
        w = np.where(np.isfinite(w) & (w > 0), w, float(positive.min()) if positive.size else 1.0)
        new_path = dijkstra_path(topo, src, dst, list(w))
        new_plan = dict(plan, paths=[list(p) for p in plan["paths"]])
        new_plan["paths"][worst] = new_path
        entry: dict[str, Any] = {"new_route": _nodes(topo, new_path), "changed": new_path != plan["paths"][worst]}
        if entry["changed"]:
            p2 = model.predict(_batch(model, new_plan))[0]
            s2 = simulate(new_plan, duration_s)
            _progress_line(verbose, f"  simulated the routing rerouted by {name} weights")
            entry["predicted"] = _stats(p2, worst)
            entry["simulated"] = _stats(s2, worst)
        adjust[name] = entry

    summary = {
        "model": model_path, "topology": topo.name, "k": k, "routing_seed": routing_seed,
        "traffic_seed": traffic_seed, "load": plan["max_load"], "steps": steps, "seeds": seeds,
        "connections": int(batch.valid.sum()),
        "mask": {"mean": float(mean_mask[batch.valid[0]].mean()),
                 "share_above_0.5": float((mean_mask[batch.valid[0]] > 0.5).mean())},
        "loss": {f"seed{s + 1}": {"first": e.losses[0][1], "last": e.losses[-1][1],
                                  "last_fidelity": e.losses[-1][2]} for s, e in enumerate(runs)},
        "seconds_per_seed": [round(e.seconds, 1) for e in runs],
        "convergence": max(e.convergence() for e in runs),
        "decision_flips": max(e.decision_flips() for e in runs),
        "top": [{"link": _link(topo, li), "path": _nodes(topo, plan["paths"][p]), "mask": m, "hop": h}
                for m, p, h, li in conns[:top]],
        "top_overlap": {"pairs": [f"{a + 1}-{b + 1}" for a, b in pairs], "overlap": stability,
                        "mean": float(np.mean(stability)) if stability else 1.0},
        "link_importance": [{"link": _link(topo, i), "weight": float(weight[i]),
                             "weight_mean": None if np.isnan(weight_mean[i]) else float(weight_mean[i]),
                             "utilisation": float(util[i])} for i in range(len(topo.links))],
        "adjustment": adjust,
    }

    def fill(d: Path) -> None:
        (d / "explain.json").write_text(json.dumps(summary, indent=2) + "\n")
        with open(d / "connections.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["rank", "mask", "link", "path_src", "path_dst", "hop"] + [f"mask_seed{s + 1}" for s in range(seeds)])
            for r, (m, p, h, li) in enumerate(conns, 1):
                a, b = topo.pairs()[p]
                w.writerow([r, f"{m:.6f}", _link(topo, li), a, b, h] + [f"{e.mask[p, h]:.6f}" for e in runs])
        with open(d / "mask_loss.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["seed", "step", "loss", "fidelity", "size", "entropy"])
            for s, e in enumerate(runs, 1):
                w.writerows([s, *row] for row in e.losses)
        _loss_plot(runs, d / "mask_loss.png")
        _topology_plot(topo, weight, plan, worst, adjust, d / "topology.png")

    write_atomically(out, fill, inputs=[model_path], kind="Metis hypergraph interpretation")
    summary["out"] = str(out)
    return summary


def _nodes(topo: Topology, path: list[int]) -> list[int]:
    return [topo.links[path[0]][0]] + [topo.links[i][1] for i in path]


def _link(topo: Topology, i: int) -> str:
    u, v = topo.links[i]
    return f"{u}->{v}"


def _stats(delays: np.ndarray, path: int) -> dict[str, float]:
    return {"path_ms": float(delays[path]), "mean_ms": float(np.nanmean(delays)), "max_ms": float(np.nanmax(delays))}


def _loss_plot(runs, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for s, e in enumerate(runs, 1):
        steps = [r[0] for r in e.losses]
        ax.plot(steps, [r[1] for r in e.losses], label=f"seed {s}: total")
        ax.plot(steps, [r[2] for r in e.losses], ls=":", label=f"seed {s}: fidelity (MSE)")
    ax.set_xlabel("step")
    ax.set_ylabel("mask loss")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _topology_plot(topo: Topology, weight: np.ndarray, plan: dict, worst: int, adjust: dict, path: Path) -> None:
    """The graph with each undirected link coloured by its two directions' mask importance; the
    rerouted path's old route dashed, the mask-derived new route in green."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx

    g = topo.graph()
    pos = nx.kamada_kawai_layout(g)
    w_edge = [weight[topo.index[(u, v)]] + weight[topo.index[(v, u)]] for u, v in topo.edges]
    fig, ax = plt.subplots(figsize=(7, 5))
    cmap = plt.get_cmap("viridis")
    top = max(w_edge) or 1.0
    nx.draw_networkx_edges(g, pos, edgelist=topo.edges, width=[1 + 6 * w / top for w in w_edge],
                           edge_color=[cmap(w / top) for w in w_edge], ax=ax)
    old = adjust["old_route"]
    nx.draw_networkx_edges(g, pos, edgelist=list(zip(old, old[1:])), style="dashed", edge_color="red", width=1.5, ax=ax)
    if adjust["mask"]["changed"]:
        new = adjust["mask"]["new_route"]
        nx.draw_networkx_edges(g, pos, edgelist=list(zip(new, new[1:])), edge_color="lime", width=1.5, ax=ax)
    nx.draw_networkx_nodes(g, pos, node_color="white", edgecolors="black", node_size=260, ax=ax)
    nx.draw_networkx_labels(g, pos, font_size=8, ax=ax)
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, top))
    fig.colorbar(sm, ax=ax, label="link importance Σ mask (both directions)")
    a, b = adjust["pair"]
    ax.set_title(f"{topo.name}: hypergraph mask; path {a}->{b} old (red, dashed), rerouted (green)", fontsize=9)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
