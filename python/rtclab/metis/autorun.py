"""`rtclab metis auto`: train AuTO's two agents on rtclab's datacenter fabric, convert both by
Metis, run DNNs, trees and the info-agnostic baselines on the same held-out flows, and compare
FCT, conversion time and decision latency (issue 43 item 3; `rtclab.metis.auto`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from rtclab.metis import auto as au
from rtclab.metis.dcenv import DEFAULT_THRESHOLDS, WORKLOADS

#: The policies compared: (sRLA, lRLA) for each name; filled in by `study`.
POLICY_NAMES = ("dnn", "tree", "dnn-srla", "tree-srla", "dnn-lrla", "tree-lrla", "pias", "pias+las", "fair")
FAIR_BYTES = 1e12


@dataclass
class Study:
    summary: dict
    actor: dict
    lrla: dict
    conversion: au.Conversion


def check(opts) -> None:
    if opts.workload not in WORKLOADS:
        raise ValueError(f"--workload {opts.workload!r}: expected one of {', '.join(WORKLOADS)}")
    if not 0.0 < opts.load < 1.0:
        raise ValueError(f"--load {opts.load}: expected a value between 0 and 1 (exclusive)")
    for name in ("srla_steps", "lrla_episodes", "iterations", "episodes", "test_seeds"):
        if getattr(opts, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(opts, name)}: expected at least 1")
    if opts.max_leaves < 2:
        raise ValueError(f"--max-leaves {opts.max_leaves}: expected at least 2")
    if not 0 < opts.test_seconds < 3600:
        raise ValueError(f"--test-seconds {opts.test_seconds}: expected a duration from 0 to 3600 s (exclusive)")
    if not 0 <= opts.seed < 2**31:
        raise ValueError(f"--seed {opts.seed}: expected 0 to 2^31 - 1")


def study(opts, say: Callable[[str], None] = lambda _m: None) -> Study:
    check(opts)
    wl, seed = opts.workload, opts.seed
    say(f"sRLA (DDPG): {opts.srla_steps} decisions")
    actor, log_s = au.train_srla(opts.srla_steps, seed, wl, load=opts.load, progress=lambda i, n, r: say(
        f"  sRLA episode {i}/{n}: mean reward {r:.4f}") if i % max(1, n // 10) == 0 or i == n else None)
    say(f"lRLA (REINFORCE): {opts.lrla_episodes} episodes under the default thresholds")
    net, log_l = au.train_lrla(opts.lrla_episodes, None, seed, wl, load=opts.load, progress=lambda i, n, r: say(
        f"  lRLA episode {i}/{n}: mean reward {r:.4f}") if i % max(1, n // 10) == 0 or i == n else None)
    say(f"Metis: {opts.iterations} DAgger iterations, ≤ {opts.max_leaves} leaves")
    conv = au.convert(actor, net, iterations=opts.iterations, episodes=opts.episodes, max_leaves=opts.max_leaves,
                      seed=seed, workload=wl, load=opts.load, progress=lambda i, n, e: say(
                          f"  iteration {i}/{n}: lRLA tree {e['lrla_leaves']} leaves, hold-out accuracy "
                          f"{e['lrla_holdout_accuracy']:.3f}; sRLA trees {e['srla_leaves']} leaves"))
    t_srla, t_lrla = au.tree_policies(conv)
    pias = au.fixed_srla(au.action_of_thresholds(DEFAULT_THRESHOLDS))
    # "fair": one queue for every flow (thresholds past any flow size): TCP's fair sharing.
    # Each agent alone in the setting it was trained in (the other agent's default), DNN and tree;
    # then the joint system.
    policies = {"dnn": (au.srla_policy(actor), au.lrla_policy(net), None), "tree": (t_srla, t_lrla, None),
                "dnn-srla": (au.srla_policy(actor), None, None), "tree-srla": (t_srla, None, None),
                "dnn-lrla": (pias, au.lrla_policy(net), None), "tree-lrla": (pias, t_lrla, None),
                "pias": (pias, None, None), "pias+las": (pias, au.las_policy, None),
                "fair": (None, None, [FAIR_BYTES] * 4)}
    test_seeds = [1_000_000 + 1000 * seed + i for i in range(opts.test_seeds)]
    fct = {}
    for name, (s, l, thr) in policies.items():
        say(f"evaluating {name} on {opts.test_seeds} × {opts.test_seconds:g} s")
        fct[name] = au.evaluate(s, l, test_seeds, opts.test_seconds, wl, opts.load, thr).as_dict()
    # Decision latency on states the trees visit.
    xs = np.asarray(au.run(t_srla, None, seed=2_000_000 + seed, workload=wl, load=opts.load, record=True).srla_states)
    ep = au.run(None, t_lrla, seed=2_000_000 + seed, workload=wl, load=opts.load, record=True)
    xl = np.concatenate([x for x in ep.lrla_states if len(x)] or [np.zeros((0, len(au.LRLA_FEATURES)))])[:500]
    lat = {}
    if len(xl):
        lat["lrla_dnn_ns"] = au.latency_ns(lambda r: au.lrla_forward(net, r[None, :]).argmax(), xl)
        lat["lrla_tree_ns"] = au.latency_ns(lambda r: conv.lrla_tree.predict_one(r), xl)
    lat["srla_dnn_ns"] = au.latency_ns(lambda r: au.srla_forward(actor, r), xs)
    lat["srla_tree_ns"] = au.latency_ns(t_srla, xs)
    summary = {
        "workload": wl, "load": opts.load, "capacity_gbps": au.CAPACITY_BPS / 1e9, "seed": seed,
        "periods_s": {"srla": au.PERIOD_S, "lrla": au.PERIOD_L},
        "training": {"srla_steps": opts.srla_steps, "srla_seconds": log_s.seconds,
                     "srla_reward": [r for _, r in log_s.episodes],
                     "lrla_episodes": opts.lrla_episodes, "lrla_seconds": log_l.seconds,
                     "lrla_reward": [r for _, r in log_l.episodes]},
        "conversion": {"seconds": conv.seconds, "iterations": conv.iterations, "lrla_leaves": conv.lrla_tree.leaf_count,
                       "srla_leaves": [t_.leaf_count for t_ in conv.srla_trees],
                       "lrla_holdout_accuracy": conv.lrla_accuracy, "srla_holdout_rmse": conv.srla_rmse,
                       "samples": {"lrla": conv.samples_l, "srla": conv.samples_s}, "log": conv.log},
        "test": {"seeds": len(test_seeds), "seconds_each": opts.test_seconds},
        "fct": fct,
        "tree_vs_dnn": {k: ratios(fct[f"tree{k}"], fct[f"dnn{k}"]) for k in ("", "-srla", "-lrla")},
        "latency_ns": lat,
        "latency_ratio": {"lrla": lat["lrla_dnn_ns"] / lat["lrla_tree_ns"] if "lrla_tree_ns" in lat else None,
                          "srla": lat["srla_dnn_ns"] / lat["srla_tree_ns"]},
    }
    return Study(summary, actor, net, conv)


def ratios(t: dict, d: dict) -> dict:
    """Tree / DNN FCT figures of one pair of policies."""
    return {"mean": t["mean_ms"] / d["mean_ms"], "p99": t["p99_ms"] / d["p99_ms"],
            "short_p99": t["short_p99_ms"] / d["short_p99_ms"], "long_mean": t["long_mean_ms"] / d["long_mean_ms"]}


def run_auto(args, write) -> dict:
    say = (lambda m: None) if args.quiet else (lambda m: print(m, flush=True))
    st = study(args, say)
    s = st.summary

    def fill(tmp: Path) -> None:
        (tmp / "auto.json").write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")
        np.savez(tmp / "srla-actor.npz", **st.actor)
        np.savez(tmp / "lrla.npz", **st.lrla)
        st.conversion.lrla_tree.write(tmp / "lrla-tree.json")
        for k, t in enumerate(st.conversion.srla_trees, start=1):
            t.write(tmp / f"srla-tree-{k}.json")
        plot_fct(s, tmp / "fct.png")

    s["out"] = str(write(fill))
    return s


def plot_fct(s: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(s["fct"])
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    for ax, (key, label) in zip(axes, (("mean_ms", "mean FCT (ms)"), ("p99_ms", "p99 FCT (ms)"),
                                       ("short_p99_ms", "p99 FCT, flows < 100 KB (ms)"))):
        vals = [s["fct"][n][key] for n in names]
        ax.bar(names, vals, color=[{"dnn": "tab:blue", "tree": "tab:orange"}.get(n.split("-")[0], "tab:gray") for n in names])
        ax.set_title(label, fontsize=9)
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.suptitle(f"AuTO on rtclab's fabric ({s['workload']}, load {s['load']}): DNN agents vs Metis trees vs "
                 f"baselines", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
